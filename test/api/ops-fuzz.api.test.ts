// A seeded fuzz of the operations issue 29 §2 added: the controller settings (`/controller-settings`, `/{id}`,
// `/{id}/effective` with every method, hostile ids, bodies, queries and sessions), `GET /network-jwts` on both APIs,
// `GET /protocols` and `GET /sessions/{id}/route-path`; then clients that abort mid-body or dribble one. No answer may
// be a 5xx, every error is the envelope, every 2xx is the spec's; the global settings stay whole (every list an
// array of patterns, nothing beside them on a single node), the network JWT stays the one token, and the server lives
// on and still changes and applies its settings. A failure prints its seed and request: FUZZ_SEED=<n> replays a run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { ControllerSettingDetail } from '../../schemas/controller-setting.ts'
import { ADMIN, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { createPasswordUser } from '../support/auth-policy.ts'
import { openTls } from '../support/raw-wire.ts'
import { rng } from '../support/rng.ts'
import { checkAnswer } from '../support/spec-check.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261130)
const REQUESTS = 1_500
const IN_FLIGHT = 8
const C = '/edge/client/v1'
const M = '/edge/management/v1'

let srv: TestServer
let adminSession: string
let userSession: string
let sessionId: string

beforeAll(async () => {
  srv = await startTestServer()
  adminSession = await srv.login(ADMIN.username, ADMIN.password)
  await createPasswordUser(srv, 'ops-fuzz-user', 'ops-fuzz-pass-1')
  userSession = await srv.login('ops-fuzz-user', 'ops-fuzz-pass-1', 'client')
  // a service session of the user, for the route path
  const user = (await srv.mgmt.get(`/identities?filter=${encodeURIComponent('name="ops-fuzz-user"')}`)).body.data[0].id
  await srv.mgmt.patch(`/identities/${user}`, { roleAttributes: ['ops'] })
  const service = await srv.create('/services', { name: 'ops-fuzz-svc', encryptionRequired: true, roleAttributes: ['ops'] })
  await srv.create('/edge-routers', { name: 'ops-fuzz-router', roleAttributes: ['ops'] })
  await srv.create('/service-policies', { name: 'ops-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#ops'], serviceRoles: ['#ops'] })
  await srv.create('/edge-router-policies', { name: 'ops-erp', semantic: 'AnyOf', identityRoles: ['#ops'], edgeRouterRoles: ['#ops'] })
  await srv.create('/service-edge-router-policies', { name: 'ops-serp', semantic: 'AnyOf', serviceRoles: ['#ops'], edgeRouterRoles: ['#ops'] })
  const s = await srv.as(userSession, 'client').post('/sessions', { serviceId: service, type: 'Dial' })
  expectStatus(s, 201)
  sessionId = s.body.data.id
}, 30_000)
afterAll(async () => {
  await srv.stop()
})

type Next = () => number

