/**
 * `bun run bench control [scenario]`: the routers' control plane at scale (issue 30), against controllers in child
 * processes (`edgeplane run` on a temporary data directory; with BENCH_ZITI the real controller too), with emulated
 * routers in this process (bench/bench-router.ts: real TLS connections with enrolled client certificates, the hello,
 * heartbeat answers, the ClientHello, data model subscriptions). CPU and memory are read from /proc. Figures:
 * 1. ROUTERS (1,000) routers connected to one node: enrolled through the API in parallel, connected (the first 20 one
 *    at a time, the rest 50 at once) up to their full state, then held: the controller's CPU per connect and per
 *    second idle, its resident memory (anonymous / file), connect times p50/p99.
 * 2. Full data model sync of a loaded scenario (bench/policy-scenario.ts, loaded as the policy benchmark loads it;
 *    `large` unless told): one router subscribes with index 0 (subscribe -> DataState received -> decoded, its bytes
 *    and events, the controller's CPU), a second one at the same index, then SYNC_ROUTERS (100) at once at a new
 *    index (CPU per router: is the full state encoded once?).
 * 3. A service policy change to those routers: CHANGES (50) PATCHes of a policy's identity roles through the
 *    Management API, each swapping a tenth of the identities for another (and, as a second figure, one identity for
 *    another); per change, from the request's start and from its 2xx to the last router's receipt of the change set
 *    (p50/p99/max; target p99 <= 50 ms), and the change set's bytes.
 * With BENCH_ZITI=/path/to/ziti the real controller runs figures 1 to 3 too (figures 2 and 3 on BENCH_ZITI_SCENARIO,
 * `medium` unless told, which edgeplane then also runs if it is not the main scenario), and the ratios are printed.
 * Environment: BENCH_CONTROL_ROUTERS, BENCH_HOLD_SECONDS (30), BENCH_SYNC_ROUTERS, BENCH_CHANGES,
 * BENCH_CONNECT_CONCURRENCY (50), BENCH_CONTROL_PARTS (`connect,sync`, default both), BENCH_PROFILE=DIR (each edgeplane
 * controller writes a CPU profile, markdown, there when it stops).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fromBinary } from '@bufbuild/protobuf'
import { ContentType, DataStateSchema } from '../src/control/pb/edge_ctrl_pb.ts'
import { cpuSecondsOf, startStealReading } from './bench-cpu.ts'
import { BenchRouter, createEdgeRouters, enrollEdgeRouters, type DataModelFrame, type EnrolledRouter } from './bench-router.ts'
import { startZiti, zitiBinary, type ControlTarget } from './bench-ziti.ts'
import { ADMIN_PASSWORD, Api, loadScenario, memoryOf, pool, scenarioByName, startController } from './policy-scale.ts'
import { buildScenario, type ScenarioSpec } from './policy-scenario.ts'

const num = (name: string, fallback: number) => Math.max(1, Number(process.env[name] ?? fallback) || fallback)
const ROUTERS = num('BENCH_CONTROL_ROUTERS', 1000)
const HOLD_S = num('BENCH_HOLD_SECONDS', 30)
const SYNC_ROUTERS = num('BENCH_SYNC_ROUTERS', 100)
const CHANGES = num('BENCH_CHANGES', 50)
const CONNECT_CONCURRENCY = num('BENCH_CONNECT_CONCURRENCY', 50)
/** Routers connected one at a time before the rest connect CONNECT_CONCURRENCY at once. */
const SEQUENTIAL_CONNECTS = 20
/** The target of issue 30: a policy change reaches every subscribed router within this, at p99. */
const CHANGE_TARGET_MS = 50
/** After the last router has a change set, how long no other may come before the change counts as delivered. */
const QUIET_MS = 30

// ---------------------------------------------------------------------------------------------------------------
// measuring

interface Latencies {
  count: number
  p50: number
  p99: number
  max: number
}

