/**
 * Schema version and numbered migrations. The version lives in the `meta` sub-db under `schemaVersion`.
 * A store newer than this binary refuses to open rather than being misread.
 */
import type { Database, RootDatabase } from 'lmdb'
import type { SubDbName } from './store-catalogue.ts'
import { defaultAuthPolicy } from '../domain/identity/identity-auth-policy.ts'
import { DEFAULT_AUTH_POLICY } from '../domain/identity/identity-types.ts'

/** The schema version this binary writes. */
export const SCHEMA_VERSION = 4

/** The first schema version whose MFA secrets are sealed (migration 3 → 4). */
export const SEALED_SCHEMA_VERSION = 4

/** The `meta` key of the id of the key the store's values are sealed with (store-seal.ts; migration 3 → 4 writes it). */
export const SEAL_KEY_ID = 'sealKeyId'

/**
 * The `meta` key set (true) by a migration that freed pages holding secrets in plain text: the store replaces its file
 * with a compacted copy, then removes the key (store-env.ts), so a crash in between compacts at the next start.
 */
export const COMPACT_PENDING = 'compactPending'

/** What a migration knows besides the store: `now` (epoch ms) stamps the records it creates; the sealing key's id. */
export interface MigrationContext {
  now: number
  sealKeyId: string
}

/** A step. */
type Migration = (db: (name: SubDbName) => Database<unknown, string>, ctx: MigrationContext) => void

/** MIGRATIONS[n] upgrades a store from version n to n + 1, inside one transaction. */
const MIGRATIONS: Record<number, Migration> = {
  // 0 -> 1: a new store; nothing to convert.
  0: () => {},
  // 1 -> 2: authentication policies are stored; the `default` one every identity named until then is created.
  1: (db, { now }) => {
    if (db('auth-policies').get(DEFAULT_AUTH_POLICY.id) === undefined) {
      db('auth-policies').put(DEFAULT_AUTH_POLICY.id, defaultAuthPolicy(now))
    }
  },
  // 2 -> 3: identities are stored compact, the members at their default left out (store-codecs.ts): each is read (as
  // written before, whole) and written again. An older edgeplane must not read them, hence the version.
  2: (db) => {
    const identities = db('identities')
    for (const { key, value } of [...identities.getRange()]) identities.put(key, value)
  },
  // 3 -> 4: MFA records are stored sealed (store-codecs.ts, domain/identity/identity-mfa-stored.ts): each is read (a
  // plain secret, plain recovery codes while Started, argon2id hashes once Verified) and written again, its secret and
  // its codes sealed with the data directory's key, whose id `meta` records from now on. Legacy hashes stay as they
  // are: their codes still work until the identity regenerates them (their text is gone).
  // The key's id is put first: should a put fail half-way (lmdb-js keeps the puts a throwing transaction made), the
  // records sealed so far name their key, and the next start reads both forms and seals the rest.
  3: (db, { sealKeyId }) => {
    const mfas = db('mfas')
    const records = [...mfas.getRange()]
    db('meta').put(SEAL_KEY_ID, sealKeyId)
    if (records.length > 0) db('meta').put(COMPACT_PENDING, true)
    for (const { key, value } of records) mfas.put(key, value)
  },
}

/** Runs the migrations the store needs, each in one transaction. */
export async function migrate(db: (name: SubDbName) => Database<unknown, string>, env: RootDatabase, ctx: MigrationContext): Promise<void> {
  const meta = db('meta')
  let version = (meta.get('schemaVersion') as number | undefined) ?? 0
  if (version > SCHEMA_VERSION) {
    throw new Error(`the data directory has schema version ${version}; this edgeplane understands up to ${SCHEMA_VERSION}`)
  }
  while (version < SCHEMA_VERSION) {
    const step = MIGRATIONS[version]
    if (!step) throw new Error(`no migration from schema version ${version}`)
    const next = version + 1
    await env.transaction(() => {
      step(db, ctx)
      meta.put('schemaVersion', next)
    })
    version = next
  }
}
