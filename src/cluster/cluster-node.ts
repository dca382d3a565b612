/**
 * A cluster node's start: the cluster's identity, the log, the membership keys, and the node's own record.
 *
 * - The first node started on an empty etcd prefix initialises the cluster (`<prefix>/init`, created only if absent):
 *   its data directory's state is the state at that revision, which it records as applied.
 * - Any other node starts from a backup of a member (`edgeplane restore`): its store names the cluster (meta
 *   `clusterId`) and the revision the backup was taken at, and it catches up from there before it answers. A data
 *   directory of no member, or of another cluster, is refused with what to do instead.
 * - Then the node joins (`controller.join`, a command: its name, certificate and API addresses are replicated state).
 */
import { randomUUID } from 'node:crypto'
import { APPLIED_KEY, type ActorSystemDeps } from '../actors/runtime/actor-runtime.ts'
import type { ControllersActor } from '../actors/controllers/controllers-actor.ts'
import type { Clock } from '../lib/clock.ts'
import type { Store } from '../store/store-env.ts'
import { ClusterLog, type LogTarget } from './cluster-log.ts'
import { ClusterMembership } from './cluster-membership.ts'
import { EtcdClient } from './etcd-client.ts'
import { stateDigester, type StateDigest } from './cluster-digest.ts'
import { DEFAULT_CLUSTER_PREFIX, NODE_NAME_PATTERN } from '../lib/cluster-names.ts'
import { fetchSnapshot, installSnapshot, peerSecretOf } from './cluster-snapshot.ts'
import { commandSealerOf } from './cluster-seal.ts'
import { nodesPrefixOf, type NodeLiveness } from './cluster-membership.ts'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The `cluster:` settings (config file, `--cluster-endpoints`, `--node-name`). */
export interface ClusterSettings {
  /** etcd client URLs (http://host:port). */
  endpoints: string[]
  nodeName: string
  /** The key prefix in etcd (default `/edgeplane`): several clusters can share one etcd. */
  prefix?: string
  /** Tests shorten the membership ticks. */
  heartbeatEveryMs?: number
  janitorEveryMs?: number
}

export { DEFAULT_CLUSTER_PREFIX, NODE_NAME_PATTERN } from '../lib/cluster-names.ts'
/** meta key of the cluster's id, in every member's store. */
export const CLUSTER_ID_KEY = 'clusterId'

export interface ClusterNode {
  readonly settings: ClusterSettings & { prefix: string }
  readonly log: ClusterLog
  readonly membership: ClusterMembership
  readonly client: EtcdClient
  readonly clusterId: string
  /** Catches up from the stored revision (before the listener opens). */
  catchUp(): Promise<void>
  /** Writes this node's record (after the listener opens: its address is known then). */
  join(node: { certPem: string; fingerprint: string; baseUrl: string; ctrlAddress: string }): Promise<void>
  /** The digest of the state at the applied revision (cluster-digest.ts: in slices, cached per revision). */
  digest(): Promise<StateDigest>
  stop(): Promise<void>
}

/**
 * Before anything loads the store: a member whose applied revision is below etcd's compaction point cannot catch up by
 * replay, so it replaces its store with a snapshot of a live member (cluster-snapshot.ts) and answers the reopened
 * store; a data directory that never joined (a restored backup) is refused: its backup is too old. Otherwise the
 * store as it was.
 */