/** p50 / p99 / max of `values` (p99 of fewer than 100 values is one of the largest: with 50, the largest). */
export function latencies(values: readonly number[]): Latencies {
  const s = [...values].sort((a, b) => a - b)
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(s.length * q))] : NaN)
  return { count: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? NaN }
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-')
const ms = (n: number) => (!Number.isFinite(n) ? '-' : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2))
const lat = (l: Latencies) => `${ms(l.p50)} / ${ms(l.p99)} ms (max ${ms(l.max)})`
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`
const cpuOf = (pid: number) => cpuSecondsOf(pid) ?? NaN

/**
 * CPU seconds of `pid`'s threads alive now, to the nanosecond (the first field of /proc/<pid>/task/<tid>/schedstat):
 * for figures of tens of milliseconds, where cpuOf's clock ticks (10 ms) are too coarse. Threads that exit take their
 * time with them, so only deltas over a short span are read with it.
 */
function preciseCpuOf(pid: number): number {
  try {
    let ns = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    return ns / 1e9
  } catch {
    return NaN
  }
}

/** CPU seconds `pids` used in each `everyMs` interval until stopped (one array per pid). */
function sampleCpu(pids: readonly number[], everyMs: number): () => number[][] {
  const series: number[][] = pids.map(() => [])
  let last = pids.map(cpuOf)
  const timer = setInterval(() => {
    const now = pids.map(cpuOf)
    now.forEach((v, i) => series[i].push(v - last[i]))
    last = now
  }, everyMs)
  return () => {
    clearInterval(timer)
    return series
  }
}

/**
 * How late this process's event loop runs a 5 ms timer, sampled until stopped: the receipt times of frames are taken
 * on this loop, so its lateness bounds how much the load generator adds to a measured time.
 */
function startLagMonitor(): () => Latencies {
  const lags: number[] = []
  let expected = performance.now() + 5
  const timer = setInterval(() => {
    const now = performance.now()
    lags.push(Math.max(0, now - expected))
    expected = now + 5
  }, 5)
  return () => {
    clearInterval(timer)
    return latencies(lags)
  }
}

/** Runs `work`; answers its result, its wall time and the CPU seconds of the controller and of this process. */
async function timed<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; wallMs: number; cpuS: number; benchCpuS: number }> {
  const [c0, b0, t0] = [cpuOf(pid), cpuOf(process.pid), performance.now()]
  const result = await work()
  return { result, wallMs: performance.now() - t0, cpuS: cpuOf(pid) - c0, benchCpuS: cpuOf(process.pid) - b0 }
}

/** Resolves once `cond()` holds (checked every millisecond), or rejects after `timeoutMs`. */
async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs
  while (!cond()) {
    if (performance.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await Bun.sleep(1)
  }
}

type Memory = NonNullable<ReturnType<typeof memoryOf>>
const memNote = (m: Memory | undefined) => (m ? `${m.rssMiB.toFixed(0)} MiB (${m.anonMiB.toFixed(0)} anon + ${m.fileMiB.toFixed(0)} file; peak ${m.peakMiB.toFixed(0)})` : '-')

// ---------------------------------------------------------------------------------------------------------------
// targets

/** A controller of this checkout in a child process, on a new data directory, the API port also the control port. */
async function startEdgeplane(): Promise<ControlTarget> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-control-'))
  // the control plane's info lines (several per router connecting) are not passed on: thousands of them
  const quiet = (line: string) => line.startsWith('{"level":"info"')
  const profileDir = process.env.BENCH_PROFILE
  const c = await startController(dataDir, ADMIN_PASSWORD, profileDir ? ['--cpu-prof-md', `--cpu-prof-dir=${profileDir}`] : [], undefined, quiet)
  const u = new URL(c.url)
  return {
    name: 'edgeplane', url: c.url, host: u.hostname, port: Number(u.port), pid: c.pid, adminPassword: ADMIN_PASSWORD, loadConcurrency: 48,
    stop: async () => {
      await c.stop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

const mgmtOf = (t: ControlTarget) => new Api(`${t.url}/edge/management/v1`).login('admin', t.adminPassword)
const clientOf = (t: ControlTarget) => new Api(`${t.url}/edge/client/v1`)
const connectRouter = (t: ControlTarget, router: EnrolledRouter) => BenchRouter.connect({ host: t.host, port: t.port, router })

// ---------------------------------------------------------------------------------------------------------------
// figure 1: many routers on one node

export interface ConnectResult {
  routers: number
  enrollS: number
  idleBeforeCpuMsPerS: number
  /** One at a time (the first SEQUENTIAL_CONNECTS): TLS done, channel open (hello answered), full state received. */
  sequential: { tls: Latencies; open: Latencies; ready: Latencies }
  concurrent: { tls: Latencies; open: Latencies; ready: Latencies; wallS: number; cpuS: number; benchCpuS: number; routers: number; benchLag: Latencies; stealPct: number }
  fullStateBytes: number
  idle: { cpuMsPerS: Latencies & { mean: number }; benchCpuMsPerS: number; heartbeats: number; closed: number; seconds: number }
  memory: { before?: Memory; connected?: Memory; held?: Memory; closed?: Memory }
}

async function connectFigure(t: ControlTarget): Promise<ConnectResult> {
  const mgmt = await mgmtOf(t)
  const e0 = performance.now()
  const ids = await createEdgeRouters(mgmt, 'bench-ctrl-er', ROUTERS, 32)
  const enrolled = await enrollEdgeRouters(mgmt, clientOf(t), ids, 16)
  const enrollS = (performance.now() - e0) / 1000
  console.log(`  ${t.name}: ${ROUTERS} edge routers created and enrolled in ${enrollS.toFixed(1)} s (${Math.round(ROUTERS / enrollS)}/s)`)
  // the enrollments' garbage and compilation settle first
  await Bun.sleep(5000)
  const before = memoryOf(t.pid)
  const idleBefore = sampleCpu([t.pid], 1000)
  await Bun.sleep(5000)
  const [beforeSeries] = idleBefore()
  const idleBeforeCpuMsPerS = (beforeSeries.reduce((a, b) => a + b, 0) / beforeSeries.length) * 1000

  const routers: BenchRouter[] = []
  const times = { tls: [] as number[], open: [] as number[], ready: [] as number[] }
  let fullStateBytes = 0
  const connectOne = async (er: EnrolledRouter, into: typeof times) => {
    const r = await connectRouter(t, er)
    r.keepBody = () => false
    routers.push(r)
    // subscribed once the controller has registered the router (its ServerHello), as a router that just connected
    await r.serverHello
    const full = r.next((f) => f.contentType === ContentType.DataStateType, 60_000, 'its full state')
    r.subscribe(`bench-${er.id}`)
    const f = await full
    fullStateBytes = f.bodyBytes
    into.tls.push(r.times.tlsMs! - r.times.startMs)
    into.open.push(r.times.openMs! - r.times.startMs)
    into.ready.push(f.atMs - r.times.startMs)
  }
  const seq = { tls: [] as number[], open: [] as number[], ready: [] as number[] }
  for (const er of enrolled.slice(0, SEQUENTIAL_CONNECTS)) await connectOne(er, seq)
  const rest = enrolled.slice(SEQUENTIAL_CONNECTS)
  const steal = startStealReading()
  const connectLag = startLagMonitor()
  const phase = await timed(t.pid, () => pool(rest, CONNECT_CONCURRENCY, (er) => connectOne(er, times)))
  const benchLag = connectLag()
  const stealPct = steal()
  const connected = memoryOf(t.pid)
  console.log(
    `  ${t.name}: ${routers.length} routers connected and synced; the last ${rest.length} at c=${CONNECT_CONCURRENCY} in ${fmt(phase.wallMs / 1000, 2)} s: ` +
      `controller CPU ${fmt(phase.cpuS, 2)} s (${fmt((100 * phase.cpuS * 1000) / phase.wallMs, 0)}% of a core), this process ${fmt(phase.benchCpuS, 2)} s ` +
      `(${fmt((100 * phase.benchCpuS * 1000) / phase.wallMs, 0)}%)${stealPct >= 1 ? `, steal ${fmt(stealPct, 0)}%` : ''}`,
  )

  await Bun.sleep(2000)
  const hb0 = routers.reduce((a, r) => a + r.heartbeatsAnswered, 0)
  const stopSampling = sampleCpu([t.pid, process.pid], 1000)
  await Bun.sleep(HOLD_S * 1000)
  const [ctrlSeries, benchSeries] = stopSampling()
  const held = memoryOf(t.pid)
  const heartbeats = routers.reduce((a, r) => a + r.heartbeatsAnswered, 0) - hb0
  const closed = routers.filter((r) => r.isClosed).length
  for (const r of routers) r.close()
  await Bun.sleep(5000)
  const closedMemory = memoryOf(t.pid)
  const perS = ctrlSeries.map((s) => s * 1000)
  return {
    routers: routers.length,
    enrollS,
    idleBeforeCpuMsPerS,
    sequential: { tls: latencies(seq.tls), open: latencies(seq.open), ready: latencies(seq.ready) },
    concurrent: { tls: latencies(times.tls), open: latencies(times.open), ready: latencies(times.ready), wallS: phase.wallMs / 1000, cpuS: phase.cpuS, benchCpuS: phase.benchCpuS, routers: rest.length, benchLag, stealPct },
    fullStateBytes,
    idle: {
      cpuMsPerS: { ...latencies(perS), mean: perS.reduce((a, b) => a + b, 0) / perS.length },
      benchCpuMsPerS: (benchSeries.reduce((a, b) => a + b, 0) / benchSeries.length) * 1000,
      heartbeats,
      closed,
      seconds: HOLD_S,
    },
    memory: { before, connected, held, closed: closedMemory },
  }
}

function printConnect(t: string, r: ConnectResult): void {
  const c = r.concurrent
  const rows: [string, string][] = [
    [`controller CPU per connect (${c.routers} routers, c=${CONNECT_CONCURRENCY}, up to the full state)`, `${fmt((c.cpuS * 1000) / c.routers, 2)} ms`],
    ['connect: TLS done / hello answered / full state in, one at a time (p50 / p99)', `${ms(r.sequential.tls.p50)} / ${ms(r.sequential.open.p50)} / ${ms(r.sequential.ready.p50)} ms; p99 ${ms(r.sequential.tls.p99)} / ${ms(r.sequential.open.p99)} / ${ms(r.sequential.ready.p99)} ms`],
    [`connect: TLS done / hello answered / full state in, ${CONNECT_CONCURRENCY} at once (p50 / p99)`, `${ms(c.tls.p50)} / ${ms(c.open.p50)} / ${ms(c.ready.p50)} ms; p99 ${ms(c.tls.p99)} / ${ms(c.open.p99)} / ${ms(c.ready.p99)} ms`],
    ['connect phase: routers/s, controller CPU, this process CPU', `${fmt(c.routers / c.wallS, 0)}/s; ${fmt((100 * c.cpuS) / c.wallS, 0)}% / ${fmt((100 * c.benchCpuS) / c.wallS, 0)}% of a core${c.stealPct >= 1 ? `, steal ${fmt(c.stealPct, 0)}%` : ''}`],
    ['connect phase: this process, a 5 ms timer late by (p50 / p99)', lat(c.benchLag)],
    ['full state at connect (each router)', mib(r.fullStateBytes)],
    [`controller CPU idle, ${r.routers} routers held ${r.idle.seconds} s (mean; p50 / max of 1 s samples)`, `${fmt(r.idle.cpuMsPerS.mean, 1)} ms/s; ${fmt(r.idle.cpuMsPerS.p50, 0)} / ${fmt(r.idle.cpuMsPerS.max, 0)} ms/s`],
    ['controller CPU idle, no router connected (5 s)', `${fmt(r.idleBeforeCpuMsPerS, 1)} ms/s`],
    ['this process CPU while holding (load generator)', `${fmt(r.idle.benchCpuMsPerS, 1)} ms/s; ${r.idle.heartbeats} heartbeats answered, ${r.idle.closed} routers closed`],
    ['controller memory: before connecting', memNote(r.memory.before)],
    ['controller memory: all connected', memNote(r.memory.connected)],
    ['controller memory: after holding', memNote(r.memory.held)],
    ['controller memory: 5 s after every router closed', memNote(r.memory.closed)],
    ['controller memory per router (after holding - after closing; the heap collects when it will)', r.memory.held && r.memory.closed ? `${fmt(((r.memory.held.rssMiB - r.memory.closed.rssMiB) * 1024) / r.routers, 0)} KiB` : '-'],
  ]
  printRows(`figure 1, ${t}: ${r.routers} routers connected to one node (enrolled in ${fmt(r.enrollS, 1)} s)`, rows)
}

// ---------------------------------------------------------------------------------------------------------------
// figures 2 and 3: the full state of a loaded network, and policy changes

interface OneSync {
  timelineId: string
  receivedMs: number
  decodedMs: number
  bytes: number
  events: number
  cpuMs: number
}

export interface SyncResult {
  scenario: string
  loadS: number
  first: OneSync
  second: OneSync
  all: { routers: number; firstMs: number; lastMs: number; cpuMs: number; benchCpuMs: number; bytes: number; peak?: Memory }
  changes: ChangeResult[]
}

interface ChangeResult {
  label: string
  memberships: number
  fromStart: Latencies
  from2xx: Latencies
  /** The request's start to its 2xx. */
  answer: Latencies
  /** The first router's receipt to the last's: the fan-out (the controller's writes, this process's reads). */
  spread: Latencies
  bytes: number
  setsPerChange: number
  cpuMsPerChange: number
  benchCpuMsPerChange: number
  /** How late this process's event loop ran during the changes (startLagMonitor). */
  benchLag: Latencies
  /** Changes the API did not answer with a 2xx (not timed). */
  errors: number
}

async function syncFigures(t: ControlTarget, spec: ScenarioSpec): Promise<SyncResult> {
  const mgmt = await mgmtOf(t)
  const scenario = buildScenario(spec)
  const l0 = performance.now()
  const loaded = await loadScenario(mgmt, scenario, {
    concurrency: t.loadConcurrency,
    add: (figure, value, note) => console.log(`  ${t.name}: ${figure}: ${value} ${note}`),
  })
  const loadS = (performance.now() - l0) / 1000
  // the routers emulated are the scenario's own first edge routers (more are created when it has fewer)
  const ids = loaded.routerIds.slice(0, SYNC_ROUTERS)
  if (ids.length < SYNC_ROUTERS) ids.push(...(await createEdgeRouters(mgmt, 'bench-sync-er', SYNC_ROUTERS - ids.length, 16)))
  const enrolled = await enrollEdgeRouters(mgmt, clientOf(t), ids, 16)
  const routers = await pool(enrolled, 20, async (er) => {
    const r = await connectRouter(t, er)
    r.keepBody = () => false
    await r.synced
    return r
  })
  await Bun.sleep(1000)
  let renewals: ReturnType<typeof setInterval> | undefined
  try {
    // --- one router, then a second at the same index
    const one = async (r: BenchRouter, sid: string): Promise<OneSync> => {
      r.keepBody = (ct) => ct === ContentType.DataStateType
      const full = r.next((f) => f.contentType === ContentType.DataStateType && f.subscriptionId === sid, 300_000, 'the full state')
      const [c0, t0] = [preciseCpuOf(t.pid), performance.now()]
      r.subscribe(sid)
      const f = await full
      const cpuMs = (preciseCpuOf(t.pid) - c0) * 1000
      const state = fromBinary(DataStateSchema, f.body!)
      const decodedMs = performance.now() - t0
      r.keepBody = () => false
      return { timelineId: state.timelineId, receivedMs: f.atMs - t0, decodedMs, bytes: f.bodyBytes, events: state.events.length, cpuMs }
    }
    const first = await one(routers[0], 'bench-one-a')
    console.log(`  ${t.name}: full state ${mib(first.bytes)}, ${first.events} events, in ${ms(first.receivedMs)} ms, decoded at ${ms(first.decodedMs)} ms, controller CPU ${ms(first.cpuMs)} ms`)
    const second = await one(routers[1 % routers.length], 'bench-one-b')

    // --- every router at once, at a new index (a write first: a state encoded for the old index does not serve)
    await mgmt.create('/services', { name: 'bench-rdm-nudge', encryptionRequired: true, roleAttributes: [] })
    await Bun.sleep(500)
    const sids = routers.map((_, i) => `bench-all-${i}`)
    const fulls = routers.map((r, i) => r.next((f) => f.contentType === ContentType.DataStateType && f.subscriptionId === sids[i], 600_000, 'the full state'))
    const allPhase = await timed(t.pid, async () => {
      const t0 = performance.now()
      routers.forEach((r, i) => r.subscribe(sids[i]))
      // renewed as a router renews (before the 300 s run out, or the controllers stop pushing), on the timeline held
      renewals = setInterval(() => routers.forEach((r, i) => r.subscribe(sids[i], { renew: true, timelineId: first.timelineId })), 120_000)
      const got = await Promise.all(fulls)
      return { t0, got }
    })
    const arrivals = allPhase.result.got.map((f) => f.atMs - allPhase.result.t0)
    const all = {
      routers: routers.length,
      firstMs: Math.min(...arrivals),
      lastMs: Math.max(...arrivals),
      cpuMs: allPhase.cpuS * 1000,
      benchCpuMs: allPhase.benchCpuS * 1000,
      bytes: allPhase.result.got[0].bodyBytes,
      peak: memoryOf(t.pid),
    }
    console.log(`  ${t.name}: ${routers.length} full states at once: last in ${ms(all.lastMs)} ms, controller CPU ${ms(all.cpuMs)} ms (${ms(all.cpuMs / routers.length)} ms per router)`)

    // --- policy changes to the subscribed routers
    const received: { atMs: number; bytes: number }[][] = routers.map(() => [])
    routers.forEach((r, i) =>
      r.onDataModel((f: DataModelFrame) => {
        if (f.contentType === ContentType.DataStateChangeSetType && f.subscriptionId === sids[i]) received[i].push({ atMs: f.atMs, bytes: f.bodyBytes })
      }),
    )
    const ia = scenario.attributes.identity
    const [attrA, attrB] = [ia[ia.length - 2], ia[ia.length - 1]]
    const attrsOf = (i: number) => scenario.identities[i].roleAttributes
    const manyMoved = scenario.identities.filter((_, i) => attrsOf(i).includes(attrA) !== attrsOf(i).includes(attrB)).length
    const sa = scenario.attributes.service
    let policyRoles = [`#${attrA}`]
    const policyId = await mgmt.create('/service-policies', {
      name: 'bench-rdm-change', type: 'Dial', semantic: 'AnyOf', postureCheckRoles: [],
      identityRoles: policyRoles, serviceRoles: sa.length ? [`#${sa[sa.length - 1]}`] : ['#all'],
    })
    await until(() => received.every((l) => l.length > 0), 60_000, 'the new policy at every router')
    await Bun.sleep(200)
    const variant = async (label: string, roles: [string[], string[]], memberships: number): Promise<ChangeResult> => {
      const fromStart: number[] = []
      const from2xx: number[] = []
      const answer: number[] = []
      const spread: number[] = []
      let bytes = 0
      let sets = 0
      let errors = 0
      let cpuS = 0
      let benchCpuS = 0
      let lag = startLagMonitor()
      // change -1 moves the policy to the variant's first roles (from whatever the previous variant left): not timed
      for (let k = -1; k < CHANGES; k++) {
        const identityRoles = roles[(k + 1) % 2]
        if (k < 0 && identityRoles.join() === policyRoles.join()) continue
        policyRoles = identityRoles
        const marks = received.map((l) => l.length)
        const [c0, b0] = [preciseCpuOf(t.pid), preciseCpuOf(process.pid)]
        const t0 = performance.now()
        const { res } = await mgmt.send('PATCH', `/service-policies/${policyId}`, { identityRoles })
        const t2xx = performance.now()
        const text = await res.text()
        if (res.status !== 200) {
          // counted, not timed: the change may still be applied later, so the routers settle before the next one
          errors++
          if (errors <= 3) console.log(`  ${t.name}: change ${k}: PATCH answered ${res.status} after ${ms(t2xx - t0)} ms: ${text.slice(0, 200)}`)
          await Bun.sleep(5000)
          continue
        }
        await until(() => received.every((l, i) => l.length > marks[i]), 30_000, `change ${k} at every router`)
        // quiet: a change that came as more than one change set counts at its last
        for (let total = -1; ;) {
          const now = received.reduce((a, l) => a + l.length, 0)
          if (now === total) break
          total = now
          await Bun.sleep(QUIET_MS)
        }
        if (k < 0) {
          lag()
          lag = startLagMonitor()
          continue
        }
        cpuS += preciseCpuOf(t.pid) - c0
        benchCpuS += preciseCpuOf(process.pid) - b0
        const last = Math.max(...received.map((l) => l[l.length - 1].atMs))
        spread.push(last - Math.min(...received.map((l, i) => l[marks[i]].atMs)))
        fromStart.push(last - t0)
        from2xx.push(last - t2xx)
        answer.push(t2xx - t0)
        const mine = received[0].slice(marks[0])
        bytes += mine.reduce((a, x) => a + x.bytes, 0)
        sets += mine.length
      }
      const benchLag = lag()
      const timedCount = Math.max(1, fromStart.length)
      return {
        benchLag, errors, label, memberships, fromStart: latencies(fromStart), from2xx: latencies(from2xx), answer: latencies(answer), spread: latencies(spread), bytes: bytes / timedCount, setsPerChange: sets / timedCount,
        cpuMsPerChange: (cpuS * 1000) / timedCount, benchCpuMsPerChange: (benchCpuS * 1000) / timedCount,
      }
    }
    const [idA, idB] = [loaded.identityIds[1], loaded.identityIds[2]]
    const changes = [
      await variant(`identity roles #${attrA} <-> #${attrB}`, [[`#${attrA}`], [`#${attrB}`]], manyMoved),
      await variant('identity roles @one <-> @another', [[`@${idA}`], [`@${idB}`]], 2),
    ]
    for (const c of changes) console.log(`  ${t.name}: ${c.label}: from 2xx ${lat(c.from2xx)}, from the request ${lat(c.fromStart)}, ${mib(c.bytes)} per change set`)
    return { scenario: spec.name, loadS, first, second, all, changes }
  } finally {
    clearInterval(renewals)
    for (const r of routers) r.close()
  }
}

