/**
 * `edgeplane cluster status|remove`: an operator's view of a cluster, and the retirement of a node, straight from etcd
 * (no node needs to run). What it reads is what the nodes write (cluster-node.ts, cluster-membership.ts):
 * - `<prefix>/init`: the cluster's id, the node that initialised it and when;
 * - `<prefix>/applied/<name>`: a registered node's applied revision (compaction never passes the lowest of them);
 * - `<prefix>/nodes/<name>`: a live node's heartbeat under a 5 s lease (its revision, state and API address);
 * - `<prefix>/log/`: the commands not yet deleted by the janitor (a node's lag is the number it has not applied).
 *
 * `remove NAME` appends `controller.remove` for the controllers actor to the log (every node applies it: the node
 * leaves `/controllers`), then deletes the node's applied and liveness keys (compaction no longer waits for it). The
 * command is sealed like every command (cluster-seal.ts), with the key of a member's data directory (`--data`), which
 * must belong to the cluster in etcd: a command sealed with another key would be skipped by every node.
 * Failure story: the command first, the keys second. If the command cannot be appended nothing changed; if a key
 * deletion fails after it, running `cluster remove NAME` again completes it (a second removal of an absent record is
 * refused by the actor at apply on every node, which changes nothing).
 */
import { parseArgs } from 'node:util'
import { randomUUID } from 'node:crypto'
import { ConfigError, resolveClusterAccess } from '../config/config.ts'
import { DEFAULT_CLUSTER_PREFIX, nodeNameProblem } from '../lib/cluster-names.ts'
import { EtcdClient, type EndpointStatus } from './etcd-client.ts'
import { encodeCommand, logPrefixOf } from './cluster-log.ts'
import { commandSealerOf, type CommandSealer } from './cluster-seal.ts'
import { storePathOf } from '../store/store-env.ts'
import { readStoreFacts } from '../store/store-stats.ts'
import { pathExists } from '../lib/path-exists.ts'
import { appliedPrefixOf, nodesPrefixOf, type NodeLiveness } from './cluster-membership.ts'
import { CLUSTER_HELP } from './cluster-help.ts'
import type { ControllersMsg } from '../actors/controllers/controllers-actor.ts'

export interface ClusterCommandIo {
  stdout: (s: string) => void
  stderr: (s: string) => void
  env: Record<string, string | undefined>
}

/** One etcd member as `status` shows it. */
export interface MemberStatus extends EndpointStatus {
  /** This member is the leader (its id is the leader it reports). */
  isLeader: boolean
}

/** One registered or live node. */
export interface NodeStatus {
  name: string
  /** It has an applied key: compaction waits for it, and `status` expects it to be live. */
  registered: boolean
  /** Its liveness key exists: it is up and applying the log. */
  live: boolean
  /** The highest revision it is known to have applied (its heartbeat when live, else its applied key). */
  appliedRevision?: number
  /** The revision its applied key holds: compaction stops there. */
  registeredRevision?: number
  /** Commands in the log after its applied revision. */
  lag?: number
  /** What its heartbeat says (live nodes only). */
  state?: string
  apiUrl?: string
}

export interface ClusterStatusReport {
  prefix: string
  endpoints: string[]
  etcd: {
    members: MemberStatus[]
    /** A linearizable read succeeded: a majority of etcd members agree on a leader. */
    quorum: boolean
    /** etcd's current revision (unknown without quorum). */
    revision?: number
    /** etcd's compaction point: a node or backup below it cannot catch up by replay (0 = never compacted). */
    compactRevision?: number
    /** Why the linearizable read failed. */
    error?: string
  }
  /** From `<prefix>/init`; undefined when no cluster was initialised under the prefix (or without quorum). */
  cluster?: { id: string; initialisedBy: string; revision: number }
  nodes: NodeStatus[]
  /** Commands in the log (keys the janitor has not deleted yet). */
  logKeys?: number
  /** Quorum, a cluster, and every registered node live. */
  healthy: boolean
  /** Why it is not healthy. */
  problems: string[]
  /** Worth knowing, not failing: a member down while a quorum remains, a live node that is not registered. */
  warnings: string[]
}

