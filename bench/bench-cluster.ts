/**
 * `bun run bench cluster`: a cluster of three edgeplane nodes on a three-member etcd against one node, on the same
 * machine, in one run (issue 23, "Measurements"). Every controller is `bun src/main.ts run` in a child process of its
 * own (with `--cluster-endpoints` and `--node-name` for the nodes of the cluster), so that its CPU can be read from
 * /proc and it can be killed with -9. Node A initialises the cluster on an empty etcd prefix; B and C are restored from
 * a backup of A and catch up from its revision.
 *
 * Figures (bench/README.md, "Cluster"):
 * - identity creates with 1 and with 50 clients (wrk), single node against the cluster (on A), in turns: p50/p99,
 *   throughput, and CPU per create of the node that answered, of the three nodes together and of etcd;
 * - service listing (`GET /edge/client/v1/services` of an identity with 20 services, one client) on the single node
 *   and on A, B and C, in turns, before any other figure (every node holds the same records then): p50/p99 and CPU
 *   per listing;
 * - apply lag on B and C while A takes sequential creates, idle and beside 50 clients of creates on A: the nodes' own
 *   edgeplane_cluster_apply_lag_seconds (proposer's clock reading → this node's apply; p50/p99 estimated within the
 *   buckets as Prometheus' histogram_quantile does), and what a client sees: after A's 201, back-to-back reads of the
 *   new identity on B and C until they answer 200 (the time from the 201 to the sending of the read that found it, 0
 *   when the first read did); etcd's WAL fsync histogram beside them;
 * - writes on A while the etcd leader is killed with -9: time from the kill to the first 201 of a create sent after it,
 *   and the longest time without a 201; then every acknowledged create is looked up on A, B and C, and every refused
 *   one on A (a refusal must have changed nothing);
 * - writes on A and B while node C is killed with -9: the longest time without a 201 on each, against the same
 *   figure before the kill;
 * - catch-up: C stays down while BENCH_CATCHUP_WRITES creates (default 20,000) go to A; then C starts again on its
 *   data directory: its log line "caught up from revision X to Y (N revisions in M ms)" gives the time M; the speed
 *   is the creates sent after C's kill (these and the node-kill figure's) per M, the revisions per M beside it; and
 *   the time from its start to its first answer with the last create.
 * Not part of the default `bun run bench`: it needs etcd (Debian's etcd-server) and takes several minutes.
 */
import type { Subprocess } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { backupDataDir } from '../src/operate/operate-backup.ts'
import { restoreDataDir } from '../src/operate/operate-restore.ts'
import { EtcdClient } from '../src/cluster/etcd-client.ts'
import { startEtcdCluster, type EtcdCluster } from '../test/support/etcd.ts'
import { cpuSecondsOf } from './bench-cpu.ts'
import { runLoad } from './bench-load.ts'
import { loadGeneratorNote, measure, readLines, type LoadSpec, type Measured } from './bench-measure.ts'

const PASSWORD = 'bench-cluster-admin-1'
const USER_PASSWORD = 'bench-cluster-user-1'
const PREFIX = '/bench'
const SERVICES = 20
const tls = { rejectUnauthorized: false }
const MGMT = '/edge/management/v1'
const CLIENT = '/edge/client/v1'

export interface ClusterBenchOptions {
  seconds: number
  rounds: number
  /** Creates made on the others while a node is down (its catch-up). */
  catchUpWrites: number
  /** Sequential creates whose apply lag is read on the other nodes. */
  lagSamples: number
}

// ---------------------------------------------------------------------------------------------------------------
// processes

interface Node {
  name: string
  dataDir: string
  url: string
  pid: number
  /** Lines of the node's log that are not request lines. */
  notes: string[]
  /** ms from spawn to the listening line. */
  startMs: number
  stop(): Promise<void>
  kill9(): Promise<void>
}

const REQUEST_LINE = /"msg":"request"|"request_id"|"reqId"/


const running = new Set<Subprocess>()
process.on('exit', () => {
  for (const p of running) {
    try {
      p.kill('SIGKILL')
    } catch {
      // gone
    }
  }
})

const MAIN = join(import.meta.dir, '..', 'src', 'main.ts')