function printSync(t: string, r: SyncResult): void {
  const a = r.all
  const rows: [string, string][] = [
    ['full state: bytes, events', `${mib(r.first.bytes)}, ${r.first.events} events`],
    ['one router, index 0: subscribe -> DataState in / decoded here', `${ms(r.first.receivedMs)} / ${ms(r.first.decodedMs)} ms`],
    ['  controller CPU for it', `${ms(r.first.cpuMs)} ms`],
    ['a second router, same index: in / decoded, controller CPU', `${ms(r.second.receivedMs)} / ${ms(r.second.decodedMs)} ms, ${ms(r.second.cpuMs)} ms CPU`],
    [`${a.routers} routers at once, a new index: first / last DataState in`, `${ms(a.firstMs)} / ${ms(a.lastMs)} ms (${mib(a.bytes * a.routers)} sent)`],
    ['  controller CPU: all, per router, per router / the first router\'s', `${ms(a.cpuMs)} ms, ${ms(a.cpuMs / a.routers)} ms, ${fmt(a.cpuMs / a.routers / r.first.cpuMs, 2)}`],
    ['  this process CPU (load generator)', `${ms(a.benchCpuMs)} ms`],
    ['  controller memory after', memNote(a.peak)],
  ]
  for (const c of r.changes) {
    const met = (l: Latencies) => (l.p99 <= CHANGE_TARGET_MS ? 'met' : 'NOT MET')
    rows.push(
      [`policy change (${c.label}, ${c.memberships} memberships) x${c.fromStart.count}`,
        `${fmt(c.bytes / 1024, 1)} KiB per change set, ${fmt(c.setsPerChange, 2)} sets per change${c.errors ? `; ${c.errors} changes not answered 2xx (not timed)` : ''}`],
      [`  2xx -> the last of ${a.routers} routers has it (p50 / p99)`, `${lat(c.from2xx)}; target p99 <= ${CHANGE_TARGET_MS} ms: ${met(c.from2xx)}`],
      [`  request start -> the last of ${a.routers} routers has it (p50 / p99)`, `${lat(c.fromStart)}; target p99 <= ${CHANGE_TARGET_MS} ms: ${met(c.fromStart)}`],
      ['  request start -> its 2xx (p50 / p99)', lat(c.answer)],
      [`  the first router has it -> the last of ${a.routers} (p50 / p99)`, lat(c.spread)],
      ['  CPU per change: controller / this process', `${ms(c.cpuMsPerChange)} / ${ms(c.benchCpuMsPerChange)} ms`],
      ['  this process: a 5 ms timer late by (p50 / p99)', lat(c.benchLag)],
    )
  }
  printRows(`figures 2 and 3, ${t}: scenario '${r.scenario}' (loaded in ${fmt(r.loadS, 1)} s)`, rows)
}

