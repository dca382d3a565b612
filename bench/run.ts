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
 * `bun run bench cold-start DIR [starts]` times cold starts on a data directory kept by a policy run (bench/cold-start.ts;
 * BENCH_MAIN_B: A/B in turns against another checkout).
 * `bun run bench soak [minutes]` runs only the soak (bench/bench-soak.ts): mixed load at a steady rate, resident memory
 * and p99 sampled each minute (10 minutes unless told; SOAK_RATE requests per second, default 100).
 * Environment: BENCH_SECONDS (per figure, default 3); BENCH_ROUNDS (rounds of the GET /version figures, default 3);
 * BENCH_NO_WRK=1 uses the in-process client even with wrk.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hash, verify } from '@node-rs/argon2'
import { ARGON2_PARAMS } from '../src/auth/auth-password.ts'
import { withCpuOf } from './bench-cpu.ts'
import { startFloor } from './bench-floor.ts'
import { printFigure, runLoad } from './bench-load.ts'
import { loadGeneratorNote, measure, type LoadSpec, type Measured } from './bench-measure.ts'
import { benchCertLogin, benchEnrollment } from './bench-pki.ts'
import { runPolicyScale, scenarioByName, startController } from './policy-scale.ts'
import { runSoak } from './bench-soak.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const PASSWORD = 'bench-pass-1'
/** Keep-alive connections of the read figures (as in issue 14's measurements). */
const READ_CONNECTIONS = 50
const LOGIN_CONNECTIONS = 4
/** Rounds of the three GET /version servers, measured in turns. */
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

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`

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

async function main(): Promise<Target[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-'))
  const server = await startController(dataDir, PASSWORD)
  const mgmt = `${server.url}/edge/management/v1`
  const client = `${server.url}/edge/client/v1`
  const durationMs = SECONDS * 1000
  const targets: Target[] = []
  try {
    console.log(`edgeplane benchmark: ${SECONDS}s per figure, servers in child processes, ${navigator.hardwareConcurrency} cores`)
    console.log(`${loadGeneratorNote()}; CPU/req is the server process's user + system time (/proc) per answered request\n`)
    const login = async (api: string) => {
      const res = await post(`${api}/authenticate?method=password`, { username: 'admin', password: PASSWORD })
      return ((await res.json()) as { data: { token: string } }).data.token
    }
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
      for (const s of servers) await measure(s.pid, { ...s.spec, durationMs: 1000 })
      rounds = servers.map(() => [])
      for (let r = 0; r < ROUNDS; r++) {
        for (const [i, s] of servers.entries()) rounds[i].push(await measure(s.pid, s.spec))
      }
    } finally {
      await Promise.all([bridge.stop(), bun.stop()])
    }
    const [bridgeRounds, bunRounds, versionRounds, currentRounds] = rounds
    const spread = (runs: readonly Measured[]) =>
      ROUNDS > 1 ? `${ROUNDS} rounds: CPU/req ${rangeOf(runs, (m) => m.cpuUsPerRequest, 0)} µs, req/s ${rangeOf(runs, (m) => m.perSecond, 0)}` : ''
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

    // raw verifies run in this process (the argon2 thread pool): its own CPU per verify is the baseline
    const phc = await hash(PASSWORD, ARGON2_PARAMS)
    const verifies = await withCpuOf(process.pid, () => runLoad({ concurrency: LOGIN_CONNECTIONS, durationMs, request: async () => verify(phc, PASSWORD) }))
    const cpuPerVerifyUs = (verifies.cpuSeconds * 1e6) / verifies.result.count
    printFigure(`raw argon2id verifies (same parameters), c=${LOGIN_CONNECTIONS}`, verifies.result.perSecond, 'op/s',
      `${cpuPerVerifyUs.toFixed(0).padStart(6)} µs CPU/op (this process), p50 ${verifies.result.p50Ms.toFixed(2)} ms`)
    const logins = await measure(server.pid, {
      url: `${client}/authenticate?method=password`,
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
      connections: LOGIN_CONNECTIONS,
      durationMs,
    })
    printServerFigure(`password logins, c=${LOGIN_CONNECTIONS}`, logins, `CPU ${ratio(logins.cpuUsPerRequest, cpuPerVerifyUs)} one verify`)
    targets.push({ name: 'password login CPU vs one argon2id verify', value: logins.cpuUsPerRequest / cpuPerVerifyUs, op: '<=', limit: 1.1, from: 'CPU/op' })

    const creates: Measured[] = []
    for (const c of [1, 50]) {
      const body = JSON.stringify({ name: `bench-c${c}-{n}`, type: 'User', isAdmin: false, roleAttributes: ['bench'] })
      const res = await measure(server.pid, { url: `${mgmt}/identities`, method: 'POST', body, sessions: [adminToken], connections: c, durationMs })
      creates.push(res)
      printServerFigure(`durable identity creates, c=${c}`, res,
        c === 1 ? '' : `CPU ${ratio(res.cpuUsPerRequest, creates[0].cpuUsPerRequest)} c=1, throughput ${ratio(res.perSecond, creates[0].perSecond)} c=1`)
    }
    targets.push({ name: 'identity create CPU/req, 50 clients vs 1', value: creates[1].cpuUsPerRequest / creates[0].cpuUsPerRequest, op: '<=', limit: 0.5, from: 'CPU/req' })
    targets.push({ name: 'identity create throughput, 50 clients vs 1', value: creates[1].perSecond / creates[0].perSecond, op: '>=', limit: 8, from: 'req/s' })

    const pkiTarget = { url: server.url, pid: server.pid, dataDir, adminToken, durationMs }
    await benchEnrollment(pkiTarget)
    const certLogin = await benchCertLogin(pkiTarget)
    targets.push({ name: 'certificate logins (new TLS connection) vs raw mTLS handshakes', value: certLogin.cpuRatio, op: '>=', limit: 0.6, from: 'handshake CPU / login CPU' })

    const extra = await loadExtraBenches()
    for (const f of extra) printFigure(f.name, f.value, f.unit)
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return targets
}

/** The targets of issue 14 part 2, measured or not, with met / not met. */
function printTargets(targets: readonly Target[]): void {
  console.log('\ntargets (issue 14, part 2), ratios from this run:')
  for (const t of targets) {
    const met = Number.isFinite(t.value) && (t.op === '<=' ? t.value <= t.limit : t.value >= t.limit)
    console.log(`  ${t.name.padEnd(66)} ${t.value.toFixed(2).padStart(6)} (target ${t.op} ${t.limit}, ${t.from})  ${met ? 'met' : 'NOT MET'}`)
  }
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
} else if (process.argv[2] === 'cold-start') {
  const { runColdStarts } = await import('./cold-start.ts')
  await runColdStarts(process.argv[3] ?? '', Number(process.argv[4] ?? 5))
} else if (process.argv[2] === 'soak') {
  await runSoak({
    minutes: Number(process.argv[3] ?? 10),
    rate: Number(process.env.SOAK_RATE ?? 100),
    sampleSeconds: Number(process.env.SOAK_SAMPLE_SECONDS ?? 60),
  })
} else {
  const targets = await main()
  console.log('')
  await runPolicyScale({ spec: scenarioByName('small'), seconds: Math.min(SECONDS, 2) })
  printTargets(targets)
}