/** `edgeplane run` on 127.0.0.1, a free port and `dataDir`; a node of the cluster on `cluster.endpoints` when given. */
export async function startNode(name: string, dataDir: string, cluster?: { endpoints: string[] }): Promise<Node> {
  const t0 = performance.now()
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof-md', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []
  const args = ['bun', ...profile, MAIN, 'run', '--data', dataDir, '--listen', '127.0.0.1:0', '--admin-password', PASSWORD]
  if (cluster) args.push('--cluster-endpoints', cluster.endpoints.join(','), '--node-name', name)
  const env: Record<string, string | undefined> = { ...process.env, EDGEPLANE_CLUSTER_PREFIX: cluster ? PREFIX : undefined }
  const proc = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe', env })
  running.add(proc)
  const notes: string[] = []
  void readLines(proc.stderr, (line) => {
    if (REQUEST_LINE.test(line)) return
    notes.push(line)
    if (/"level":"(error|fatal)"|level":50|level":60/.test(line)) process.stderr.write(`  [${name}] ${line.slice(0, 400)}\n`)
  })
  const url = await new Promise<string>((resolve, reject) => {
    let seen = ''
    void readLines(proc.stdout, (line) => {
      seen += line + '\n'
      const m = /listening on (https:\/\/\S+)/.exec(line)
      if (m) resolve(m[1])
    }).then(() => reject(new Error(`node ${name} exited before listening: ${seen}${notes.slice(-5).join('\n')}`)))
  })
  const gone = async (signal: 'SIGTERM' | 'SIGKILL') => {
    proc.kill(signal)
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000)
    await proc.exited
    clearTimeout(timer)
    running.delete(proc)
  }
  return { name, dataDir, url, pid: proc.pid, notes, startMs: performance.now() - t0, stop: () => gone('SIGTERM'), kill9: () => gone('SIGKILL') }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

async function call(base: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (token) headers['zt-session'] = token
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), tls } as RequestInit)
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = text
  }
  return { status: res.status, body: parsed }
}

async function must(base: string, status: number, method: string, path: string, token?: string, body?: unknown): Promise<any> {
  const r = await call(base, method, path, token, body)
  if (r.status !== status) throw new Error(`${method} ${path} on ${base}: ${r.status} (expected ${status}) ${JSON.stringify(r.body).slice(0, 300)}`)
  return r.body
}

async function login(base: string, api: string, username: string, password: string): Promise<string> {
  return (await must(base, 200, 'POST', `${api}/authenticate?method=password`, undefined, { username, password })).data.token
}

/** The listing scenario: an identity with a password and SERVICES services by one Dial policy. Returns its session. */
async function setUpListing(url: string, admin: string): Promise<void> {
  for (let i = 0; i < SERVICES; i++) {
    await must(url, 201, 'POST', `${MGMT}/services`, admin, { name: `bench-svc-${i}`, encryptionRequired: true, roleAttributes: ['bench'] })
  }
  await must(url, 201, 'POST', `${MGMT}/service-policies`, admin, {
    name: 'bench-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#bench-users'], serviceRoles: ['#bench'],
  })
  const id = (await must(url, 201, 'POST', `${MGMT}/identities`, admin, { name: 'bench-user', type: 'User', isAdmin: false, roleAttributes: ['bench-users'] })).data.id
  await must(url, 201, 'POST', `${MGMT}/authenticators`, admin, { method: 'updb', identityId: id, username: 'bench-user', password: USER_PASSWORD })
}

// ---------------------------------------------------------------------------------------------------------------
// figures

const pct = (sorted: readonly number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN)
const median = (xs: readonly number[]) => pct([...xs].sort((a, b) => a - b), 0.5)
const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a')

/** A wrk figure on `target`, with the CPU of every process in `pids` read around it. */
async function measureWith(target: number, spec: LoadSpec, pids: Record<string, number[]>): Promise<Measured & { cpuUsOf: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, ps]) => [k, ps.map((p) => cpuSecondsOf(p) ?? NaN)]))
  const m = await measure(target, spec)
  const cpuUsOf: Record<string, number> = {}
  for (const [k, ps] of Object.entries(pids)) {
    const used = ps.reduce((sum, p, i) => sum + ((cpuSecondsOf(p) ?? NaN) - before[k][i]), 0)
    cpuUsOf[k] = m.requests > 0 ? (used * 1e6) / m.requests : NaN
  }
  return { ...m, cpuUsOf }
}

interface Row {
  figure: string
  single: string
  cluster: string
  ratio: string
  target: string
}

