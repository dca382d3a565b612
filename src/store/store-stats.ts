/** Read-only facts about a store: its schema version and the number of records per sub-database. */
import { SUB_DBS, type SubDbName } from './store-catalogue.ts'
import { openStore, type Store } from './store-env.ts'

/** The schema version recorded in `meta` (0 for a store no migration ever ran on). */
export function schemaVersionOf(store: Store): number {
  return (store.db('meta').get('schemaVersion') as number | undefined) ?? 0
}

/** Records per sub-database, `meta` left out; a sub-db the store does not have yet counts 0. */
export function countRecords(store: Store): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const name of Object.keys(SUB_DBS) as SubDbName[]) {
    if (name === 'meta') continue
    counts[name] = store.has(name) ? store.db(name).getKeysCount() : 0
  }
  return counts
}

/** Schema version and counts of the store in `dataDir`, opened read-only for the moment of reading. */
export async function readStoreFacts(dataDir: string): Promise<{ schemaVersion: number; counts: Record<string, number> }> {
  const store = await openStore(dataDir, { readOnly: true })
  try {
    return { schemaVersion: schemaVersionOf(store), counts: countRecords(store) }
  } finally {
    await store.close()
  }
}
