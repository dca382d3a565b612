/**
 * `bun run bench`: the benchmark harness. Starts a real controller as a child process (so load generation and the
 * server do not share a thread), then measures, in one run, figures that are read as ratios of each other:
 * - raw throughput of a trivial handler on the listener (GET /version)
 * - authenticated GET /current-identity (target: >= 50% of raw)
 * - password logins/s against raw argon2id verifies/s with the same parameters (target: >= 90%)
 * - durable identity creates/s with 1 and with 50 concurrent clients (commits must batch)
 * - ott enrollments/s (50 clients) against raw certificate issuance/s, and certificate logins/s over new TLS
 *   connections against raw mTLS handshakes/s (bench/bench-pki.ts)
 * - the policy scale benchmark (bench/policy-scale.ts) on the real controller's 'small' scenario
 * `bun run bench policy <scenario>` runs only the policy scale benchmark on a scenario of bench/policy-scenario.ts
 * (small, medium, large, large-posture, many-services, baseline); 'large' loads 100,000 identities and takes several
 * minutes; 'large-posture' is 'large' with posture checks on a quarter of the service policies.
 * `bun run bench soak [minutes]` runs only the soak (bench/bench-soak.ts): mixed load at a steady rate, resident memory
 * and p99 sampled each minute (10 minutes unless told; SOAK_RATE requests per second, default 100).
 * Environment: BENCH_SECONDS (per figure, default 3).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hash, verify } from '@node-rs/argon2'
import { ARGON2_PARAMS } from '../src/auth/auth-password.ts'
import { printFigure, runLoad } from './bench-load.ts'
import { benchCertLogin, benchEnrollment } from './bench-pki.ts'
import { runPolicyScale, scenarioByName, startController } from './policy-scale.ts'
import { runSoak } from './bench-soak.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const PASSWORD = 'bench-pass-1'

const tls = { rejectUnauthorized: false }
const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, tls } as RequestInit)
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), tls } as RequestInit)

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-'))
  const server = await startController(dataDir, PASSWORD)
  const mgmt = `${server.url}/edge/management/v1`
  const client = `${server.url}/edge/client/v1`
  const durationMs = SECONDS * 1000
  try {
    console.log(`edgeplane benchmark: ${SECONDS}s per figure, server in a child process, ${navigator.hardwareConcurrency} cores\n`)
    const login = async (api: string) => {
      const res = await post(`${api}/authenticate?method=password`, { username: 'admin', password: PASSWORD })
      return ((await res.json()) as { data: { token: string } }).data.token
    }
    const adminToken = await login(mgmt)

    // warm up the listener and the JIT
    await runLoad({ concurrency: 8, durationMs: 500, request: async () => (await get(`${server.url}/version`)).ok })

    const raw = await runLoad({ concurrency: 32, durationMs, request: async () => {
      const r = await get(`${server.url}/version`)
      await r.arrayBuffer()
      return r.ok
    } })
    printFigure('raw: GET /version (trivial handler), c=32', raw.perSecond, 'req/s', `p50 ${raw.p50Ms.toFixed(2)} ms, p99 ${raw.p99Ms.toFixed(2)} ms`)

    const token = await login(client)
    const current = await runLoad({ concurrency: 32, durationMs, request: async () => {
      const r = await get(`${client}/current-identity`, { 'zt-session': token })
      await r.arrayBuffer()
      return r.ok
    } })
    printFigure('authenticated GET /current-identity, c=32', current.perSecond, 'req/s',
      `p50 ${current.p50Ms.toFixed(2)} ms, p99 ${current.p99Ms.toFixed(2)} ms, ratio to raw ${(current.perSecond / raw.perSecond).toFixed(2)} (target >= 0.50)`)

    const phc = await hash(PASSWORD, ARGON2_PARAMS)
    const verifies = await runLoad({ concurrency: 4, durationMs, request: async () => verify(phc, PASSWORD) })
    printFigure('raw argon2id verifies (same parameters), c=4', verifies.perSecond, 'op/s', `p50 ${verifies.p50Ms.toFixed(2)} ms`)
    const logins = await runLoad({ concurrency: 4, durationMs, request: async () => {
      const r = await post(`${client}/authenticate?method=password`, { username: 'admin', password: PASSWORD })
      await r.arrayBuffer()
      return r.ok
    } })
    printFigure('password logins, c=4', logins.perSecond, 'req/s',
      `p50 ${logins.p50Ms.toFixed(2)} ms, ratio to raw verifies ${(logins.perSecond / verifies.perSecond).toFixed(2)} (target >= 0.90)`)

    for (const c of [1, 50]) {
      const res = await runLoad({ concurrency: c, durationMs, request: async (w, i) => {
        const r = await post(`${mgmt}/identities`, { name: `bench-${c}-${w}-${i}`, type: 'User', isAdmin: false, roleAttributes: ['bench'] }, { 'zt-session': adminToken })
        await r.arrayBuffer()
        return r.status === 201
      } })
      printFigure(`durable identity creates, c=${c}`, res.perSecond, 'req/s', `p50 ${res.p50Ms.toFixed(2)} ms, p99 ${res.p99Ms.toFixed(2)} ms`)
    }

    const pkiTarget = { url: server.url, dataDir, adminToken, durationMs }
    await benchEnrollment(pkiTarget)
    await benchCertLogin(pkiTarget)

    const extra = await loadExtraBenches()
    for (const f of extra) printFigure(f.name, f.value, f.unit)
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
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
} else if (process.argv[2] === 'soak') {
  await runSoak({
    minutes: Number(process.argv[3] ?? 10),
    rate: Number(process.env.SOAK_RATE ?? 100),
    sampleSeconds: Number(process.env.SOAK_SAMPLE_SECONDS ?? 60),
  })
} else {
  await main()
  console.log('')
  await runPolicyScale({ spec: scenarioByName('small'), seconds: Math.min(SECONDS, 2) })
}