export async function runClusterBench(o: ClusterBenchOptions): Promise<void> {
  const durationMs = o.seconds * 1000
  const root = mkdtempSync(join(tmpdir(), 'edgeplane-bench-cluster-'))
  const rows: Row[] = []
  const nodes: Node[] = []
  let etcd: EtcdCluster | undefined
  let single: Node | undefined
  console.log(`edgeplane cluster benchmark: 3 etcd members + 3 nodes against 1 node, ${o.seconds}s per figure, ${o.rounds} rounds, ${navigator.hardwareConcurrency} cores`)
  console.log(`${loadGeneratorNote()}; CPU/req is user + system time of the named processes (/proc) per answered request\n`)
  try {
    etcd = await startEtcdCluster({ members: 3 })
    const etcdPids = () => etcd!.members.map((m) => m.pid()).filter((p): p is number => p !== undefined)
    single = await startNode('single', join(root, 'single'))
    const a = await startNode('node-a', join(root, 'a'), { endpoints: etcd.endpoints })
    nodes.push(a)
    for (const n of [single, a]) await setUpListing(n.url, await login(n.url, MGMT, 'admin', PASSWORD))
    await backupDataDir({ dataDir: a.dataDir, outFile: join(root, 'a.backup'), now: new Date() })
    for (const name of ['b', 'c']) {
      await restoreDataDir(join(root, 'a.backup'), join(root, name))
      nodes.push(await startNode(`node-${name}`, join(root, name), { endpoints: etcd.endpoints }))
    }
    const [, b, c] = nodes
    console.log(`etcd: ${etcd.endpoints.join(', ')}; nodes: ${nodes.map((n) => `${n.name} ${n.url} (started in ${n.startMs.toFixed(0)} ms)`).join(', ')}`)
    const singleAdmin = await login(single.url, MGMT, 'admin', PASSWORD)
    const clusterAdmin = await login(a.url, MGMT, 'admin', PASSWORD)
    const singleUser = await login(single.url, CLIENT, 'bench-user', USER_PASSWORD)
    // one session of the cluster, made on A, used on every node (sessions are replicated)
    const clusterUser = await login(a.url, CLIENT, 'bench-user', USER_PASSWORD)

    // --- service listing on every node, in turns (first: every node holds the same records then) -----------------
    // a listing costs ~50 µs: its p99 at one client is the machine's scheduling more than the node, so the four
    // targets are measured in many short turns (3 per round) and each ratio is the median of the per-turn ratios
    const listTurns = o.rounds * 3
    const listing = (url: string, token: string): LoadSpec => ({ url: `${url}${CLIENT}/services?limit=100`, sessions: [token], connections: 1, durationMs: Math.max(1000, durationMs / 3) })
    const listed = await must(b.url, 200, 'GET', `${CLIENT}/services?limit=100`, clusterUser)
    if (listed.data.length !== SERVICES) throw new Error(`node B lists ${listed.data.length} services, expected ${SERVICES}`)
    const listTargets = [
      { name: 'single', pid: single.pid, spec: listing(single.url, singleUser) },
      ...nodes.map((n) => ({ name: n.name, pid: n.pid, spec: listing(n.url, clusterUser) })),
    ]
    for (const t of listTargets) await measure(t.pid, { ...t.spec, durationMs: 1000 })
    const listRounds = listTargets.map(() => [] as Measured[])
    for (let r = 0; r < listTurns; r++) for (const [i, t] of listTargets.entries()) listRounds[i].push(await measure(t.pid, t.spec))
    for (const [i, t] of listTargets.entries()) {
      const ms = listRounds[i]
      console.log(
        `service listing (${SERVICES} services, c=1) on ${t.name.padEnd(7)} ${listTurns} turns: p50 ${fmt(median(ms.map((m) => m.p50Ms)))} ms, ` +
          `p99 ${fmt(median(ms.map((m) => m.p99Ms)))} ms (${fmt(Math.min(...ms.map((m) => m.p99Ms)))}–${fmt(Math.max(...ms.map((m) => m.p99Ms)))}), ` +
          `${fmt(median(ms.map((m) => m.cpuUsPerRequest)), 0)} µs CPU/listing, ${fmt(median(ms.map((m) => m.perSecond)), 0)} listings/s`,
      )
    }
    for (const [i, t] of listTargets.entries()) {
      if (i === 0) continue
      const s = listRounds[0]
      const k = listRounds[i]
      const p99Ratio = median(s.map((m, j) => k[j].p99Ms / m.p99Ms))
      rows.push({ figure: `service listing p99 on ${t.name}`, single: `${fmt(median(s.map((m) => m.p99Ms)))} ms`, cluster: `${fmt(median(k.map((m) => m.p99Ms)))} ms`, ratio: fmt(p99Ratio), target: 'unchanged (≤ 1.15)' + (p99Ratio <= 1.15 ? ' met' : ' NOT MET') })
      rows.push({
        figure: `service listing CPU on ${t.name}`,
        single: `${fmt(median(s.map((m) => m.cpuUsPerRequest)), 0)} µs`,
        cluster: `${fmt(median(k.map((m) => m.cpuUsPerRequest)), 0)} µs`,
        ratio: fmt(median(s.map((m, j) => k[j].cpuUsPerRequest / m.cpuUsPerRequest))),
        target: '',
      })
    }

    // --- creates, 1 and 50 clients, in turns --------------------------------------------------------------------
    const creates = (url: string, token: string, tag: string, c: number): LoadSpec => ({
      url: `${url}${MGMT}/identities`,
      method: 'POST',
      body: JSON.stringify({ name: `bench-${tag}-c${c}-{n}`, type: 'User', isAdmin: false, roleAttributes: ['bench'] }),
      sessions: [token],
      connections: c,
      durationMs,
    })
    const clusterPids = { node: [a.pid], nodes: nodes.map((n) => n.pid), etcd: etcdPids() }
    // warm-up: the create path of every process compiled before the clock runs
    for (const c of [1, 50]) {
      await measure(single.pid, { ...creates(single.url, singleAdmin, 'warm', c), durationMs: 1000 })
      await measure(a.pid, { ...creates(a.url, clusterAdmin, 'warm', c), durationMs: 1000 })
    }
    const createRounds: Record<string, { single: Measured[]; cluster: (Measured & { cpuUsOf: Record<string, number> })[] }> = {
      1: { single: [], cluster: [] },
      50: { single: [], cluster: [] },
    }
    // the floor of a cluster create: etcd alone, the same create-if-absent submission from this process (no edgeplane
    // request, no watch of its own, no apply), under a prefix no node watches
    const raw = new EtcdClient({ endpoints: etcd.endpoints })
    const rawValue = Buffer.alloc(450, 1).toString('base64')
    const rawPuts = async (c: number, r: number): Promise<Measured> => {
      const pids = etcdPids()
      const before = pids.map((p) => cpuSecondsOf(p) ?? NaN)
      const res = await runLoad({ concurrency: c, durationMs, request: async (w, i) => (await raw.putIfAbsent(`/bench-raw/${c}/${r}/${w}/${i}`, rawValue)).created })
      const used = pids.reduce((sum, p, i) => sum + ((cpuSecondsOf(p) ?? NaN) - before[i]), 0)
      return { requests: res.count, errors: res.errors, perSecond: res.perSecond, p50Ms: res.p50Ms, p99Ms: res.p99Ms, cpuSeconds: used, cpuUsPerRequest: (used * 1e6) / res.count, stealPercent: NaN }
    }
    const rawRounds: Record<string, Measured[]> = { 1: [], 50: [] }
    for (let r = 0; r < o.rounds; r++) {
      for (const c of [1, 50]) {
        createRounds[c].single.push(await measure(single.pid, creates(single.url, singleAdmin, `s${r}`, c)))
        createRounds[c].cluster.push(await measureWith(a.pid, creates(a.url, clusterAdmin, `a${r}`, c), clusterPids))
        rawRounds[c].push(await rawPuts(c, r))
      }
    }
    raw.close()
    for (const c of [1, 50]) {
      const s = createRounds[c].single
      const k = createRounds[c].cluster
      const ratio = (f: (m: Measured) => number) => median(s.map((m, i) => f(k[i]) / f(m)))
      const line = (what: string, m: Measured, extra = '') =>
        console.log(`${what.padEnd(44)} ${fmt(m.perSecond, 0).padStart(6)} creates/s, p50 ${fmt(m.p50Ms)} ms, p99 ${fmt(m.p99Ms)} ms, ${fmt(m.cpuUsPerRequest, 0)} µs CPU/create${m.errors ? `, ${m.errors} errors` : ''}${m.stealPercent >= 1 ? `, steal ${m.stealPercent.toFixed(0)}%` : ''}${extra}`)
      for (let r = 0; r < o.rounds; r++) {
        line(`identity creates c=${c}, single node (round ${r + 1})`, s[r])
        line(`identity creates c=${c}, cluster on A (round ${r + 1})`, k[r],
          `; all 3 nodes ${fmt(k[r].cpuUsOf.nodes, 0)} µs, etcd ${fmt(k[r].cpuUsOf.etcd, 0)} µs per create`)
        const e = rawRounds[c][r]
        console.log(`${`etcd alone: create-if-absent puts c=${c} (round ${r + 1})`.padEnd(44)} ${fmt(e.perSecond, 0).padStart(6)} puts/s,    p50 ${fmt(e.p50Ms)} ms, p99 ${fmt(e.p99Ms)} ms, etcd ${fmt(e.cpuUsPerRequest, 0)} µs CPU/put`)
      }
      const e = rawRounds[c]
      rows.push({ figure: `etcd alone, put p50 / p99 / puts/s, c=${c}`, single: '', cluster: `${fmt(median(e.map((m) => m.p50Ms)))} / ${fmt(median(e.map((m) => m.p99Ms)))} ms / ${fmt(median(e.map((m) => m.perSecond)), 0)}`, ratio: '', target: 'the floor of a cluster create' })
      rows.push({ figure: `create p50, c=${c}`, single: `${fmt(median(s.map((m) => m.p50Ms)))} ms`, cluster: `${fmt(median(k.map((m) => m.p50Ms)))} ms`, ratio: fmt(ratio((m) => m.p50Ms)), target: '' })
      rows.push({ figure: `create p99, c=${c}`, single: `${fmt(median(s.map((m) => m.p99Ms)))} ms`, cluster: `${fmt(median(k.map((m) => m.p99Ms)))} ms`, ratio: fmt(ratio((m) => m.p99Ms)), target: '' })
      rows.push({ figure: `creates/s, c=${c}`, single: fmt(median(s.map((m) => m.perSecond)), 0), cluster: fmt(median(k.map((m) => m.perSecond)), 0), ratio: fmt(ratio((m) => m.perSecond)), target: '' })
      rows.push({
        figure: `CPU/create of the answering node, c=${c}`,
        single: `${fmt(median(s.map((m) => m.cpuUsPerRequest)), 0)} µs`,
        cluster: `${fmt(median(k.map((m) => m.cpuUsPerRequest)), 0)} µs`,
        ratio: fmt(ratio((m) => m.cpuUsPerRequest)),
        target: '',
      })
      rows.push({
        figure: `CPU/create, 3 nodes + etcd, c=${c}`,
        single: `${fmt(median(s.map((m) => m.cpuUsPerRequest)), 0)} µs`,
        cluster: `${fmt(median(k.map((m) => m.cpuUsOf.nodes)), 0)} + ${fmt(median(k.map((m) => m.cpuUsOf.etcd)), 0)} µs`,
        ratio: fmt(median(s.map((m, i) => (k[i].cpuUsOf.nodes + k[i].cpuUsOf.etcd) / m.cpuUsPerRequest))),
        target: '',
      })
    }

    // --- apply lag on B and C --------------------------------------------------------------------------------------
    // two readings: the node's own histogram (edgeplane_cluster_apply_lag_seconds: proposer's clock reading to the
    // apply, of commands other nodes proposed), and what a client sees (A's 201, then reads on B and C)
    const fsyncBefore = await etcdBuckets(etcd, 'etcd_disk_wal_fsync_duration_seconds')
    const metricsBefore = await lagBuckets([b, c], clusterAdmin)
    const lagIdle = await applyLag(a, [b, c], clusterAdmin, o.lagSamples, 'lag-idle')
    const metricsIdle = await lagBuckets([b, c], clusterAdmin)
    const fsyncIdle = await etcdBuckets(etcd, 'etcd_disk_wal_fsync_duration_seconds')
    const background = measure(a.pid, { ...creates(a.url, clusterAdmin, 'lag-load', 50), durationMs: Math.max(durationMs, 5000) })
    await Bun.sleep(300)
    const lagLoaded = await applyLag(a, [b, c], clusterAdmin, o.lagSamples, 'lag-load', Math.max(durationMs, 5000) - 800)
    const bg = await background
    const metricsLoaded = await lagBuckets([b, c], clusterAdmin)
    const fsyncLoaded = await etcdBuckets(etcd, 'etcd_disk_wal_fsync_duration_seconds')
    const fsyncNote = () => `  etcd's WAL fsyncs meanwhile (3 members): ${describeBuckets(fsyncIdle, fsyncLoaded).describe}`
    const histIdle = describeBuckets(metricsBefore, metricsIdle)
    const histLoaded = describeBuckets(metricsIdle, metricsLoaded)
    console.log(`apply lag, idle: ${lagIdle.describe}`)
    console.log(`  B and C's edgeplane_cluster_apply_lag_seconds meanwhile: ${histIdle.describe}`)
    console.log(`  etcd's WAL fsyncs meanwhile (3 members): ${describeBuckets(fsyncBefore, fsyncIdle).describe}`)
    console.log(`apply lag, with 50 clients of creates on A (${fmt(bg.perSecond, 0)} creates/s): ${lagLoaded.describe}`)
    console.log(`  B and C's edgeplane_cluster_apply_lag_seconds meanwhile: ${histLoaded.describe}`)
    console.log(fsyncNote())
    const lagRow = (what: string, client: typeof lagIdle, hist: typeof histIdle) => {
      rows.push({ figure: `apply lag on B and C, ${what}`, single: '', cluster: `p50 ~${fmt(hist.p50Ms, 1)} ms, p99 ~${fmt(hist.p99Ms, 1)} ms (${hist.p99Bucket})`, ratio: '', target: `≤ 20 ms ${hist.p99Ms <= 20 ? 'met' : 'NOT MET'}` })
      rows.push({ figure: `  after A's 201, read on B and C (client)`, single: '', cluster: `p50 ${fmt(client.p50)} ms, p99 ${fmt(client.p99)} ms`, ratio: '', target: `≤ 20 ms ${client.p99 <= 20 ? 'met' : 'NOT MET'}` })
    }
    lagRow('idle', lagIdle, histIdle)
    lagRow('50 writers on A', lagLoaded, histLoaded)

    // --- kill -9 of the etcd leader during writes ------------------------------------------------------------------
    const leader = await etcd.leader()
    const leaderRun = await writesAcrossKill([a], clusterAdmin, 'etcd-kill', 8, async () => leader.kill('SIGKILL'))
    console.log(`kill -9 of etcd leader ${leader.name}: ${leaderRun.describe}`)
    await leader.start()
    await Bun.sleep(500)
    const missing = await missingOn(nodes, clusterAdmin, leaderRun.acked)
    const refusedPresent = await presentOn(a, clusterAdmin, leaderRun.refused)
    console.log(
      `  after the member restarted: of ${leaderRun.acked.length} acknowledged creates, missing on ${nodes.map((n, i) => `${n.name}: ${missing[i]}`).join(', ')}; ` +
        `of ${leaderRun.refused.length} refused, present on ${a.name}: ${refusedPresent}`,
    )
    rows.push({ figure: 'writes again after etcd leader kill -9', single: '', cluster: `${fmt(leaderRun.firstOkAfterKillMs / 1000)} s`, ratio: '', target: `≤ 3 s ${leaderRun.firstOkAfterKillMs <= 3000 ? 'met' : 'NOT MET'}` })
    rows.push({ figure: '  longest time without a 201 (etcd kill)', single: '', cluster: `${fmt(leaderRun.longestGapAfterMs / 1000)} s`, ratio: '', target: `${leaderRun.errors} errors (${refusedPresent} applied), ${missing.reduce((x, y) => x + y, 0)} acked missing` })

    // --- kill -9 of node C during writes on A and B ----------------------------------------------------------------
    const nodeRun = await writesAcrossKill([a, b], clusterAdmin, 'node-kill', 6, () => c.kill9())
    console.log(`kill -9 of ${c.name}: ${nodeRun.describe}`)
    const missingAfterNodeKill = await missingOn([a, b], clusterAdmin, nodeRun.acked)
    rows.push({
      figure: 'writes on A and B across node C kill -9',
      single: '',
      cluster: `longest gap ${fmt(nodeRun.longestGapAfterMs)} ms (before: ${fmt(nodeRun.longestGapBeforeMs)} ms)`,
      ratio: '',
      target: `0 s: ${nodeRun.errors} errors, ${missingAfterNodeKill.reduce((x, y) => x + y, 0)} acked missing`,
    })

    // --- catch-up of C ---------------------------------------------------------------------------------------------
    const writes = await runLoad({
      concurrency: 50,
      durationMs: 3_600_000,
      maxRequests: o.catchUpWrites,
      request: async (w, i) => (await call(a.url, 'POST', `${MGMT}/identities`, clusterAdmin, { name: `bench-catchup-${w}-${i}`, type: 'User', isAdmin: false })).status === 201,
    })
    const last = await must(a.url, 201, 'POST', `${MGMT}/identities`, clusterAdmin, { name: 'bench-catchup-last', type: 'User', isAdmin: false })
    console.log(`while ${c.name} was down: ${writes.count} creates on A (${writes.errors} errors, ${fmt(writes.perSecond, 0)} creates/s)`)
    const t0 = performance.now()
    const c2 = await startNode(c.name, c.dataDir, { endpoints: etcd.endpoints })
    nodes[2] = c2
    while ((await call(c2.url, 'GET', `${MGMT}/identities/${last.data.id}`, clusterAdmin)).status !== 200) await Bun.sleep(1)
    const servedMs = performance.now() - t0
    const caught = c2.notes.map((l) => /caught up from revision (\d+) to (\d+) \((\d+) revisions in (\d+) ms\)/.exec(l)).find(Boolean)
    const revisions = caught ? Number(caught[3]) : NaN
    const catchUpMs = caught ? Number(caught[4]) : NaN
    const perSecond = (revisions / catchUpMs) * 1000
    // the commands C surely replayed: the creates sent after its kill (the node-kill figure's, then these); the revisions
    // also count etcd writes that are no commands (liveness and applied keys every 1 and 10 s, the janitor's deletions)
    const commands = nodeRun.ackedSentAfterKill + writes.count + 1
    const commandsPerSecond = (commands / catchUpMs) * 1000
    console.log(
      `catch-up of ${c.name}: ${caught ? `revision ${caught[1]} to ${caught[2]}, ${revisions} revisions in ${catchUpMs} ms (${fmt(perSecond, 0)}/s)` : 'no "caught up" line'}; ` +
        `listening ${fmt(c2.startMs, 0)} ms after its start, the last create served ${fmt(servedMs, 0)} ms after it`,
    )
    rows.push({ figure: 'catch-up of a restarted node', single: '', cluster: `${fmt(commandsPerSecond, 0)} commands/s (${commands} in ${catchUpMs} ms)`, ratio: '', target: `≥ 5,000/s ${commandsPerSecond >= 5000 ? 'met' : 'NOT MET'}` })
    rows.push({ figure: '  the same in etcd revisions', single: '', cluster: `${fmt(perSecond, 0)} revisions/s (${revisions})`, ratio: '', target: '' })
    rows.push({ figure: '  start to serving the last write', single: '', cluster: `${fmt(servedMs / 1000)} s`, ratio: '', target: '' })

    printRows(rows)
  } finally {
    await Promise.all([single?.stop(), ...nodes.map((n) => n.stop())])
    await etcd?.stop()
    rmSync(root, { recursive: true, force: true })
  }
}