// ---------------------------------------------------------------------------------------------------------------
// the run

function printRows(title: string, rows: readonly [string, string][]): void {
  const w = Math.max(...rows.map(([f]) => f.length))
  console.log(`\n${title}`)
  for (const [f, v] of rows) console.log(`  ${f.padEnd(w)}  ${v}`)
}

function printRatios(e: { connect?: ConnectResult; sync?: SyncResult }, z: { connect?: ConnectResult; sync?: SyncResult }): void {
  const rows: [string, string][] = []
  // a ratio of times of which one is negative (a change set in before the 2xx) or zero (CPU under one tick) says nothing
  const ratio = (name: string, a: number, b: number, unit: string) =>
    rows.push([name, `${fmt(a, 2)} / ${fmt(b, 2)} ${unit}${a > 0 && b > 0 ? `: ${fmt(a / b, 2)}` : ''}`])
  if (e.connect && z.connect) {
    const [ec, zc] = [e.connect, z.connect]
    ratio('controller CPU per connect', (ec.concurrent.cpuS * 1000) / ec.concurrent.routers, (zc.concurrent.cpuS * 1000) / zc.concurrent.routers, 'ms')
    ratio(`connect p50, ${CONNECT_CONCURRENCY} at once (to the full state)`, ec.concurrent.ready.p50, zc.concurrent.ready.p50, 'ms')
    ratio(`connect p99, ${CONNECT_CONCURRENCY} at once (to the full state)`, ec.concurrent.ready.p99, zc.concurrent.ready.p99, 'ms')
    ratio('connect p50, one at a time (to the full state)', ec.sequential.ready.p50, zc.sequential.ready.p50, 'ms')
    ratio(`controller CPU idle with ${ec.routers} routers`, ec.idle.cpuMsPerS.mean, zc.idle.cpuMsPerS.mean, 'ms/s')
    if (ec.memory.held && zc.memory.held) ratio(`controller resident memory with ${ec.routers} routers`, ec.memory.held.rssMiB, zc.memory.held.rssMiB, 'MiB')
  }
  if (e.sync && z.sync && e.sync.scenario === z.sync.scenario) {
    const [es, zs] = [e.sync, z.sync]
    ratio('full state bytes', es.first.bytes / 1024, zs.first.bytes / 1024, 'KiB')
    ratio('one router: subscribe -> DataState in', es.first.receivedMs, zs.first.receivedMs, 'ms')
    ratio('one router: controller CPU', es.first.cpuMs, zs.first.cpuMs, 'ms')
    ratio(`${es.all.routers} at once: last DataState in`, es.all.lastMs, zs.all.lastMs, 'ms')
    ratio(`${es.all.routers} at once: controller CPU per router`, es.all.cpuMs / es.all.routers, zs.all.cpuMs / zs.all.routers, 'ms')
    es.changes.forEach((c, i) => {
      const zc = zs.changes[i]
      ratio(`change (${c.label}): 2xx -> last router, p50`, c.from2xx.p50, zc.from2xx.p50, 'ms')
      ratio(`change (${c.label}): 2xx -> last router, p99`, c.from2xx.p99, zc.from2xx.p99, 'ms')
      ratio(`change (${c.label}): request -> last router, p99`, c.fromStart.p99, zc.fromStart.p99, 'ms')
      ratio(`change (${c.label}): controller CPU per change`, c.cpuMsPerChange, zc.cpuMsPerChange, 'ms')
      ratio(`change (${c.label}): bytes per change set`, c.bytes / 1024, zc.bytes / 1024, 'KiB')
    })
  }
  if (rows.length) printRows('edgeplane / the real controller (edgeplane first; ratio < 1: edgeplane needs less)', rows)
}

