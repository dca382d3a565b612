/**
 * Schema version and numbered migrations. The version lives in the `meta` sub-db under `schemaVersion`.
 * A store newer than this binary refuses to open rather than being misread.
 */
import type { Database, RootDatabase } from 'lmdb'
import type { SubDbName } from './store-catalogue.ts'

/** The schema version this binary writes. */
export const SCHEMA_VERSION = 1

type Migration = (db: (name: SubDbName) => Database<unknown, string>) => void

/** MIGRATIONS[n] upgrades a store from version n to n + 1, inside one transaction. */
const MIGRATIONS: Record<number, Migration> = {
  // 0 -> 1: a new store; nothing to convert.
  0: () => {},
}

export async function migrate(db: (name: SubDbName) => Database<unknown, string>, env: RootDatabase): Promise<void> {
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
      step(db)
      meta.put('schemaVersion', next)
    })
    version = next
  }
}
