/**
 * A cluster node as the HTTP layer reads it (http/http-cluster.ts `ClusterView`: `GET /controllers`, `GET /cluster`,
 * the `cluster` health check): the log's state and revisions and the liveness keys, from memory; only the two etcd
 * reads of `GET /cluster` go to the network.
 * - this node is online while its log is live (applying); another node while its liveness key (under a 5 s lease,
 *   rewritten every heartbeat while it applies) was present at this node's last read of them, and that read is no
 *   older than the lease: a node cut off from etcd does not vouch for peers it can no longer see.
 */
import type { ClusterNode } from './cluster-node.ts'
import type { ClusterLogState } from './cluster-log.ts'
import { appliedPrefixOf, type ClusterMembership, type NodeLiveness } from './cluster-membership.ts'
import type { EndpointStatus } from './etcd-client.ts'
import type { StateDigest } from './cluster-digest.ts'

/** How old the last read of the liveness keys may be for its peers to count as online (the keys' lease). */
export const LIVENESS_TTL_MS = 5_000

export interface ClusterReadView {
  readonly nodeName: string
  readonly clusterId: string
  state(): ClusterLogState
  staleDetail(): string
  appliedRevision(): number
  lagRevisions(): number
  etcd(): { reachable: boolean; error: string }
  live(): ReadonlyMap<string, NodeLiveness>
  isOnline(name: string): boolean
  endpointStatus(): Promise<EndpointStatus[]>
  registeredRevisions(): Promise<ReadonlyMap<string, number>>
  digest(): Promise<StateDigest>
}

const NO_PEERS: ReadonlyMap<string, NodeLiveness> = new Map()

export function clusterReadView(node: ClusterNode, now: () => number = Date.now): ClusterReadView {
  const membership = (): ClusterMembership | undefined => {
    try {
      return node.membership
    } catch {
      // not joined yet (the listener opens before the join)
      return undefined
    }
  }
  const view: ClusterReadView = {
    nodeName: node.settings.nodeName,
    clusterId: node.clusterId,
    state: () => node.log.state,
    staleDetail: () => node.log.staleDetail,
    appliedRevision: () => node.log.revision,
    lagRevisions: () => node.log.lagRevisions,
    etcd: () => {
      const m = membership()
      return m ? { reachable: m.etcd.reachable, error: m.etcd.error } : { reachable: true, error: '' }
    },
    live: () => membership()?.live() ?? NO_PEERS,
    isOnline(name) {
      if (name === view.nodeName) return node.log.state === 'live'
      const m = membership()
      if (!m || now() - m.etcd.peersReadAt > LIVENESS_TTL_MS) return false
      return m.live().has(name)
    },
    endpointStatus: () => node.client.status(),
    async registeredRevisions() {
      const out = new Map<string, number>()
      const prefix = appliedPrefixOf(node.settings.prefix)
      try {
        const { kvs } = await node.client.range(prefix, { prefix: true })
        for (const kv of kvs) {
          const n = Number(kv.value)
          if (Number.isFinite(n)) out.set(kv.key.slice(prefix.length), n)
        }
      } catch {
        // etcd does not answer: GET /cluster says so through `etcd`
      }
      return out
    },
    digest: () => node.digest(),
  }
  return view
}