export interface ControlBenchOptions {
  scenario: ScenarioSpec
  /** The scenario of the comparison with the real controller (figures 2 and 3). */
  zitiScenario: ScenarioSpec
  parts: ReadonlySet<'connect' | 'sync'>
}

/** Runs `fn` on a new target, stopping it afterwards whatever happens. */
async function on<T>(start: () => Promise<ControlTarget>, fn: (t: ControlTarget) => Promise<T>): Promise<T> {
  const t = await start()
  try {
    return await fn(t)
  } catch (e) {
    if (t.logPath) console.log(`  (${t.name}'s log: ${t.logPath}, removed when it stops)`)
    throw e
  } finally {
    await t.stop()
  }
}

export async function runControlBench(opts: ControlBenchOptions): Promise<void> {
  const ziti = zitiBinary()
  const { scenario, zitiScenario, parts } = opts
  console.log(
    `control plane benchmark (issue 30): ${navigator.hardwareConcurrency} cores, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ` +
      `${ROUTERS} routers held ${HOLD_S} s; scenario '${scenario.name}', ${SYNC_ROUTERS} subscribed routers, ${CHANGES} changes per figure; ` +
      `real controller: ${ziti ? `${ziti} (scenario '${zitiScenario.name}')` : 'skipped (BENCH_ZITI=/path/to/ziti runs it)'}`,
  )
  console.log('emulated routers in this process; CPU and memory of the controller from /proc (user + system, every thread)\n')
  const edge: { connect?: ConnectResult; sync?: SyncResult } = {}
  const real: { connect?: ConnectResult; sync?: SyncResult } = {}
  let edgeCompare: SyncResult | undefined
  if (parts.has('connect')) {
    edge.connect = await on(startEdgeplane, connectFigure)
    printConnect('edgeplane', edge.connect)
  }
  if (parts.has('sync')) {
    edge.sync = await on(startEdgeplane, (t) => syncFigures(t, scenario))
    printSync('edgeplane', edge.sync)
  }
  if (ziti) {
    const startReal = () => startZiti(ziti, 'bench-ziti-admin-1')
    if (parts.has('connect')) {
      real.connect = await on(startReal, connectFigure)
      printConnect('the real controller', real.connect)
    }
    if (parts.has('sync')) {
      if (zitiScenario.name !== scenario.name) {
        edgeCompare = await on(startEdgeplane, (t) => syncFigures(t, zitiScenario))
        printSync('edgeplane (for the comparison)', edgeCompare)
      }
      real.sync = await on(startReal, (t) => syncFigures(t, zitiScenario))
      printSync('the real controller', real.sync)
    }
    printRatios({ connect: edge.connect, sync: edgeCompare ?? edge.sync }, real)
  }
}

if (import.meta.main) {
  const scenario = scenarioByName(process.argv[2] ?? 'large')
  const parts = new Set((process.env.BENCH_CONTROL_PARTS ?? 'connect,sync').split(',').map((s) => s.trim())) as Set<'connect' | 'sync'>
  await runControlBench({ scenario, zitiScenario: scenarioByName(process.env.BENCH_ZITI_SCENARIO ?? 'medium'), parts })
}
