/**
 * `bun run bench`: the benchmark harness. Starts a real controller as a child process, and two baseline servers
 * (bench/floor-server.ts: a bare node:tls -> node:http bridge, the transport floor, and Bun.serve with TLS, the
 * runtime's ceiling), loads them with wrk when it is installed (bench/wrk-bench.lua; otherwise the in-process client,
 * and the run says so), and reads each server's CPU time from /proc around each figure. Every figure prints req/s,
 * p50/p99 latency and the server's CPU per request; ratios between figures are computed from CPU per request, which
 * holds when other processes share the machine (bench/README.md). Figures:
 * - GET /version on the controller, the bridge and Bun.serve (50 connections)
 * - authenticated GET /current-identity (zt-session header, one API session per wrk thread)
 * - password logins against raw argon2id verifies with the same parameters (CPU per login vs CPU per verify)
 * - durable identity creates with 1 and with 50 connections
 * - ott enrollments against raw certificate issuance, certificate logins over new TLS connections against raw mTLS
 *   handshakes (bench/bench-pki.ts)
 * - the policy scale benchmark (bench/policy-scale.ts) on the real controller's 'small' scenario
 * It ends with the targets of issue 14 (part 2), each with its measured ratio and met / not met.
 * `bun run bench policy <scenario>` runs only the policy scale benchmark on a scenario of bench/policy-scenario.ts
 * (small, medium, large, large-posture, many-services, baseline); 'large' loads 100,000 identities and takes several
 * minutes; 'large-posture' is 'large' with posture checks on a quarter of the service policies.
 * `bun run bench transports` runs only the transport comparison (bench/bench-transports.ts): the modes of
 * bench/floor-server.ts and the controller, keep-alive and on new mTLS connections, in turns.
 * `bun run bench logins` runs only the password login and identity create figures and their targets (BENCH_PROFILE=DIR:
 * the controller writes a CPU profile there).
 * `bun run bench cold-start DIR [starts]` times cold starts on a data directory kept by a policy run (bench/cold-start.ts;
 * the compiled binary when it is built, BENCH_COLD_SOURCE=1 for the source; BENCH_MAIN_B: A/B in turns against another
 * checkout).
 * `bun run bench soak [minutes]` runs only the soak (bench/bench-soak.ts): mixed load at a steady rate, resident memory
 * and p99 sampled each minute (10 minutes unless told; SOAK_RATE requests per second, default 100).
 * `bun run bench cluster` runs only the cluster figures (bench/bench-cluster.ts): a 3-member etcd and 3 nodes against one
 * node, in one run (issue 23); not part of the default run (it needs etcd and takes minutes). BENCH_CATCHUP_WRITES
 * (default 20,000) and BENCH_LAG_SAMPLES (default 300).
 * `bun run bench digest [records]` runs only the state digest figures of GET /cluster (bench/bench-digest.ts) on a store
 * of that many records (default 200,000); no server or etcd.
 * `bun run bench reads` runs only the four read figures (bridge, Bun.serve, GET /version, GET /current-identity).
 * `bun run bench control [scenario]` runs only the control plane figures (bench/bench-control.ts, issue 30): 1,000
 * emulated routers on one node, the full data model sync of a loaded scenario ('large' unless told; 'medium' is
 * quicker) to one and to 100 routers, and policy changes to 100 subscribed routers; with BENCH_ZITI=/path/to/ziti the
 * real controller too, and the ratios. Not part of the default run: it takes minutes (5-10 at 'large', 15-20 more
 * with the real controller).
 * Environment: BENCH_SECONDS (per figure, default 3); BENCH_ROUNDS (rounds of the GET /version figures, default 3);
 * BENCH_NO_WRK=1 uses the in-process client even with wrk.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hash, verify } from '@node-rs/argon2'
import { ARGON2_PARAMS } from '../src/auth/auth-password.ts'
import { startStealReading, withCpuOf } from './bench-cpu.ts'
import { startFloor } from './bench-floor.ts'
import { printFigure, runLoad } from './bench-load.ts'
import { loadGeneratorNote, measure, type LoadSpec, type Measured } from './bench-measure.ts'
import { benchCertLogin, benchEnrollment } from './bench-pki.ts'
import { runPolicyScale, scenarioByName, startController, type Controller } from './policy-scale.ts'
import { benchOidc } from './bench-oidc.ts'
import { runSoak } from './bench-soak.ts'
import { runTransports } from './bench-transports.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const PASSWORD = 'bench-pass-1'
/** Keep-alive connections of the read figures (as in issue 14's measurements). */
const READ_CONNECTIONS = 50
const LOGIN_CONNECTIONS = 4
/**
 * Load on each read server before its rounds: the JIT compiles the request path for seconds (its compiler threads'
 * CPU counts as the server's), far longer for the controller's code than for the bridge's few lines.
 */
