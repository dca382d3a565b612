// A partially authenticated session (primary login done, a TOTP auth query outstanding) reaches only the endpoints of
// controller-behaviour.md §4 "Partially authenticated sessions", on both APIs: GET/DELETE /current-api-session,
// POST /authenticate/mfa, GET/POST /current-identity/mfa, POST /current-identity/mfa/verify, GET
// /current-identity/mfa/qr-code. Every other route of the route table (the server's own, as the fuzz test sweeps it,
// so a new route cannot be forgotten) answers 401 UNAUTHORIZED before its body is read.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import { API_PREFIX, type RouteDef } from '../../src/http/http-route.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

const PARTIAL_ALLOWED = [
  'GET /current-api-session',
  'DELETE /current-api-session',
  'POST /authenticate/mfa',
  'GET /current-identity/mfa',
  'POST /current-identity/mfa',
  'POST /current-identity/mfa/verify',
  'GET /current-identity/mfa/qr-code',
]

let t: TestServer
let identityId = ''
const login = { username: 'partial-user', password: 'partial-pass-1' }
let secret = ''

beforeAll(async () => {
  t = await startTestServer()
  identityId = await t.create('/identities', { name: 'partial-user', type: 'User', isAdmin: true })
  expectStatus(await t.mgmt.post('/authenticators', { identityId, method: 'updb', ...login }), 201)
  const full = t.as(await t.login(login.username, login.password, 'client'), 'client')
  expectStatus(await full.post('/current-identity/mfa', {}), 201)
  secret = new URL((await full.get('/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!
  const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now() })
  expectStatus(await full.post('/current-identity/mfa/verify', { code }), 200)
})
afterAll(async () => {
  await t.stop()
})

/** A new partial session of the MFA-enrolled admin identity on `api`. */
async function partialSession(api: 'client' | 'management'): Promise<string> {
  const res = await t.raw.post(`${API_PREFIX[api]}/authenticate?method=password`, login)
  expectStatus(res, 200)
  expect(res.body.data.authQueries).toHaveLength(1)
  return res.body.data.token
}

const keyOf = (r: RouteDef) => `${r.method} ${r.path}`

describe('a partially authenticated session', () => {
  it('the route table lets exactly the reference\'s endpoints be called partially, on both APIs', () => {
    const partial = t.server.routes.filter((r) => r.access === 'partial')
    expect(partial.map(keyOf).sort()).toEqual([...PARTIAL_ALLOWED].sort())
    for (const r of partial) expect([...r.apis].sort()).toEqual(['client', 'management'])
  })

  for (const api of ['client', 'management'] as const) {
    it(`gets 401 UNAUTHORIZED from every other route of the ${api} API, whatever the body`, async () => {
      const token = await partialSession(api)
      const routes = t.server.routes.filter((r) => r.apis.includes(api) && r.access !== 'public' && r.access !== 'partial')
      expect(routes.length).toBeGreaterThan(10)
      const wrong: string[] = []
      for (const r of routes) {
        const path = API_PREFIX[api] + r.path.replace(/:[A-Za-z]+/g, identityId)
        const res = await fetch(`${t.url}${path}`, {
          method: r.method,
          headers: { 'zt-session': token, 'content-type': 'application/json' },
          body: r.method === 'GET' ? undefined : '{"name":"x","code":"000000"}',
          tls: { ca: t.caPem },
        } as RequestInit)
        const body = (await res.json()) as { error?: { code?: string } }
        if (res.status !== 401 || body.error?.code !== 'UNAUTHORIZED') wrong.push(`${r.method} ${r.path}: ${res.status} ${body.error?.code}`)
      }
      expect(wrong).toEqual([])
      // nothing above ended or completed the session
      expect((await t.as(token, api).get('/current-api-session')).body.data.authQueries).toHaveLength(1)
    })

    it(`reaches each allowed endpoint on the ${api} API (none answers 401 UNAUTHORIZED)`, async () => {
      const token = await partialSession(api)
      const c = t.as(token, api)
      expectStatus(await c.get('/current-api-session'), 200)
      expectStatus(await c.get('/current-identity/mfa'), 200)
      expect((await c.post('/current-identity/mfa', {})).body.error.code).toBe('MFA_EXISTS')
      expect((await c.post('/current-identity/mfa/verify', { code: '000000' })).body.error.code).toBe('NOT_FOUND')
      const qr = await fetch(`${t.url}${API_PREFIX[api]}/current-identity/mfa/qr-code`, { headers: { 'zt-session': token }, tls: { ca: t.caPem } } as RequestInit)
      expect(qr.status).toBe(404)
      t.clock.advance(30_000)
      const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now() })
      expectStatus(await c.post('/authenticate/mfa', { code }), 200)
      expectStatus(await c.get('/current-identity'), 200)
      expectStatus(await c.del('/current-api-session'), 200)
    })
  }

  it('may start, read, draw and verify an enrollment, and verifying completes it', async () => {
    // an identity whose enrollment was removed by an admin keeps its partial sessions: they can enroll again
    const token = await partialSession('client')
    expectStatus(await t.mgmt.del(`/identities/${identityId}/mfa`), 200)
    const c = t.as(token, 'client')
    expectStatus(await c.post('/current-identity/mfa', {}), 201)
    const fresh = new URL((await c.get('/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!
    const qr = await fetch(`${t.url}/edge/client/v1/current-identity/mfa/qr-code`, { headers: { 'zt-session': token }, tls: { ca: t.caPem } } as RequestInit)
    expect(qr.status).toBe(200)
    expectStatus(await c.post('/current-identity/mfa/verify', { code: TOTP.generate({ secret: Secret.fromBase32(fresh), timestamp: t.clock.now() }) }), 200)
    const s = (await c.get('/current-api-session')).body.data
    expect([s.isMfaRequired, s.isMfaComplete, s.authQueries]).toEqual([true, true, []])
    expectStatus(await c.get('/current-identity'), 200)
    secret = fresh
  })
})