describe(`operations fuzz (seed ${SEED})`, () => {
  it(`${REQUESTS} hostile requests to the controller settings, network JWTs, protocols and route paths: no 5xx, errors in the envelope`, async () => {
    const firstJwt = (await srv.raw.get(`${C}/network-jwts`)).body.data[0].token as string
    const pickOf = (next: Next) => <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!
    const hostileValue = (next: Next, depth = 0): unknown => {
      const pick = pickOf(next)
      switch (Math.floor(next() * (depth > 3 ? 6 : 9))) {
        case 0: return null
        case 1: return pick([0, -1, 1e308, true, false])
        case 2: return pick(['', ' ', 'x', '\u0000', '💥', '\ud800', 'https://ok.example/*', 'a'.repeat(2_049), 'y'.repeat(3_000)])
        case 3: return [] as unknown[]
        case 4: return {}
        case 5: return pick(['__proto__', 'constructor', 'toString'])
        case 6: return Array.from({ length: Math.floor(next() * (next() < 0.1 ? 150 : 5)) }, () => hostileValue(next, depth + 1))
        case 7: return Object.fromEntries([[pick(['__proto__', 'constructor', 'redirectUris', 'oidc', 'a']), hostileValue(next, depth + 1)]])
        default: return { redirectUris: hostileValue(next, depth + 1), postLogoutUris: [hostileValue(next, depth + 1)] }
      }
    }
    const settingsBody = (next: Next): string => {
      const pick = pickOf(next)
      const uris = () => (next() < 0.6 ? pick([['https://ok.example/cb'], [], ['openziti://auth/callback', 'http://localhost:*/auth/callback'], null]) : hostileValue(next))
      const oidc = next() < 0.8 ? { ...(next() < 0.7 ? { redirectUris: uris() } : {}), ...(next() < 0.5 ? { postLogoutUris: uris() } : {}) } : hostileValue(next)
      const body: Record<string, unknown> = {}
      if (next() < 0.5) body.controllerId = pick(['global', 'any', 'node-1', '', '__proto__', 'x'.repeat(300), hostileValue(next)])
      if (next() < 0.85) body.oidc = oidc
      if (next() < 0.3) body.tags = pick([{ a: 'b' }, null, { n: 1 }, hostileValue(next)])
      if (next() < 0.1) body.OIDC = oidc
      return pick([JSON.stringify(body), JSON.stringify(body), JSON.stringify(body), '{"oidc":', 'null', '[]', '"x"', JSON.stringify(hostileValue(next))])
    }
    const requestOf = (i: number): { method: string; path: string; headers: Record<string, string>; body?: string } => {
      const next = rng(SEED * 7_907 + i)
      const pick = pickOf(next)
      const headers: Record<string, string> = {}
      const session = pick([adminSession, adminSession, adminSession, userSession, '', 'nope', undefined])
      if (session !== undefined) headers['zt-session'] = session
      const query = next() < 0.2 ? pick(['?limit=-1', '?limit=abc&offset=-5', `?filter=${encodeURIComponent('isSystem = true')}`, '?filter=((', '?sort=id%20desc', `?x=${'y'.repeat(3_000)}`, '?%ff']) : ''
      const id = encodeURIComponent(pick(['global', 'global', 'node-1', 'any', 'no-such', '', '..', '%2e%2e', '__proto__', 'a'.repeat(2_000)]))
      const method = next() < 0.1 ? pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) : undefined
      switch (Math.floor(next() * 6)) {
        case 0:
          headers['content-type'] = pick(['application/json', 'application/json', 'text/plain', ''])
          return { method: method ?? pick(['GET', 'POST']), path: `${M}/controller-settings${query}`, headers, body: settingsBody(next) }
        case 1:
          return { method: method ?? 'GET', path: `${M}/controller-settings/${id}${next() < 0.5 ? '/effective' : ''}${query}`, headers }
        case 2:
          headers['content-type'] = pick(['application/json', 'application/json', 'application/x-www-form-urlencoded', ''])
          return { method: method ?? pick(['PUT', 'PATCH', 'PATCH', 'DELETE']), path: `${M}/controller-settings/${id}/effective`, headers, body: settingsBody(next) }
        case 3:
          return { method: method ?? 'GET', path: `${pick([C, M, ''])}/network-jwts${query}`, headers }
        case 4:
          return { method: method ?? 'GET', path: `${pick([C, C, '', M])}/protocols${query}`, headers }
        default: {
          const sid = pick([sessionId, sessionId, 'no-such', '', '__proto__', 'a'.repeat(2_000)])
          return { method: method ?? 'GET', path: `${pick([M, M, C])}/sessions/${encodeURIComponent(sid)}/route-path${query}`, headers }
        }
      }
    }
    const failures: string[] = []
    const statuses = new Map<number, number>()
    let cursor = 0
    const worker = async () => {
      for (let i = cursor++; i < REQUESTS; i = cursor++) {
        const r = requestOf(i)
        const hasBody = r.method !== 'GET' && r.method !== 'HEAD'
        const res = await fetch(`${srv.url}${r.path}`, { method: r.method, headers: r.headers, body: hasBody ? r.body : undefined, tls: { ca: srv.caPem } } as RequestInit)
        const text = await res.text()
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        const shown = `#${i} ${r.method} ${r.path.slice(0, 120)} ${JSON.stringify(r.headers).slice(0, 200)} ${(r.body ?? '').slice(0, 160)}`
        // a request head over Bun's 16 KiB is refused by its HTTP parser before any handler runs: 431, empty
        if ((res.status === 431 && text === '') || r.method === 'HEAD' || r.method === 'OPTIONS') {
          if (res.status >= 500) failures.push(`${shown}: ${res.status}`)
          continue
        }
        if (res.status >= 500) {
          failures.push(`${shown}: ${res.status} ${text.slice(0, 300)}`)
          continue
        }
        try {
          const body = JSON.parse(text)
          if (res.status >= 400 && (typeof body?.error?.code !== 'string' || typeof body.error.requestId !== 'string')) failures.push(`${shown}: not the envelope: ${text.slice(0, 300)}`)
          else if (res.status !== 404 && res.status !== 405) checkAnswer({ method: r.method, url: `${srv.url}${r.path}`, status: res.status, contentType: res.headers.get('content-type'), body, text })
        } catch (e) {
          failures.push(`${shown}: ${res.status} ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`)
        }
      }
    }
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
    if (failures.length > 0) throw new Error(`seed ${SEED}: ${failures.length} bad answers, first: ${failures.slice(0, 5).join('\n')}`)
    console.log(`operations fuzz: ${REQUESTS} requests; statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
    for (const status of [200, 400, 401, 404]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0)
    // the settings are whole: global alone (a single node has no controller to override), each list patterns
    const list = await srv.mgmt.get('/controller-settings')
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual(['global'])
    const global = list.body.data[0]
    expect([...Value.Errors(ControllerSettingDetail, global)]).toEqual([])
    for (const uris of [global.oidc.redirectUris, global.oidc.postLogoutUris]) {
      expect(Array.isArray(uris)).toBe(true)
      for (const u of uris) expect(typeof u === 'string' && u.length > 0 && u.length <= 2048).toBe(true)
    }
    expect((await srv.raw.get(`${M}/network-jwts`)).body.data).toEqual([{ name: 'default', token: firstJwt }])
  }, 120_000)

  it('clients that abort mid-body or dribble one leave the controller answering, and it still changes and applies its settings', async () => {
    const port = Number(new URL(srv.url).port)
    const body = JSON.stringify({ oidc: { redirectUris: ['https://after.example/cb'] } })
    for (const target of [`${M}/controller-settings/global/effective`, `${M}/controller-settings`]) {
      const conn = await openTls(port)
      await conn.write(`PATCH ${target} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\nzt-session: ${adminSession}\r\ncontent-length: 5000\r\n\r\n{"oidc":`)
      conn.destroy()
      const slow = await openTls(port)
      await slow.write(`PATCH ${target} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\nzt-session: ${adminSession}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`)
      for (const ch of body.slice(0, 12)) {
        await slow.write(ch)
        await Bun.sleep(5)
      }
      await slow.write(body.slice(12))
      await slow.until((bytes) => bytes.includes('\r\n\r\n'), 5_000)
      expect(slow.status()).toBeGreaterThanOrEqual(200)
      expect(slow.status()).toBeLessThan(500)
      slow.destroy()
    }
    expectStatus(await srv.mgmt.put('/controller-settings/global/effective', { oidc: { redirectUris: ['https://after.example/cb'], postLogoutUris: [] } }), 200)
    expect((await srv.mgmt.get('/controller-settings/global/effective')).body.data.effective.oidc).toEqual({ redirectUris: ['https://after.example/cb'], postLogoutUris: [] })
    expectStatus(await srv.raw.get(`${C}/protocols`), 200)
  })
})