export async function prepareClusterStore(o: {
  settings: ClusterSettings
  dataDir: string
  store: Store
  reopen: () => Promise<Store>
  note: (line: string) => void
  now: () => number
}): Promise<Store> {
  const prefix = (o.settings.prefix ?? DEFAULT_CLUSTER_PREFIX).replace(/\/+$/, '')
  const meta = o.store.db('meta')
  const clusterId = meta.get(CLUSTER_ID_KEY) as string | undefined
  const applied = meta.get(APPLIED_KEY) as { revision: number } | undefined
  if (clusterId === undefined || applied === undefined) return o.store
  const client = new EtcdClient({ endpoints: o.settings.endpoints })
  try {
    const compacted = await client.compactRevision().catch((e) => {
      throw new Error(`etcd at ${o.settings.endpoints.join(', ')} cannot be reached: ${e instanceof Error ? e.message : String(e)}`)
    })
    // a watch from the compaction point itself still replays; one from below it cannot
    if (applied.revision + 1 >= compacted) return o.store
    const joined = o.store.has('controllers') && o.store.db('controllers').get(o.settings.nodeName) !== undefined
    if (!joined) {
      throw new Error(
        `this data directory was backed up at revision ${applied.revision}, but etcd has compacted the cluster's log up to revision ${compacted}: ` +
          'the log can no longer bring it up to date; take a newer backup of a member (edgeplane backup), restore it (edgeplane restore --from FILE --data DIR) and start again',
      )
    }
    o.note(`cluster: this node applied the log up to revision ${applied.revision}, but etcd compacted it up to ${compacted}: fetching a state snapshot from a live member`)
    const { kvs } = await client.range(nodesPrefixOf(prefix), { prefix: true })
    const peers: Array<{ name: string; apiUrl: string }> = []
    for (const kv of kvs) {
      try {
        const n = JSON.parse(kv.value) as NodeLiveness
        if (n.name !== o.settings.nodeName && typeof n.apiUrl === 'string' && n.state === 'live') peers.push({ name: n.name, apiUrl: n.apiUrl })
      } catch {
        // not a node's key
      }
    }
    const fetched = await fetchSnapshot({
      peers,
      secret: peerSecretOf(o.dataDir),
      nodeName: o.settings.nodeName,
      caPem: readFileSync(join(o.dataDir, 'pki', 'root-ca.cert.pem'), 'utf8'),
      storePath: o.store.path,
      clusterId,
      atLeast: compacted - 1,
      now: o.now,
      note: o.note,
    }).catch((e) => {
      // the operator must learn why a snapshot was needed and what else brings the node back
      throw new Error(
        `this node applied the log up to revision ${applied.revision}, but etcd compacted it up to ${compacted}, and ${e instanceof Error ? e.message : String(e)}: ` +
          'start it again once another member is live, or take a newer backup of a member (edgeplane backup), restore it (edgeplane restore --from FILE --data DIR) and start again',
      )
    })
    await o.store.close()
    installSnapshot(fetched.path, o.store.path)
    o.note(`cluster: the store was replaced by the snapshot at revision ${fetched.revision}; catching up from there`)
    return await o.reopen()
  } finally {
    client.close()
  }
}

interface InitRecord {
  clusterId: string
  by: string
  revision: number
}

/**
 * Opens the cluster for this node: checks or initialises the cluster's identity and makes the log, which is attached
 * to the actors (`deps.log`) before anything else can write.
 */