/** Reads everything `status` shows; never throws for an etcd that is down (that is a problem in the report). */
export async function readClusterStatus(client: EtcdClient, endpoints: string[], prefix: string): Promise<ClusterStatusReport> {
  const raw = await client.status()
  const members: MemberStatus[] = raw.map((m) => ({ ...m, isLeader: m.ok && m.leader !== undefined && m.leader === m.memberId }))
  // every member in its place from the start, so that --json lists them in this order
  const report: ClusterStatusReport = {
    prefix,
    endpoints,
    cluster: undefined,
    etcd: { members, quorum: false, revision: undefined, compactRevision: undefined, error: undefined },
    nodes: [],
    logKeys: undefined,
    healthy: false,
    problems: [],
    warnings: [],
  }
  for (const m of members) {
    if (!m.ok) report.warnings.push(`etcd member ${m.endpoint} does not answer: ${m.error ?? 'no answer'}`)
    else if (m.leader === undefined) report.warnings.push(`etcd member ${m.endpoint} knows no leader`)
    for (const alarm of m.alarms ?? []) report.problems.push(`etcd member ${m.endpoint} raises the alarm ${alarm} (writes are refused until it is cleared)`)
  }
  let init
  try {
    // a linearizable read: it succeeds only through a leader that a majority of members follows
    init = await client.get(`${prefix}/init`)
    report.etcd.quorum = true
  } catch (e) {
    report.etcd.error = e instanceof Error ? e.message : String(e)
    report.problems.push(
      members.some((m) => m.ok)
        ? `etcd has no quorum (no leader a majority follows): ${report.etcd.error}; nodes refuse writes (503 CLUSTER_NO_LEADER) until a majority of members runs`
        : `no etcd member answers: ${report.etcd.error}`,
    )
    return finish(report)
  }
  if (!init) {
    report.problems.push(`no cluster is initialised under prefix ${prefix} (the first node started with --cluster-endpoints initialises it; is the prefix right?)`)
  } else {
    try {
      const rec = JSON.parse(init.value) as { clusterId?: unknown; by?: unknown }
      report.cluster = { id: String(rec.clusterId), initialisedBy: String(rec.by), revision: init.createRevision }
    } catch {
      report.problems.push(`${prefix}/init is not a cluster record`)
    }
  }
  const [applied, nodes, log] = await Promise.all([
    client.range(appliedPrefixOf(prefix), { prefix: true }),
    client.range(nodesPrefixOf(prefix), { prefix: true }),
    client.range(logPrefixOf(prefix), { prefix: true, keysOnly: true }),
  ])
  report.etcd.revision = Math.max(applied.revision, nodes.revision, log.revision)
  report.etcd.compactRevision = await client.compactRevision()
  report.logKeys = log.kvs.length
  const byName = new Map<string, NodeStatus>()
  const node = (name: string) => byName.get(name) ?? byName.set(name, { name, registered: false, live: false }).get(name)!
  for (const kv of applied.kvs) {
    const n = node(kv.key.slice(appliedPrefixOf(prefix).length))
    const revision = Number(kv.value)
    n.registered = true
    if (Number.isFinite(revision)) n.registeredRevision = n.appliedRevision = revision
  }
  for (const kv of nodes.kvs) {
    let beat: NodeLiveness
    try {
      beat = JSON.parse(kv.value) as NodeLiveness
    } catch {
      continue
    }
    const n = node(kv.key.slice(nodesPrefixOf(prefix).length))
    n.live = true
    n.state = beat.state
    n.apiUrl = beat.apiUrl
    if (typeof beat.revision === 'number') n.appliedRevision = Math.max(beat.revision, n.appliedRevision ?? 0)
  }
  const logRevisions = log.kvs.map((kv) => kv.modRevision)
  for (const n of byName.values()) {
    if (n.appliedRevision !== undefined) {
      const at = n.appliedRevision
      n.lag = logRevisions.reduce((count, r) => (r > at ? count + 1 : count), 0)
    }
    if (n.registered && !n.live) {
      const behind = n.appliedRevision !== undefined && report.etcd.compactRevision > n.appliedRevision
      report.problems.push(
        behind
          ? `node ${n.name} is not live and its revision ${n.appliedRevision} is below etcd's compaction point ${report.etcd.compactRevision}: at its next start it replaces its state with a live member's snapshot; or retire it (edgeplane cluster remove ${n.name})`
          : `node ${n.name} is not live (applied up to revision ${n.appliedRevision ?? '?'}, ${n.lag ?? '?'} commands behind): start it again, or retire it (edgeplane cluster remove ${n.name})`,
      )
    }
    if (n.live && !n.registered) report.warnings.push(`node ${n.name} is live but has no applied key (removed while running?): compaction does not wait for it`)
    if (n.live && n.state !== undefined && n.state !== 'live') report.problems.push(`node ${n.name} reports state ${n.state}`)
  }
  report.nodes = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
  return finish(report)
}

