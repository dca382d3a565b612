/**
 * The soak (issue 12, not CI): a controller in a child process under mixed load at a steady rate for a long time
 * (10 minutes unless told), sampling its resident memory and the latency of the last interval, so a leak or a slow
 * growth of work per request shows as a curve that climbs.
 *
 * The load is open-loop: every tick starts the requests due at the rate, whatever the answers take, so a slowing
 * server meets the same offered load (requests that would pass MAX_IN_FLIGHT are counted as dropped, not queued). The
 * mix, by weight: client service listings and current identity reads, Management identity listings, identity creates
 * each followed by its delete, service and service-policy creates and deletes, and password logins each followed by
 * their logout (argon2id: a few per second). The in-process client is used rather than wrk: the mix needs the ids of
 * what it created.
 *
 * bun run bench soak [minutes]   (SOAK_RATE: requests per second, default 100; SOAK_SAMPLE_SECONDS: default 60)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memoryOf, startController } from './policy-scale.ts'

const ADMIN_PASSWORD = 'soak-admin-pass-1'
const USER_PASSWORD = 'soak-user-pass-1'
const MAX_IN_FLIGHT = 256
const TICK_MS = 10
const tls = { rejectUnauthorized: false }

export interface SoakSample {
  minute: number
  requests: number
  errors: number
  dropped: number
  p50Ms: number
  p99Ms: number
  rssMiB: number
  anonMiB: number
  /** The operation with the highest p99 in the interval, and that p99. */
  slowest: string
  slowestP99Ms: number
}

/** The `p` quantile of sorted latencies (NaN when none). */
export function quantile(sorted: readonly number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN
}

/**
 * How the last samples compare with the first ones after the warm-up: growth of resident memory and ratio of p99,
 * between the medians of the first and the last third (a median, so one minute of a busy machine is not a trend).
 */
export function soakVerdict(samples: readonly SoakSample[]): { rssGrowthMiB: number; p99Ratio: number } | undefined {
  // the first sample includes start-up, caches and JIT: the curve is read from the second one
  const steady = samples.slice(1)
  if (steady.length < 2) return undefined
  const head = steady.slice(0, Math.ceil(steady.length / 3))
  const tail = steady.slice(-Math.ceil(steady.length / 3))
  const median = (xs: readonly number[]) => {
    const sorted = [...xs].sort((a, b) => a - b)
    const mid = Math.floor(sorted.length / 2)
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  }
  return {
    rssGrowthMiB: median(tail.map((s) => s.rssMiB)) - median(head.map((s) => s.rssMiB)),
    p99Ratio: median(tail.map((s) => s.p99Ms)) / median(head.map((s) => s.p99Ms)),
  }
}

type Op = (n: number) => Promise<boolean>
interface MixEntry {
  name: string
  weight: number
  op: Op
}

async function json(url: string, method: string, body: unknown, token?: string): Promise<{ status: number; data: any }> {
  const headers: Record<string, string> = {}
  if (token) headers['zt-session'] = token
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), tls } as RequestInit)
  const text = await res.text()
  return { status: res.status, data: text ? JSON.parse(text).data : undefined }
}

/** The weighted mix of operations against the controller at `url`. */
async function mixOf(url: string): Promise<MixEntry[]> {
  const M = `${url}/edge/management/v1`
  const C = `${url}/edge/client/v1`
  const login = async (api: string, username: string, password: string) => (await json(`${api}/authenticate?method=password`, 'POST', { username, password })).data.token as string
  const admin = await login(M, 'admin', ADMIN_PASSWORD)
  // a small model: services the user may dial, so its listing has rows
  const user = (await json(`${M}/identities`, 'POST', { name: 'soak-user', type: 'User', isAdmin: false, roleAttributes: ['soak'] }, admin)).data.id
  await json(`${M}/authenticators`, 'POST', { identityId: user, method: 'updb', username: 'soak-user', password: USER_PASSWORD }, admin)
  for (let i = 0; i < 50; i++) await json(`${M}/services`, 'POST', { name: `soak-base-${i}`, roleAttributes: ['soak'], encryptionRequired: true }, admin)
  await json(`${M}/service-policies`, 'POST', { name: 'soak-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#soak'], serviceRoles: ['#soak'], postureCheckRoles: [] }, admin)
  const userToken = await login(C, 'soak-user', USER_PASSWORD)
  const ok = (status: number) => status >= 200 && status < 300
  return [
    { name: 'service list', weight: 30, op: async () => ok((await json(`${C}/services?limit=100`, 'GET', undefined, userToken)).status) },
    { name: 'current identity', weight: 20, op: async () => ok((await json(`${C}/current-identity`, 'GET', undefined, userToken)).status) },
    { name: 'identity list', weight: 15, op: async () => ok((await json(`${M}/identities?limit=25&filter=${encodeURIComponent('name contains "soak"')}`, 'GET', undefined, admin)).status) },
    { name: 'identity create+delete', weight: 15, op: async (n) => {
      const created = await json(`${M}/identities`, 'POST', { name: `soak-id-${n}`, type: 'User', isAdmin: false, roleAttributes: ['soak'] }, admin)
      return created.status === 201 && ok((await json(`${M}/identities/${created.data.id}`, 'DELETE', undefined, admin)).status)
    } },
    { name: 'service+policy create+delete', weight: 8, op: async (n) => {
      const svc = await json(`${M}/services`, 'POST', { name: `soak-svc-${n}`, roleAttributes: ['soak-extra'], encryptionRequired: true }, admin)
      if (svc.status !== 201) return false
      const sp = await json(`${M}/service-policies`, 'POST', { name: `soak-sp-${n}`, type: 'Bind', semantic: 'AllOf', identityRoles: ['#soak'], serviceRoles: [`@${svc.data.id}`], postureCheckRoles: [] }, admin)
      const deleted = await json(`${M}/services/${svc.data.id}`, 'DELETE', undefined, admin)
      return sp.status === 201 && ok(deleted.status) && ok((await json(`${M}/service-policies/${sp.data.id}`, 'DELETE', undefined, admin)).status)
    } },
    { name: 'login+logout', weight: 2, op: async () => {
      const token = await login(C, 'soak-user', USER_PASSWORD)
      return ok((await json(`${C}/current-api-session`, 'DELETE', undefined, token)).status)
    } },
  ]
}