const WARMUP_MS = 3000
/** Rounds of the figures measured in turns: the read figures, verifies and logins, creates with 1 and 50 clients. */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))

const tls = { rejectUnauthorized: false }
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), tls } as RequestInit)

/** One target of issue 14 part 2: `value` compared with `limit` ('<=' or '>='). */
interface Target {
  name: string
  value: number
  op: '<=' | '>='
  limit: number
  /** How the value was computed. */
  from: string
}

function printServerFigure(name: string, m: Measured, extra = ''): void {
  const errors = m.errors ? `, ${m.errors} errors` : ''
  const steal = m.stealPercent >= 1 ? `, steal ${m.stealPercent.toFixed(0)}%` : ''
  printFigure(name, m.perSecond, 'req/s',
    `${m.cpuUsPerRequest.toFixed(0).padStart(6)} µs CPU/req, p50 ${m.p50Ms.toFixed(2)} ms, p99 ${m.p99Ms.toFixed(2)} ms${errors}${steal}${extra ? `, ${extra}` : ''}`)
}

/** An API session token of the admin, through `api` (the client or the management API). */
async function login(api: string): Promise<string> {
  const res = await post(`${api}/authenticate?method=password`, { username: 'admin', password: PASSWORD })
  return ((await res.json()) as { data: { token: string } }).data.token
}

/** The run with the median CPU per request. */
function medianByCpu(runs: readonly Measured[]): Measured {
  return [...runs].sort((a, b) => a.cpuUsPerRequest - b.cpuUsPerRequest)[Math.floor(runs.length / 2)]
}

/** The median over rounds of a's CPU per request divided by b's in the same round. */
function cpuRatio(a: readonly Measured[], b: readonly Measured[]): number {
  const ratios = a.map((m, i) => m.cpuUsPerRequest / b[i].cpuUsPerRequest).sort((x, y) => x - y)
  return ratios[Math.floor(ratios.length / 2)]
}

const joined = (...parts: string[]) => parts.filter(Boolean).join(', ')