function finish(report: ClusterStatusReport): ClusterStatusReport {
  report.healthy = report.problems.length === 0
  return report
}

export function renderClusterStatus(r: ClusterStatusReport): string {
  const lines: string[] = []
  lines.push(
    r.cluster
      ? `cluster ${r.cluster.id} (prefix ${r.prefix}, initialised by ${r.cluster.initialisedBy} at revision ${r.cluster.revision})`
      : `cluster: ${r.etcd.quorum ? 'none' : 'unknown'} (prefix ${r.prefix})`,
  )
  const etcdLine = r.etcd.quorum
    ? `etcd: quorum ok, revision ${r.etcd.revision}, ${r.etcd.compactRevision ? `compacted up to revision ${r.etcd.compactRevision}` : 'never compacted'}`
    : 'etcd: NO QUORUM'
  lines.push(etcdLine)
  lines.push(
    ...table(
      ['ENDPOINT', 'MEMBER', 'LEADER', 'REVISION', 'TERM', 'VERSION', 'DB SIZE', 'STATUS'],
      r.etcd.members.map((m) =>
        m.ok
          ? [m.endpoint, memberHex(m.memberId), m.isLeader ? 'yes' : m.leader ? 'no' : 'none', String(m.revision ?? '-'), String(m.raftTerm ?? '-'), m.version ?? '-', formatBytes(m.dbSize), m.alarms?.length ? `alarm ${m.alarms.join(',')}` : 'ok']
          : [m.endpoint, '-', '-', '-', '-', '-', '-', 'down'],
      ),
    ).map((l) => `  ${l}`),
  )
  if (r.etcd.quorum) {
    lines.push(r.logKeys !== undefined ? `nodes (${r.logKeys} commands in the log):` : 'nodes:')
    if (r.nodes.length === 0) lines.push('  (none)')
    else
      lines.push(
        ...table(
          ['NAME', 'LIVE', 'APPLIED', 'LAG', 'STATE', 'API'],
          r.nodes.map((n) => [n.name, n.live ? 'yes' : 'no', String(n.appliedRevision ?? '-'), String(n.lag ?? '-'), n.state ?? (n.registered ? 'down' : '-'), n.apiUrl ?? '-']),
        ).map((l) => `  ${l}`),
      )
  }
  lines.push(r.healthy ? 'health: ok' : `health: ${r.problems.length} problem(s)`)
  lines.push(...r.problems.map((p) => `  problem: ${p}`), ...r.warnings.map((w) => `  warning: ${w}`))
  return `${lines.join('\n')}\n`
}

/** A member id in hex, as etcdctl shows it (the gateway gives decimal uint64 text). */
function memberHex(id: string | undefined): string {
  if (!id || !/^\d+$/.test(id)) return id || '-'
  return BigInt(id).toString(16)
}

function table(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ')
  return [line(head), ...rows.map(line)]
}

