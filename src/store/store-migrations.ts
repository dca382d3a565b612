/**
 * Schema version and numbered migrations. The version lives in the `meta` sub-db under `schemaVersion`.
 * A store newer than this binary refuses to open rather than being misread.
 */
import type { Database, RootDatabase } from 'lmdb'
import type { SubDbName } from './store-catalogue.ts'
import { defaultAuthPolicy } from '../domain/identity/identity-auth-policy.ts'
import { DEFAULT_AUTH_POLICY } from '../domain/identity/identity-types.ts'

/** The schema version this binary writes. */
export const SCHEMA_VERSION = 3

/** A step; `now` (epoch ms) stamps the records it creates. */
type Migration = (db: (name: SubDbName) => Database<unknown, string>, now: number) => void

/** MIGRATIONS[n] upgrades a store from version n to n + 1, inside one transaction. */
const MIGRATIONS: Record<number, Migration> = {
  // 0 -> 1: a new store; nothing to convert.
  0: () => {},
  // 1 -> 2: authentication policies are stored; the `default` one every identity named until then is created.
  1: (db, now) => {
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
}

export async function migrate(db: (name: SubDbName) => Database<unknown, string>, env: RootDatabase, now: number): Promise<void> {
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
      step(db, now)
      meta.put('schemaVersion', next)
    })
    version = next
  }
}