/** "min–max" of a value over runs. */
function rangeOf(runs: readonly Measured[], value: (m: Measured) => number, digits: number): string {
  const values = runs.map(value)
  return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`
}

/** The spread of a figure measured in turns: CPU per request and req/s over the rounds. */
function spread(runs: readonly Measured[]): string {
  return ROUNDS > 1 ? `${ROUNDS} rounds: CPU/req ${rangeOf(runs, (m) => m.cpuUsPerRequest, 0)} µs, req/s ${rangeOf(runs, (m) => m.perSecond, 0)}` : ''
}

/** The whole run, or (`readsOnly`) only the four read figures measured in turns. */
async function main(readsOnly = false): Promise<Target[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-'))
  const server = await startController(dataDir, PASSWORD)
  const mgmt = `${server.url}/edge/management/v1`
  const client = `${server.url}/edge/client/v1`
  const durationMs = SECONDS * 1000
  const targets: Target[] = []
  try {
    console.log(`edgeplane benchmark: ${SECONDS}s per figure, servers in child processes, ${navigator.hardwareConcurrency} cores`)
    console.log(`${loadGeneratorNote()}; CPU/req is the server process's user + system time (/proc) per answered request\n`)
    const adminToken = await login(mgmt)
    const versionBody = await (await fetch(`${server.url}/version`, { tls } as RequestInit)).text()
    const reads = (url: string, extra: Partial<LoadSpec> = {}): LoadSpec => ({ url, connections: READ_CONNECTIONS, durationMs, ...extra })
    const sessions = [await login(client), await login(client)]

    // the baselines run in their own processes. The four read figures are warmed up (TLS sessions, JIT), then measured
    // in turns, ROUNDS times, so a burst of other work on the machine falls on all of them. Each figure printed is its
    // round with the median CPU per request (with the range over the rounds); each ratio is the median of the ratios
    // within a round, where the two figures ran seconds apart.
    const bridge = await startFloor('bridge', dataDir, versionBody)
    const bun = await startFloor('bun', dataDir, versionBody)
    let rounds: Measured[][]
    try {
      const servers = [
        { pid: bridge.pid, spec: reads(`${bridge.url}/version`) },
        { pid: bun.pid, spec: reads(`${bun.url}/version`) },
        { pid: server.pid, spec: reads(`${server.url}/version`) },
        { pid: server.pid, spec: reads(`${client}/current-identity`, { sessions }) },
      ]
      for (const s of servers) await measure(s.pid, { ...s.spec, durationMs: WARMUP_MS })
      rounds = servers.map(() => [])
      for (let r = 0; r < ROUNDS; r++) {
        for (const [i, s] of servers.entries()) rounds[i].push(await measure(s.pid, s.spec))
      }
    } finally {
      await Promise.all([bridge.stop(), bun.stop()])
    }
    const [bridgeRounds, bunRounds, versionRounds, currentRounds] = rounds
    const versionVsBridge = cpuRatio(versionRounds, bridgeRounds)
    const currentVsVersion = cpuRatio(currentRounds, versionRounds)
    printServerFigure(`floor: bare node:tls -> node:http bridge, c=${READ_CONNECTIONS}`, medianByCpu(bridgeRounds), spread(bridgeRounds))
    printServerFigure(`ceiling: Bun.serve with TLS, c=${READ_CONNECTIONS}`, medianByCpu(bunRounds), spread(bunRounds))
    printServerFigure(`GET /version, c=${READ_CONNECTIONS}`, medianByCpu(versionRounds),
      joined(`CPU ${versionVsBridge.toFixed(2)}× bridge, ${cpuRatio(versionRounds, bunRounds).toFixed(2)}× Bun.serve`, spread(versionRounds)))
    printServerFigure(`authenticated GET /current-identity, c=${READ_CONNECTIONS}`, medianByCpu(currentRounds),
      joined(`CPU ${currentVsVersion.toFixed(2)}× GET /version, ${cpuRatio(currentRounds, bridgeRounds).toFixed(2)}× bridge`, spread(currentRounds)))
    targets.push({ name: 'GET /version CPU/req vs bare bridge', value: versionVsBridge, op: '<=', limit: 1.25, from: 'CPU/req' })
    targets.push({ name: 'GET /current-identity CPU/req vs GET /version', value: currentVsVersion, op: '<=', limit: 1.3, from: 'CPU/req' })
    if (readsOnly) return targets

    targets.push(...(await loginAndCreateFigures(server, adminToken, durationMs)))

    const pkiTarget = { url: server.url, pid: server.pid, dataDir, adminToken, durationMs }
    await benchEnrollment(pkiTarget)
    const certLogin = await benchCertLogin(pkiTarget)
    targets.push({ name: 'certificate logins (new TLS connection) vs raw mTLS handshakes', value: certLogin.cpuRatio, op: '>=', limit: 0.6, from: 'handshake CPU / login CPU' })

    console.log('')
    targets.push(...(await oidcFigures(server, adminToken, durationMs)))

    const extra = await loadExtraBenches()
    for (const f of extra) printFigure(f.name, f.value, f.unit)
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return targets
}

/**
 * Password logins against raw argon2id verifies with the same parameters, and durable identity creates with 1 and 50
 * connections: their figures, and the targets they measure. Each pair (verifies and logins; creates with 1 and with 50
 * clients) is measured in turns, ROUNDS times, as the read figures are: a burst of other work on the machine falls on
 * both sides of a ratio.
 */
