/**
 * The OIDC figures of `bun run bench` (and `bun run bench oidc` alone), each read against its legacy counterpart in
 * the same run:
 * - `GET /current-identity` with an OIDC access token (`Authorization: Bearer`) against the same with `zt-session`,
 *   measured in turns (warm-up first, then `rounds` rounds; the ratio is the median of the per-round CPU ratios).
 *   Target <= 1.1. Both sessions are the admin's password sign-ins (a token bound to a certificate needs the client
 *   certificate on every request, which wrk cannot present).
 * - full certificate sign-ins as the C SDK makes them (authorize, login/cert, callback, token: four requests, each on
 *   a new TLS connection presenting the certificate, as the SDK's keep-alive 0) against legacy certificate logins
 *   (one request on a new connection), in turns too. Reported as sign-ins/s and server CPU per sign-in.
 */
import { formatCpuPerOp, withCpuOf } from './bench-cpu.ts'
import { printFigure, runLoad } from './bench-load.ts'
import { measure, type LoadSpec, type Measured } from './bench-measure.ts'
import { CERT_LOGIN_REQUEST, CONCURRENT_LOGINS, enrolledClient, requestOnNewConnection } from './bench-pki.ts'
import { oidcSdk } from '../test/support/oidc-sdk.ts'

export interface OidcBenchTarget {
  url: string
  pid: number
  adminToken: string
  adminPassword: string
  durationMs: number
  warmupMs: number
  rounds: number
  connections: number
}

export interface OidcFigures {
  bearerVsSession: number
  signInCpuVsLegacy: number
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

export async function benchOidc(t: OidcBenchTarget, print: (name: string, m: Measured, extra?: string) => void): Promise<OidcFigures> {
  const client = `${t.url}/edge/client/v1`
  const admin = oidcSdk({ url: t.url })
  const bearers = [(await admin.passwordLogin('admin', t.adminPassword)).access_token, (await admin.passwordLogin('admin', t.adminPassword)).access_token]
  const login = async () => {
    const res = await fetch(`${client}/authenticate?method=password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: t.adminPassword }),
      tls: { rejectUnauthorized: false },
    } as RequestInit)
    return ((await res.json()) as { data: { token: string } }).data.token
  }
  const sessions = [await login(), await login()]
  const specs: LoadSpec[] = [
    { url: `${client}/current-identity`, connections: t.connections, durationMs: t.durationMs, sessions },
    { url: `${client}/current-identity`, connections: t.connections, durationMs: t.durationMs, bearers },
  ]
  for (const s of specs) await measure(t.pid, { ...s, durationMs: t.warmupMs })
  const rounds: Measured[][] = [[], []]
  for (let r = 0; r < t.rounds; r++) for (const [i, s] of specs.entries()) rounds[i]!.push(await measure(t.pid, s))
  const ratios = rounds[1]!.map((m, i) => m.cpuUsPerRequest / rounds[0]![i]!.cpuUsPerRequest)
  const bearerVsSession = median(ratios)
  const mid = (runs: Measured[]) => [...runs].sort((a, b) => a.cpuUsPerRequest - b.cpuUsPerRequest)[Math.floor(runs.length / 2)]!
  print(`GET /current-identity with zt-session, c=${t.connections}`, mid(rounds[0]!))
  print(`GET /current-identity with an OIDC bearer token, c=${t.connections}`, mid(rounds[1]!), `CPU ${bearerVsSession.toFixed(2)}× zt-session (target <= 1.10)`)

  // sign-ins by certificate: the legacy login and the SDK's OIDC sequence, in turns
  const me = await enrolledClient(t, 'bench-oidc-cert')
  const port = Number(new URL(t.url).port)
  const device = oidcSdk({ url: t.url }, me)
  await device.discovery()
  const legacyRound = () =>
    withCpuOf(t.pid, () => runLoad({ concurrency: CONCURRENT_LOGINS, durationMs: t.durationMs, request: () => requestOnNewConnection(port, me, CERT_LOGIN_REQUEST) }))
  const oidcRound = () =>
    withCpuOf(t.pid, () =>
      runLoad({
        concurrency: CONCURRENT_LOGINS,
        durationMs: t.durationMs,
        request: async () => {
          const tokens = await device.certLogin()
          return typeof tokens.access_token === 'string'
        },
      }),
    )
  await legacyRound()
  await oidcRound()
  const legacy: { perSecond: number; cpuPerOp: number; text: string }[] = []
  const oidc: typeof legacy = []
  for (let r = 0; r < t.rounds; r++) {
    for (const [runs, round] of [[legacy, legacyRound], [oidc, oidcRound]] as const) {
      const { result, cpuSeconds } = await round()
      const ops = result.count + result.errors
      runs.push({ perSecond: result.perSecond, cpuPerOp: cpuSeconds / ops, text: `${formatCpuPerOp(cpuSeconds, ops)}, p50 ${result.p50Ms.toFixed(2)} ms, ${result.errors} errors` })
    }
  }
  const midOf = (runs: typeof legacy) => [...runs].sort((a, b) => a.cpuPerOp - b.cpuPerOp)[Math.floor(runs.length / 2)]!
  const signInCpuVsLegacy = median(oidc.map((o, i) => o.cpuPerOp / legacy[i]!.cpuPerOp))
  const rateRatio = median(oidc.map((o, i) => o.perSecond / legacy[i]!.perSecond))
  printFigure(`legacy certificate logins (new TLS connection each), c=${CONCURRENT_LOGINS}`, midOf(legacy).perSecond, 'req/s', midOf(legacy).text)
  printFigure(`OIDC certificate sign-ins as the C SDK (4 requests, new connection each), c=${CONCURRENT_LOGINS}`, midOf(oidc).perSecond, 'op/s',
    `${midOf(oidc).text}, CPU ${signInCpuVsLegacy.toFixed(2)}× a legacy login, rate ${rateRatio.toFixed(2)}× legacy`)
  return { bearerVsSession, signInCpuVsLegacy }
}