export async function runSoak(opts: { minutes: number; rate: number; sampleSeconds: number }): Promise<SoakSample[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-soak-'))
  const server = await startController(dataDir, ADMIN_PASSWORD)
  const samples: SoakSample[] = []
  try {
    const mix = await mixOf(server.url)
    const totalWeight = mix.reduce((a, m) => a + m.weight, 0)
    const pickOp = (n: number): MixEntry => {
      let r = (n * 7919) % totalWeight // a fixed, evenly spread walk through the weights
      for (const m of mix) if ((r -= m.weight) < 0) return m
      return mix[0]
    }
    console.log(`soak: ${opts.minutes} min at ${opts.rate} req/s (open loop), a sample every ${opts.sampleSeconds}s, controller pid ${server.pid}`)
    console.log('sample  requests  errors  dropped   p50 ms   p99 ms   rss MiB  (anon)  slowest operation')
    let latencies: number[] = []
    let byOp = new Map<string, number[]>()
    let errors = 0
    let dropped = 0
    let inFlight = 0
    let n = 0
    const start = performance.now()
    const end = start + opts.minutes * 60_000
    let nextSample = start + opts.sampleSeconds * 1000
    // requests due so far at the rate, from the elapsed time (a late tick starts what it missed)
    let offered = 0
    while (performance.now() < end) {
      const due = Math.floor(((performance.now() - start) * opts.rate) / 1000)
      for (; offered < due; offered++) {
        if (inFlight >= MAX_IN_FLIGHT) {
          dropped++
          continue
        }
        const entry = pickOp(n++)
        const t0 = performance.now()
        inFlight++
        entry.op(n).then(
          (good) => {
            if (!good) return errors++
            const ms = performance.now() - t0
            latencies.push(ms)
            const list = byOp.get(entry.name) ?? []
            list.push(ms)
            byOp.set(entry.name, list)
          },
          () => errors++,
        ).finally(() => inFlight--)
      }
      await Bun.sleep(TICK_MS)
      if (performance.now() >= nextSample) {
        const sorted = latencies.sort((a, b) => a - b)
        const mem = memoryOf(server.pid)
        let slowest = { name: '-', p99: NaN }
        for (const [name, list] of byOp) {
          const p99 = quantile(list.sort((a, b) => a - b), 0.99)
          if (!(p99 <= slowest.p99)) slowest = { name, p99 }
        }
        const sample: SoakSample = {
          minute: samples.length + 1, requests: sorted.length, errors, dropped,
          p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), rssMiB: mem?.rssMiB ?? NaN, anonMiB: mem?.anonMiB ?? NaN,
          slowest: slowest.name, slowestP99Ms: slowest.p99,
        }
        samples.push(sample)
        console.log(`${String(sample.minute).padStart(6)} ${String(sample.requests).padStart(9)} ${String(errors).padStart(7)} ${String(dropped).padStart(8)} ${sample.p50Ms.toFixed(2).padStart(8)} ${sample.p99Ms.toFixed(2).padStart(8)} ${sample.rssMiB.toFixed(1).padStart(9)}  (${sample.anonMiB.toFixed(1)})  slowest p99: ${slowest.name} ${slowest.p99.toFixed(0)} ms`)
        latencies = []
        byOp = new Map()
        errors = 0
        dropped = 0
        nextSample += opts.sampleSeconds * 1000
      }
    }
    while (inFlight > 0) await Bun.sleep(TICK_MS)
    const verdict = soakVerdict(samples)
    if (verdict) console.log(`soak: resident memory ${verdict.rssGrowthMiB >= 0 ? '+' : ''}${verdict.rssGrowthMiB.toFixed(1)} MiB and p99 ×${verdict.p99Ratio.toFixed(2)} between the medians of the first and the last third (after the first sample)`)
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return samples
}