async function loginAndCreateFigures(server: Controller, adminToken: string, durationMs: number): Promise<Target[]> {
  const client = `${server.url}/edge/client/v1`
  const mgmt = `${server.url}/edge/management/v1`
  // raw verifies run in this process (the argon2 thread pool): its own CPU per verify is the baseline
  const phc = await hash(PASSWORD, ARGON2_PARAMS)
  const rawVerifies = async (): Promise<Measured> => {
    const steal = startStealReading()
    const { result, cpuSeconds } = await withCpuOf(process.pid, () => runLoad({ concurrency: LOGIN_CONNECTIONS, durationMs, request: async () => verify(phc, PASSWORD) }))
    return { ...result, requests: result.count, cpuSeconds, cpuUsPerRequest: (cpuSeconds * 1e6) / result.count, stealPercent: steal() }
  }
  const logins: LoadSpec = {
    url: `${client}/authenticate?method=password`,
    method: 'POST',
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    connections: LOGIN_CONNECTIONS,
    durationMs,
  }
  const creates = (c: number, round: number): LoadSpec => ({
    url: `${mgmt}/identities`,
    method: 'POST',
    body: JSON.stringify({ name: `bench-c${c}-r${round}-{n}`, type: 'User', isAdmin: false, roleAttributes: ['bench'] }),
    sessions: [adminToken],
    connections: c,
    durationMs,
  })
  const verifyRounds: Measured[] = []
  const loginRounds: Measured[] = []
  const createRounds: [Measured[], Measured[]] = [[], []]
  // warmed up as the read figures are: the login and create paths run cold (interpreted, not yet compiled) at first,
  // and at a few logins per second a 3 s figure would be mostly warm-up
  await measure(server.pid, { ...logins, durationMs: 1000 })
  for (const c of [1, 50]) await measure(server.pid, { ...creates(c, -1), durationMs: 1000 })
  for (let r = 0; r < ROUNDS; r++) {
    verifyRounds.push(await rawVerifies())
    loginRounds.push(await measure(server.pid, logins))
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, c] of [1, 50].entries()) createRounds[i].push(await measure(server.pid, creates(c, r)))
  }
  const verify1 = medianByCpu(verifyRounds)
  printFigure(`raw argon2id verifies (same parameters), c=${LOGIN_CONNECTIONS}`, verify1.perSecond, 'op/s',
    joined(`${verify1.cpuUsPerRequest.toFixed(0).padStart(6)} µs CPU/op (this process), p50 ${verify1.p50Ms.toFixed(2)} ms`, spread(verifyRounds)))
  const loginVsVerify = cpuRatio(loginRounds, verifyRounds)
  printServerFigure(`password logins, c=${LOGIN_CONNECTIONS}`, medianByCpu(loginRounds), joined(`CPU ${loginVsVerify.toFixed(2)}× one verify`, spread(loginRounds)))
  const [one, fifty] = createRounds
  const cpu50vs1 = cpuRatio(fifty, one)
  const throughputs = fifty.map((m, i) => m.perSecond / one[i].perSecond).sort((a, b) => a - b)
  const throughput50vs1 = throughputs[Math.floor(throughputs.length / 2)]
  printServerFigure('durable identity creates, c=1', medianByCpu(one), spread(one))
  printServerFigure('durable identity creates, c=50', medianByCpu(fifty),
    joined(`CPU ${cpu50vs1.toFixed(2)}× c=1, throughput ${throughput50vs1.toFixed(2)}× c=1`, spread(fifty)))
  return [
    { name: 'password login CPU vs one argon2id verify', value: loginVsVerify, op: '<=', limit: 1.1, from: 'CPU/op' },
    { name: 'identity create CPU/req, 50 clients vs 1', value: cpu50vs1, op: '<=', limit: 0.5, from: 'CPU/req' },
    { name: 'identity create throughput, 50 clients vs 1', value: throughput50vs1, op: '>=', limit: 8, from: 'req/s' },
  ]
}

/**
 * `bun run bench logins`: only the password login and identity create figures, on a controller of their own
 * (BENCH_PROFILE=DIR: the controller writes a CPU profile there, in markdown, when it stops).
 */