function printRows(rows: readonly Row[]): void {
  const widths = [46, 16, 34, 7]
  console.log(`\n${'figure'.padEnd(widths[0])} ${'single node'.padEnd(widths[1])} ${'cluster'.padEnd(widths[2])} ${'ratio'.padEnd(widths[3])} target`)
  for (const r of rows) console.log(`${r.figure.padEnd(widths[0])} ${r.single.padEnd(widths[1])} ${r.cluster.padEnd(widths[2])} ${r.ratio.padEnd(widths[3])} ${r.target}`)
}

/**
 * Sequential creates on `writer`; after each 201, back-to-back reads of the new identity on each of `readers` until it
 * answers 200. The lag of one reader is the time from the 201 to the sending of the read that found it (0 when the
 * first read did: the node had applied the create before the proposer answered). For `forMs` when given, else `n`
 * samples.
 */
async function applyLag(writer: Node, readers: readonly Node[], token: string, n: number, tag: string, forMs?: number): Promise<{ p50: number; p99: number; max: number; describe: string }> {
  const lags: number[] = []
  const endToEnd: number[] = []
  const end = forMs === undefined ? Infinity : performance.now() + forMs
  for (let i = 0; forMs === undefined ? i < n : performance.now() < end; i++) {
    const sent = performance.now()
    const r = await call(writer.url, 'POST', `${MGMT}/identities`, token, { name: `bench-${tag}-${i}`, type: 'User', isAdmin: false })
    if (r.status !== 201) throw new Error(`create on ${writer.name}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)
    const answered = performance.now()
    await Promise.all(
      readers.map(async (reader) => {
        for (let first = true; ; first = false) {
          const readSent = performance.now()
          if ((await call(reader.url, 'GET', `${MGMT}/identities/${r.body.data.id}`, token)).status === 200) {
            lags.push(first ? 0 : readSent - answered)
            endToEnd.push(performance.now() - sent)
            return
          }
        }
      }),
    )
  }
  lags.sort((x, y) => x - y)
  endToEnd.sort((x, y) => x - y)
  const zero = lags.filter((l) => l === 0).length
  return {
    p50: pct(lags, 0.5),
    p99: pct(lags, 0.99),
    max: lags[lags.length - 1],
    describe:
      `${lags.length} reads: after the 201, p50 ${fmt(pct(lags, 0.5))} ms, p99 ${fmt(pct(lags, 0.99))} ms, max ${fmt(lags[lags.length - 1])} ms ` +
      `(${((100 * zero) / lags.length).toFixed(0)}% already applied at the 201); create sent to found on the reader: p50 ${fmt(pct(endToEnd, 0.5))} ms, p99 ${fmt(pct(endToEnd, 0.99))} ms`,
  }
}

/**
 * Writers (4 per node of `on`, each one create after another) for `seconds`; `kill` runs after a third of it. Returns
 * the acknowledged ids, the time from the kill to the first 201 of a create sent after it, and the longest time
 * without any 201 before and after the kill.
 */
async function writesAcrossKill(on: readonly Node[], token: string, tag: string, seconds: number, kill: () => Promise<void>) {
  const acked: string[] = []
  /** Names of creates answered with an error (a 503 says nothing changed: they are looked up afterwards). */
  const refused: string[] = []
  const okTimes: number[] = []
  const okSentTimes: number[] = []
  let errors = 0
  const statuses = new Map<string, number>()
  const start = performance.now()
  const end = start + seconds * 1000
  let killedAt = Infinity
  const writer = async (node: Node, w: number) => {
    for (let i = 0; performance.now() < end; i++) {
      const sent = performance.now()
      const name = `bench-${tag}-${node.name}-${w}-${i}`
      try {
        const r = await call(node.url, 'POST', `${MGMT}/identities`, token, { name, type: 'User', isAdmin: false })
        if (r.status === 201) {
          acked.push(r.body.data.id)
          okTimes.push(performance.now())
          okSentTimes.push(sent)
        } else {
          errors++
          refused.push(name)
          const key = `${r.status} ${r.body?.error?.code ?? ''}`
          statuses.set(key, (statuses.get(key) ?? 0) + 1)
          await Bun.sleep(5)
        }
      } catch (e) {
        errors++
        refused.push(name)
        statuses.set(String((e as Error).message).slice(0, 40), (statuses.get(String((e as Error).message).slice(0, 40)) ?? 0) + 1)
        await Bun.sleep(5)
      }
    }
  }
  const killer = (async () => {
    await Bun.sleep((seconds * 1000) / 3)
    killedAt = performance.now()
    await kill()
  })()
  await Promise.all([...on.flatMap((n) => [0, 1, 2, 3].map((w) => writer(n, w))), killer])
  const order = okTimes.map((t, i) => [t, okSentTimes[i]] as const).sort((x, y) => x[0] - y[0])
  const firstAfter = order.find(([, s]) => s >= killedAt)
  const gaps = (from: number, to: number) => {
    let longest = 0
    let prev = from
    for (const [t] of order) {
      if (t < from) continue
      if (t > to) break
      longest = Math.max(longest, t - prev)
      prev = t
    }
    return Math.max(longest, Math.min(to, end) - prev)
  }
  const firstOkAfterKillMs = firstAfter ? firstAfter[0] - killedAt : Infinity
  const longestGapAfterMs = gaps(killedAt, end)
  const longestGapBeforeMs = gaps(start + 500, killedAt)
  const describe =
    `${acked.length} creates acknowledged, ${errors} failed${statuses.size ? ` (${[...statuses].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}; ` +
    `first 201 of a create sent after the kill ${fmt(firstOkAfterKillMs, 0)} ms after it; longest time without a 201: ${fmt(longestGapAfterMs, 0)} ms after the kill, ${fmt(longestGapBeforeMs, 0)} ms before`
  const ackedSentAfterKill = okSentTimes.filter((t) => t >= killedAt).length
  return { acked, refused, errors, ackedSentAfterKill, firstOkAfterKillMs, longestGapAfterMs, longestGapBeforeMs, describe }
}

/** The cumulative buckets of a histogram of etcd's /metrics, summed over the running members. */
async function etcdBuckets(etcd: EtcdCluster, name: string): Promise<Map<number, number>> {
  const sum = new Map<number, number>()
  for (const m of etcd.members) {
    if (!m.isRunning()) continue
    const text = await (await fetch(`${m.clientUrl}/metrics`)).text()
    for (const x of text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm'))) {
      const le = x[1] === '+Inf' ? Infinity : Number(x[1])
      sum.set(le, (sum.get(le) ?? 0) + Number(x[2]))
    }
  }
  return sum
}

/** The cumulative buckets of edgeplane_cluster_apply_lag_seconds summed over `nodes` (upper bound in s -> count). */
async function lagBuckets(nodes: readonly Node[], token: string): Promise<Map<number, number>> {
  const sum = new Map<number, number>()
  for (const n of nodes) {
    const text = (await call(n.url, 'GET', '/metrics', token)).body as string
    for (const m of String(text).matchAll(/^edgeplane_cluster_apply_lag_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} (\d+)/gm)) {
      const le = m[1] === '+Inf' ? Infinity : Number(m[1])
      sum.set(le, (sum.get(le) ?? 0) + Number(m[2]))
    }
  }
  return sum
}

/**
 * The observations between two readings of a histogram: the bucket its p99 falls in, and p50 and p99 estimated as
 * Prometheus' histogram_quantile does (linear within the bucket), in ms.
 */
function describeBuckets(before: Map<number, number>, after: Map<number, number>): { p99Bucket: string; p50Ms: number; p99Ms: number; describe: string } {
  const les = [...after.keys()].sort((x, y) => x - y)
  const delta = les.map((le) => [le, (after.get(le) ?? 0) - (before.get(le) ?? 0)] as const)
  const total = delta.length ? delta[delta.length - 1][1] : 0
  if (total === 0) return { p99Bucket: 'n/a', p50Ms: NaN, p99Ms: NaN, describe: 'none observed (metric missing?)' }
  const ms = (le: number) => (le === Infinity ? '+Inf' : `${+(le * 1000).toFixed(1)} ms`)
  const quantile = (q: number) => {
    const rank = q * total
    const i = delta.findIndex(([, count]) => count >= rank)
    const [le, count] = delta[i]
    const [lower, below] = i > 0 ? delta[i - 1] : [0, 0]
    if (le === Infinity) return lower * 1000
    return (lower + ((le - lower) * (rank - below)) / Math.max(1, count - below)) * 1000
  }
  const p99Bound = delta.find(([, count]) => count >= 0.99 * total)![0]
  const shares = delta.filter(([le]) => le <= 0.1).map(([le, count]) => `${((100 * count) / total).toFixed(1)}% ≤ ${ms(le)}`).join(', ')
  const p50Ms = quantile(0.5)
  const p99Ms = quantile(0.99)
  return {
    p99Bucket: `p99 bucket ≤ ${ms(p99Bound)}`,
    p50Ms,
    p99Ms,
    describe: `${total} observed, p50 ~${fmt(p50Ms, 1)} ms, p99 ~${fmt(p99Ms, 1)} ms (bucket ≤ ${ms(p99Bound)}); ${shares}`,
  }
}

/** How many identities of these names `node` has. */
async function presentOn(node: Node, token: string, names: readonly string[]): Promise<number> {
  let present = 0
  for (const name of names) {
    const r = await call(node.url, 'GET', `${MGMT}/identities?filter=${encodeURIComponent(`name="${name}"`)}`, token)
    if (r.status === 200 && r.body.data.length > 0) present++
  }
  return present
}

/** For each node, how many of `ids` it does not have (each looked up by id). */
async function missingOn(nodes: readonly Node[], token: string, ids: readonly string[]): Promise<number[]> {
  return Promise.all(
    nodes.map(async (n) => {
      let missing = 0
      for (let i = 0; i < ids.length; i += 20) {
        const answers = await Promise.all(ids.slice(i, i + 20).map((id) => call(n.url, 'GET', `${MGMT}/identities/${id}`, token)))
        missing += answers.filter((r) => r.status !== 200).length
      }
      return missing
    }),
  )
}