function formatBytes(n: number | undefined): string {
  if (n === undefined) return '-'
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(0)} KiB`
  return `${(n / 1024 ** 2).toFixed(1)} MiB`
}

/** A removal that is refused (a live node without --force, an unknown name, no cluster): nothing was changed. */
export class ClusterRemoveRefused extends Error {}

export interface ClusterRemoveResult {
  name: string
  /** The revision of the `controller.remove` command. */
  revision: number
  key: string
  /** The node was live when it was removed (--force). */
  wasLive: boolean
  deletedKeys: number
}

/** How long the removal may wait in etcd before the nodes skip it (as a node's own commands). */
const REMOVE_DEADLINE_MS = 10_000

/** Retires node `name` (see the module note). */
export async function removeClusterNode(
  client: EtcdClient,
  prefix: string,
  name: string,
  o: {
    /** The sealer of the cluster's commands, and the cluster the data directory it came from belongs to. */
    member: { sealer: CommandSealer; clusterId: string; dataDir: string }
    force?: boolean
    now?: () => number
  },
): Promise<ClusterRemoveResult> {
  const now = o.now ?? Date.now
  const init = await client.get(`${prefix}/init`)
  if (!init) throw new ClusterRemoveRefused(`no cluster is initialised under prefix ${prefix}`)
  let clusterId: unknown
  try {
    clusterId = (JSON.parse(init.value) as { clusterId?: unknown }).clusterId
  } catch {
    throw new ClusterRemoveRefused(`${prefix}/init is not a cluster record`)
  }
  if (clusterId !== o.member.clusterId) {
    throw new ClusterRemoveRefused(
      `the data directory ${o.member.dataDir} belongs to cluster ${o.member.clusterId}, but etcd prefix ${prefix} holds cluster ${String(clusterId)}: ` +
        "give --data the data directory of one of this cluster's members (its sealing key seals the command)",
    )
  }
  const [applied, beat] = await Promise.all([client.get(`${appliedPrefixOf(prefix)}${name}`), client.get(`${nodesPrefixOf(prefix)}${name}`)])
  if (beat && !o.force) {
    let where = ''
    try {
      const b = JSON.parse(beat.value) as NodeLiveness
      where = ` (applying at revision ${b.revision}, API ${b.apiUrl})`
    } catch {
      // the name is enough
    }
    throw new ClusterRemoveRefused(`node ${name} is live${where}: stop it first, then remove it; --force removes it anyway (a node still running registers itself again within a second)`)
  }
  if (!applied && !beat && !o.force) {
    throw new ClusterRemoveRefused(`no node ${name} is registered under prefix ${prefix} (edgeplane cluster status lists them); --force appends the removal anyway`)
  }
  // a proposer of its own (`cli-<random>`): the log compares a command's deadline only with its own proposer's
  // earlier commands (cluster-log.ts), so this machine's clock is never held against the nodes' clocks
  const key = `${logPrefixOf(prefix)}cli-${randomUUID().slice(0, 8)}/${'1'.padStart(12, '0')}`
  const msg: ControllersMsg = { type: 'controller.remove', id: name, change: { author: 'edgeplane cluster remove', source: 'cli' } }
  const value = encodeCommand(o.member.sealer, key, 'controllers', msg, now(), REMOVE_DEADLINE_MS)
  const put = await client.putIfAbsent(key, value)
  if (!put.created) throw new Error(`the log key ${key} is taken by another command; nothing was changed, try again`)
  const a = await client.deleteRange(`${appliedPrefixOf(prefix)}${name}`)
  const b = await client.deleteRange(`${nodesPrefixOf(prefix)}${name}`)
  return { name, revision: put.revision, key, wasLive: beat !== undefined, deletedKeys: a.deleted + b.deleted }
}

class UsageError extends Error {}

/** The cluster's sealer and id from a member's data directory (read-only; the member may be running on it). */
async function memberOf(dataDir: string): Promise<{ sealer: CommandSealer; clusterId: string; dataDir: string }> {
  const why = 'cluster remove seals its command with the key of a member\'s data directory: give --data DIR (or EDGEPLANE_DATA, or data: in --config)'
  if (!(await pathExists(storePathOf(dataDir)))) throw new ClusterRemoveRefused(`${dataDir} holds no edgeplane data; ${why}`)
  const { cluster } = await readStoreFacts(dataDir)
  if (!cluster) throw new ClusterRemoveRefused(`${dataDir} is not a cluster member's data directory; ${why}`)
  let sealer: CommandSealer
  try {
    sealer = commandSealerOf(dataDir)
  } catch (e) {
    throw new ClusterRemoveRefused(`cannot read the sealing key of ${dataDir}: ${e instanceof Error ? e.message : String(e)}; ${why}`)
  }
  return { sealer, clusterId: cluster.id, dataDir }
}

