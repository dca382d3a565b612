/** Read-only facts about a store: its schema version and the number of records per sub-database. */
import { SUB_DBS, type SubDbName } from './store-catalogue.ts'
import { openStore, type Store } from './store-env.ts'
import { CLUSTER_APPLIED_META_KEY, CLUSTER_ID_META_KEY } from '../lib/cluster-names.ts'

/** A cluster member's store: the cluster it belongs to and the log revision its state is at. */
export interface ClusterFacts {
  id: string
  appliedRevision: number
}

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

/** The cluster facts in `meta`, undefined for a store that never was a cluster member. */
export function clusterFactsOf(store: Store): ClusterFacts | undefined {
  const meta = store.db('meta')
  const id = meta.get(CLUSTER_ID_META_KEY) as string | undefined
  if (typeof id !== 'string') return undefined
  const applied = meta.get(CLUSTER_APPLIED_META_KEY) as { revision?: unknown } | undefined
  return { id, appliedRevision: typeof applied?.revision === 'number' ? applied.revision : 0 }
}

/** Schema version, counts and cluster facts of the store in `dataDir`, opened read-only for the moment of reading. */
export async function readStoreFacts(dataDir: string): Promise<{ schemaVersion: number; counts: Record<string, number>; cluster?: ClusterFacts }> {
  const store = await openStore(dataDir, { readOnly: true })
  try {
    const cluster = clusterFactsOf(store)
    return { schemaVersion: schemaVersionOf(store), counts: countRecords(store), ...(cluster ? { cluster } : {}) }
  } finally {
    await store.close()
  }
}
