/**
 * Operations on the running controller: database snapshots, the integrity check, and a cluster node's read view
 * (GET /cluster, the health check's cluster entry).
 */
import type { Clock } from '../lib/clock.ts'
import type { Store } from '../store/store-env.ts'
import { copyStore, readStoreCopy } from '../store/store-copy.ts'
import { createDatabaseSnapshots } from '../flows/integrity/database-snapshot.ts'
import { createIntegrityRunner } from '../flows/integrity/integrity-run.ts'
import { clusterReadView } from '../cluster/cluster-view.ts'
import type { ClusterView } from '../http/http-cluster.ts'
import type { Actors } from './boot-actors.ts'
import type { PolicyParts } from './boot-policy.ts'

export interface OpsParts {
  snapshots: ReturnType<typeof createDatabaseSnapshots>
  integrity: ReturnType<typeof createIntegrityRunner>
  clusterView?: ClusterView
}

export function bootOps(store: Store, actors: Actors, policy: PolicyParts, ctx: { clock: Clock; snapshotDir?: string }): OpsParts {
  const { identities, sessions, graph, ca, clusterNode } = actors
  const copyTo = (destPath: string) => copyStore(store, destPath)
  const snapshots = createDatabaseSnapshots({ dbPath: store.path, copyStore: copyTo, clock: ctx.clock, dir: ctx.snapshotDir })
  const integrity = createIntegrityRunner({
    dbPath: store.path, copyStore: copyTo, readCopy: readStoreCopy, identities, sessions, graph, ca, policyIndex: policy.policyResolver.index, snapshots, clock: ctx.clock,
  })
  return { snapshots, integrity, clusterView: clusterNode ? clusterReadView(clusterNode) : undefined }
}