export async function openClusterNode(o: {
  settings: ClusterSettings
  /** The data directory: its sealing key seals the commands. */
  dataDir: string
  store: Store
  deps: ActorSystemDeps
  clock: Clock
  targets: ReadonlyMap<string, LogTarget>
  note: (line: string) => void
  onRemoteApplied?: (lagMs: number) => void
}): Promise<ClusterNode> {
  const settings = { ...o.settings, prefix: (o.settings.prefix ?? DEFAULT_CLUSTER_PREFIX).replace(/\/+$/, '') }
  if (!NODE_NAME_PATTERN.test(settings.nodeName)) throw new Error(`the node name '${settings.nodeName}' is not valid: letters, digits, '.', '_' and '-', at most 63`)
  if (settings.endpoints.length === 0) throw new Error('a cluster node needs at least one etcd endpoint (--cluster-endpoints)')
  const client = new EtcdClient({ endpoints: settings.endpoints })
  const meta = o.store.db('meta')
  let clusterId = meta.get(CLUSTER_ID_KEY) as string | undefined
  let applied = (meta.get(APPLIED_KEY) as { revision: number; logTimes: Record<string, number> } | undefined) ?? { revision: 0, logTimes: {} }
  const initKey = `${settings.prefix}/init`
  const describeEtcd = (e: unknown) => `etcd at ${settings.endpoints.join(', ')} cannot be reached: ${e instanceof Error ? e.message : String(e)}`
  let init = await client.get(initKey).catch((e) => {
    throw new Error(describeEtcd(e))
  })
  if (!init && clusterId === undefined) {
    // the first node: its state is the cluster's at the revision of the init key
    const id = randomUUID()
    const record: InitRecord = { clusterId: id, by: settings.nodeName, revision: 0 }
    const r = await client.putIfAbsent(initKey, JSON.stringify(record))
    if (r.created) {
      applied = { revision: r.revision, logTimes: {} }
      await o.store.commit([
        { db: 'meta', key: CLUSTER_ID_KEY, value: id },
        { db: 'meta', key: APPLIED_KEY, value: applied },
      ])
      clusterId = id
      o.note(`cluster: initialised cluster ${id} at etcd revision ${r.revision} from this node's data directory (prefix ${settings.prefix})`)
    }
    init = await client.get(initKey)
  }
  if (!init) {
    throw new Error(
      `this data directory belongs to cluster ${clusterId}, but etcd prefix ${settings.prefix} is empty (a new or wiped etcd): ` +
        'point --cluster-endpoints and the prefix at that cluster\'s etcd, or start from a data directory that is no member yet',
    )
  }
  const initRecord = JSON.parse(init.value) as InitRecord
  if (clusterId === undefined) {
    throw new Error(
      `etcd prefix ${settings.prefix} holds cluster ${initRecord.clusterId}, and this data directory is not one of its members: ` +
        'take a backup of a member (edgeplane backup --data DIR --out FILE), restore it here (edgeplane restore --from FILE --data DIR), then start again',
    )
  }
  if (clusterId !== initRecord.clusterId) {
    throw new Error(`this data directory belongs to cluster ${clusterId}, but etcd prefix ${settings.prefix} holds cluster ${initRecord.clusterId}`)
  }
  const log = new ClusterLog({
    client,
    prefix: settings.prefix,
    nodeName: settings.nodeName,
    clock: o.clock,
    sealer: commandSealerOf(o.dataDir),
    applied,
    targets: o.targets,
    log: o.note,
    onRemoteApplied: o.onRemoteApplied,
  })
  o.deps.log = log
  let membership: ClusterMembership | undefined
  const digester = stateDigester(o.store)
  const node: ClusterNode = {
    settings,
    log,
    client,
    clusterId,
    get membership() {
      if (!membership) throw new Error('the node has not joined yet')
      return membership
    },
    async catchUp() {
      // compaction must not pass this node's revision while it catches up
      await client.put(`${settings.prefix}/applied/${settings.nodeName}`, String(applied.revision))
      const from = applied.revision
      const t0 = performance.now()
      await log.start()
      const n = log.revision - from
      o.note(`cluster: node ${settings.nodeName} caught up from revision ${from} to ${log.revision} (${n} revisions in ${Math.round(performance.now() - t0)} ms)`)
    },
    async join(self) {
      membership = new ClusterMembership({
        client,
        prefix: settings.prefix,
        nodeName: settings.nodeName,
        apiUrl: self.baseUrl,
        log,
        storedRevision: () => (o.store.db('meta').get(APPLIED_KEY) as { revision?: number } | undefined)?.revision ?? 0,
        note: o.note,
        heartbeatEveryMs: settings.heartbeatEveryMs,
        janitorEveryMs: settings.janitorEveryMs,
      })
      const controllers = o.targets.get('controllers') as unknown as ControllersActor
      await controllers.ask({
        type: 'controller.join',
        controller: {
          id: settings.nodeName,
          name: settings.nodeName,
          certPem: self.certPem,
          fingerprint: self.fingerprint,
          apiAddresses: {
            'edge-client': [{ url: `${self.baseUrl}/edge/client/v1`, version: 'v1' }],
            'edge-management': [{ url: `${self.baseUrl}/edge/management/v1`, version: 'v1' }],
            'edge-oidc': [{ url: `${self.baseUrl}/oidc`, version: 'v1' }],
          },
          ctrlAddress: self.ctrlAddress,
          tags: {},
        },
        change: { author: settings.nodeName, source: 'system' },
      })
      membership.start()
    },
    digest: () => digester.digest(),
    async stop() {
      // before the store closes: a digest in progress lets its read transaction go
      await digester.stop()
      await membership?.stop()
      log.stop()
      client.close()
    },
  }
  return node
}
