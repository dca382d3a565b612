/**
 * What the HTTP layer reads of a cluster node (`GET /controllers`, `GET /cluster`, `/health-checks`): the log's state
 * and revisions and the membership's liveness view, all from memory; only `GET /cluster` asks etcd (its members'
 * status and the revisions registered by nodes that are down). The view is made by cluster/cluster-view.ts (this
 * layer does not reach into cluster/): when a node counts as online is decided there.
 */

/** A node as its liveness key shows it (cluster-membership.ts NodeLiveness). */
export interface LiveNode {
  name: string
  revision: number
  lagRevisions: number
  apiUrl: string
}

/** One etcd member's status as its client reports it (etcd-client.ts EndpointStatus): plain data, shown as is. */
export interface EtcdMemberStatus {
  endpoint: string
  ok: boolean
  error?: string
}

export interface ClusterView {
  readonly nodeName: string
  readonly clusterId: string
  /** The log's state on this node: starting, live, stale, stopped. */
  state(): string
  /** Why the node is stale ('' otherwise). */
  staleDetail(): string
  appliedRevision(): number
  lagRevisions(): number
  /** Whether etcd answered this node's last heartbeat, and what went wrong when it did not. */
  etcd(): { reachable: boolean; error: string }
  /** The nodes whose liveness keys this node last read (empty before it joined). */
  live(): ReadonlyMap<string, LiveNode>
  isOnline(name: string): boolean
  /** etcd: each member's status (never throws; a member that does not answer says why). */
  endpointStatus(): Promise<EtcdMemberStatus[]>
  /** etcd: the applied revision each node last registered (empty when etcd does not answer). */
  registeredRevisions(): Promise<ReadonlyMap<string, number>>
  /**
   * The digest of this node's replicated state at its applied revision: computed in slices that leave the event loop
   * free between them, and kept while the revision does not move (cluster/cluster-digest.ts).
   */
  digest(): Promise<{ revision: number; digest: string; records: number }>
}

/** One node as `GET /cluster` shows it. */
export interface ClusterNodeStatus {
  name: string
  revision: number | null
  lagRevisions: number | null
  isOnline: boolean
  apiUrl: string | null
}

const CLIENT_API_SUFFIX = '/edge/client/v1'

/**
 * `GET /cluster` `data`: this node's log, etcd as this node sees it (its last heartbeat, and each member's status
 * asked now), every node (joined records and live keys), and the digest of this node's state. Reads only.
 */
export async function clusterStatus(view: ClusterView, nodes: Iterable<{ id: string; apiAddresses: Record<string, { url: string }[]> }>) {
  const [endpoints, registered, digest] = await Promise.all([view.endpointStatus(), view.registeredRevisions(), view.digest()])
  const live = view.live()
  const records = new Map<string, { apiAddresses: Record<string, { url: string }[]> }>()
  for (const n of nodes) records.set(n.id, n)
  const head = view.appliedRevision() + view.lagRevisions()
  const names = [...new Set([...records.keys(), ...live.keys(), view.nodeName])].sort()
  const rows: ClusterNodeStatus[] = names.map((name) => {
    const isOnline = view.isOnline(name)
    const liveness = live.get(name)
    const recorded = records.get(name)?.apiAddresses['edge-client']?.[0]?.url
    const apiUrl = liveness?.apiUrl ?? (recorded?.endsWith(CLIENT_API_SUFFIX) ? recorded.slice(0, -CLIENT_API_SUFFIX.length) : (recorded ?? null))
    if (name === view.nodeName) return { name, revision: view.appliedRevision(), lagRevisions: view.lagRevisions(), isOnline, apiUrl }
    if (isOnline && liveness) return { name, revision: liveness.revision, lagRevisions: liveness.lagRevisions, isOnline, apiUrl }
    const revision = registered.get(name) ?? null
    return { name, revision, lagRevisions: revision === null ? null : Math.max(0, head - revision), isOnline, apiUrl }
  })
  const etcd = view.etcd()
  const staleDetail = view.staleDetail()
  return {
    nodeName: view.nodeName,
    clusterId: view.clusterId,
    state: view.state(),
    ...(staleDetail ? { staleDetail } : {}),
    appliedRevision: view.appliedRevision(),
    lagRevisions: view.lagRevisions(),
    etcd: { reachable: etcd.reachable, error: etcd.error, endpoints },
    nodes: rows,
    digest,
  }
}

/**
 * The `cluster` health check: healthy while the log is live (this node applies it) and etcd answered the last
 * heartbeat; a stale node says why and what to do (restore a newer backup of a member).
 */
export function clusterVerdict(view: ClusterView): { healthy: boolean; details: string } {
  const etcd = view.etcd()
  const facts =
    `node ${view.nodeName}, applied revision ${view.appliedRevision()}, ${view.lagRevisions()} revisions behind, ` +
    (etcd.reachable ? 'etcd reachable' : `etcd unreachable: ${etcd.error}`)
  const state = view.state()
  if (state === 'stale') return { healthy: false, details: `node ${view.nodeName} is stale: ${view.staleDetail()}` }
  if (state !== 'live') return { healthy: false, details: `the log is ${state}; ${facts}` }
  return { healthy: etcd.reachable, details: facts }
}