const COMMON_OPTIONS = {
  'cluster-endpoints': { type: 'string', multiple: true },
  data: { type: 'string' },
  config: { type: 'string' },
  prefix: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** Parses `edgeplane cluster ...` (exported for the unit tests of its argument handling). */
export function parseClusterArgs(
  argv: string[],
  env: Record<string, string | undefined>,
):
  | { help: true }
  | { help?: false; sub: 'status' | 'remove'; endpoints: string[]; prefix: string; dataDir: string; json: boolean; force: boolean; name?: string } {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') return { help: true }
  if (sub !== 'status' && sub !== 'remove') throw new UsageError(`unknown subcommand '${sub}' (status or remove)`)
  const { values, positionals } = parseArgs({
    args: rest,
    options: sub === 'remove' ? { ...COMMON_OPTIONS, force: { type: 'boolean' } } : COMMON_OPTIONS,
    strict: true,
    allowPositionals: sub === 'remove',
  })
  if (values.help) return { help: true }
  const v = values as { 'cluster-endpoints'?: string[]; config?: string; prefix?: string; data?: string; json?: boolean; force?: boolean }
  let name: string | undefined
  if (sub === 'remove') {
    if (positionals.length !== 1) throw new UsageError('cluster remove takes one node name: edgeplane cluster remove NAME')
    name = positionals[0]
    const problem = nodeNameProblem(name)
    if (problem) throw new UsageError(problem)
  }
  const access = resolveClusterAccess({ clusterEndpoints: v['cluster-endpoints'], prefix: v.prefix, data: v.data, config: v.config ?? env.EDGEPLANE_CONFIG }, env)
  if (!access.endpoints) throw new UsageError('no etcd endpoints: give --cluster-endpoints URL[,URL...], EDGEPLANE_CLUSTER_ENDPOINTS, or --config FILE with cluster.endpoints')
  return {
    sub,
    endpoints: access.endpoints,
    prefix: access.prefix ?? DEFAULT_CLUSTER_PREFIX,
    dataDir: access.dataDir,
    json: v.json === true,
    force: v.force === true,
    name,
  }
}

export async function runClusterCommand(argv: string[], io: ClusterCommandIo): Promise<number> {
  let args: ReturnType<typeof parseClusterArgs>
  try {
    args = parseClusterArgs(argv, io.env)
  } catch (e) {
    const usage = e instanceof UsageError || e instanceof ConfigError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    if (!usage) throw e
    io.stderr(`edgeplane cluster: ${(e as Error).message}\n\n${CLUSTER_HELP}`)
    return 2
  }
  if (args.help) {
    io.stdout(CLUSTER_HELP)
    return 0
  }
  const client = new EtcdClient({ endpoints: args.endpoints, timeoutMs: 2_000 })
  try {
    if (args.sub === 'status') {
      const report = await readClusterStatus(client, args.endpoints, args.prefix)
      io.stdout(args.json ? `${JSON.stringify(report, null, 2)}\n` : renderClusterStatus(report))
      if (!report.healthy && !args.json) io.stderr(`edgeplane cluster status: not healthy: ${report.problems.length} problem(s), listed above\n`)
      return report.healthy ? 0 : 1
    }
    const r = await removeClusterNode(client, args.prefix, args.name!, { member: await memberOf(args.dataDir), force: args.force })
    if (args.json) io.stdout(`${JSON.stringify(r, null, 2)}\n`)
    else
      io.stdout(
        `node ${r.name} removed: controller.remove appended to the log at revision ${r.revision} (every node applies it), ` +
          `${r.deletedKeys} of its keys deleted (compaction no longer waits for it)\n` +
          (r.wasLive ? `warning: ${r.name} was live: stop it now, or it registers itself again within a second\n` : ''),
      )
    return 0
  } catch (e) {
    io.stderr(`edgeplane cluster ${args.sub}: ${e instanceof Error ? e.message : String(e)}\n`)
    return 1
  } finally {
    client.close()
  }
}