async function loginsOnly(): Promise<Target[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-'))
  const profileDir = process.env.BENCH_PROFILE
  const server = await startController(dataDir, PASSWORD, profileDir ? ['--cpu-prof-md', `--cpu-prof-dir=${profileDir}`] : [])
  try {
    console.log(`edgeplane benchmark, logins and creates: ${SECONDS}s per figure, ${navigator.hardwareConcurrency} cores`)
    console.log(`${loadGeneratorNote()}; CPU/req is the server process's user + system time (/proc) per answered request\n`)
    return await loginAndCreateFigures(server, await login(`${server.url}/edge/management/v1`), SECONDS * 1000)
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The OIDC figures (bench/bench-oidc.ts) on `server`, and the target of issue 22 they measure. */
async function oidcFigures(server: Controller, adminToken: string, durationMs: number): Promise<Target[]> {
  const oidc = await benchOidc(
    { url: server.url, pid: server.pid, adminToken, adminPassword: PASSWORD, durationMs, warmupMs: WARMUP_MS, rounds: ROUNDS, connections: READ_CONNECTIONS },
    printServerFigure,
  )
  return [{ name: 'GET /current-identity with a bearer token vs with zt-session', value: oidc.bearerVsSession, op: '<=', limit: 1.1, from: 'CPU/req' }]
}

/** `bun run bench oidc`: only the OIDC figures, on a controller of their own. */
async function oidcOnly(): Promise<Target[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-'))
  const server = await startController(dataDir, PASSWORD)
  try {
    console.log(`edgeplane benchmark, OIDC: ${SECONDS}s per figure, ${ROUNDS} rounds, ${navigator.hardwareConcurrency} cores`)
    console.log(`${loadGeneratorNote()}; CPU/req is the server process's user + system time (/proc) per answered request\n`)
    return await oidcFigures(server, await login(`${server.url}/edge/management/v1`), SECONDS * 1000)
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The targets of issue 14 part 2, measured or not, with met / not met. */
function printTargets(targets: readonly Target[], policyNote = true): void {
  console.log('\ntargets (issue 14, part 2), ratios from this run:')
  for (const t of targets) {
    const met = Number.isFinite(t.value) && (t.op === '<=' ? t.value <= t.limit : t.value >= t.limit)
    console.log(`  ${t.name.padEnd(66)} ${t.value.toFixed(2).padStart(6)} (target ${t.op} ${t.limit}, ${t.from})  ${met ? 'met' : 'NOT MET'}`)
  }
  if (!policyNote) return
  console.log('  policy targets at "large" (services p99 <= 1 ms, policy change visible p99 <= 10 ms, cold start <= 1 s,')
  console.log('  resident memory <= 250 MiB): not measured by this run; `bun run bench policy large` prints them')
}

/** Benchmarks of other parts that run without the server (router config validation). */
async function loadExtraBenches(): Promise<{ name: string; value: number; unit: string }[]> {
  try {
    const mod = (await import('./router-config-bench.ts')) as { benchRouterConfig?: () => Promise<{ name: string; value: number; unit: string }[]> }
    return mod.benchRouterConfig ? await mod.benchRouterConfig() : []
  } catch (e) {
    console.log(`(router-config benchmark unavailable: ${(e as Error).message})`)
    return []
  }
}

if (process.argv[2] === 'policy') {
  await runPolicyScale({ spec: scenarioByName(process.argv[3] ?? 'small'), seconds: SECONDS })
} else if (process.argv[2] === 'transports') {
  await runTransports({ seconds: SECONDS, rounds: ROUNDS })
} else if (process.argv[2] === 'cold-start') {
  const { runColdStarts } = await import('./cold-start.ts')
  await runColdStarts(process.argv[3] ?? '', Number(process.argv[4] ?? 5))
} else if (process.argv[2] === 'soak') {
  await runSoak({
    minutes: Number(process.argv[3] ?? 10),
    rate: Number(process.env.SOAK_RATE ?? 100),
    sampleSeconds: Number(process.env.SOAK_SAMPLE_SECONDS ?? 60),
  })
} else if (process.argv[2] === 'cluster') {
  const { runClusterBench } = await import('./bench-cluster.ts')
  await runClusterBench({
    seconds: SECONDS,
    rounds: ROUNDS,
    catchUpWrites: Number(process.env.BENCH_CATCHUP_WRITES ?? 20_000),
    lagSamples: Number(process.env.BENCH_LAG_SAMPLES ?? 300),
  })
} else if (process.argv[2] === 'digest') {
  const { runDigestBench } = await import('./bench-digest.ts')
  await runDigestBench(Number(process.argv[3] ?? 200_000))
} else if (process.argv[2] === 'control') {
  const { runControlBench } = await import('./bench-control.ts')
  const parts = new Set((process.env.BENCH_CONTROL_PARTS ?? 'connect,sync').split(',').map((s) => s.trim())) as Set<'connect' | 'sync'>
  await runControlBench({ scenario: scenarioByName(process.argv[3] ?? 'large'), zitiScenario: scenarioByName(process.env.BENCH_ZITI_SCENARIO ?? 'medium'), parts })
} else if (process.argv[2] === 'reads') {
  printTargets(await main(true))
} else if (process.argv[2] === 'logins') {
  printTargets(await loginsOnly(), false)
} else if (process.argv[2] === 'oidc') {
  printTargets(await oidcOnly(), false)
} else {
  const targets = await main()
  console.log('')
  await runPolicyScale({ spec: scenarioByName('small'), seconds: Math.min(SECONDS, 2) })
  printTargets(targets)
}
