// Every Management API route, enumerated from the server's own route table (so a new route cannot be forgotten), is
// refused with 401 UNAUTHORIZED to callers that may not use it (issue 12, reliability suite): a non-admin's full
// session on every admin route; a partially authenticated admin session (an auth policy with requireTotp, the TOTP
// not yet answered) on every route a partial session may not call; a logged-out session and no session on every
// route that is not public. Path parameters name a real identity and the body is one that would be accepted, so a
// refusal that came late would show as a change: afterwards the victim identity is untouched.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { API_PREFIX, type RouteDef } from '../../src/http/http-route.ts'
import { AUTH_MFA_401_OFF_SPEC, expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'
import { authPolicyBody, createPasswordUser, passwordLogin } from '../support/auth-policy.ts'

let t: TestServer
let victimId = ''
let victimBefore: unknown

beforeAll(async () => {
  t = await startTestServer()
  victimId = (await createPasswordUser(t, 'access-victim', 'victim-pass-1')).id
  victimBefore = (await t.mgmt.get(`/identities/${victimId}`)).body.data
}, 30_000)
afterAll(async () => {
  await t.stop()
})

/** The Management routes a non-admin's full session may call: its own identity, authenticators, MFA and session. */
const SESSION_ROUTES = [
  'GET /current-identity',
  'GET /current-identity/authenticators',
  'GET /current-identity/authenticators/:id',
  'PUT /current-identity/authenticators/:id',
  'PATCH /current-identity/authenticators/:id',
  'POST /current-identity/authenticators/:id/extend',
  'POST /current-identity/authenticators/:id/extend-verify',
  'DELETE /current-identity/mfa',
  'GET /current-identity/mfa/recovery-codes',
  'POST /current-identity/mfa/recovery-codes',
  'POST /current-api-session/totp-token',
]

const managementRoutes = (): RouteDef[] => t.server.routes.filter((r) => r.apis.includes('management'))

/** Calls every route with `caller`, answering the ones not refused with 401 UNAUTHORIZED. */
async function sweep(caller: ApiClient, routes: readonly RouteDef[]): Promise<string[]> {
  const wrong: string[] = []
  for (const r of routes) {
    const path = r.path.replace(/:[A-Za-z]+/g, victimId)
    const body = r.method === 'GET' ? undefined : { name: 'access-sweep', type: 'User', isAdmin: true, code: '000000', enabled: true }
    const offSpec = r.path === '/authenticate/mfa' ? AUTH_MFA_401_OFF_SPEC : undefined
    const res = await caller(r.method, path, { body, offSpec })
    if (res.status !== 401 || res.body?.error?.code !== 'UNAUTHORIZED') wrong.push(`${r.method} ${r.path}: ${res.status} ${res.text.slice(0, 120)}`)
  }
  return wrong
}

describe('every Management route is refused to callers that may not use it', () => {
  it('the route table has the levels the sweeps rely on', () => {
    const levels = new Set(managementRoutes().map((r) => r.access))
    expect([...levels].sort()).toEqual(['admin', 'partial', 'public', 'session'])
    expect(managementRoutes().filter((r) => r.access === 'admin').length).toBeGreaterThan(100)
    // a route that is not admin-only on the Management API is one of the caller's own resources, named here
    const session = managementRoutes().filter((r) => r.access === 'session').map((r) => `${r.method} ${r.path}`)
    expect(session.sort()).toEqual([...SESSION_ROUTES].sort())
  })

  it('refuses every admin route to a non-admin\'s full session', async () => {
    const token = (await passwordLogin(t, 'access-victim', 'victim-pass-1')).body.data.token
    const caller = t.as(token, 'management')
    expect(await sweep(caller, managementRoutes().filter((r) => r.access === 'admin'))).toEqual([])
    // the session is still good for what a non-admin may do
    expectStatus(await caller.get('/current-identity'), 200)
    expectStatus(await caller.del('/current-api-session'), 200)
  }, 30_000)

  it('refuses every route but the partial ones to an admin\'s partial session (requireTotp owed)', async () => {
    const policy = await t.create('/auth-policies', authPolicyBody('access-totp', {}, { secondary: { requireTotp: true } }))
    const adminId = await t.create('/identities', { name: 'access-partial-admin', type: 'User', isAdmin: true, authPolicyId: policy })
    await t.create('/authenticators', { identityId: adminId, method: 'updb', username: 'access-partial-admin', password: 'partial-pass-1' })
    const login = await t.raw.post(`${API_PREFIX.management}/authenticate?method=password`, { username: 'access-partial-admin', password: 'partial-pass-1' })
    expectStatus(login, 200)
    expect(login.body.data.authQueries.map((q: { typeId: string }) => q.typeId)).toEqual(['MFA'])
    const caller = t.as(login.body.data.token, 'management')
    expect(await sweep(caller, managementRoutes().filter((r) => r.access === 'admin' || r.access === 'session'))).toEqual([])
    // still partial: nothing above completed or ended it
    expect((await caller.get('/current-api-session')).body.data.authQueries).toHaveLength(1)
  }, 30_000)

  it('refuses every route that is not public to a logged-out admin session and to no session', async () => {
    const token = await t.login('admin', 'admin-pass-1')
    const caller = t.as(token, 'management')
    expectStatus(await caller.del('/current-api-session'), 200)
    const guarded = managementRoutes().filter((r) => r.access !== 'public')
    expect(await sweep(caller, guarded)).toEqual([])
    expect(await sweep(t.as(undefined, 'management'), guarded)).toEqual([])
  }, 30_000)

  it('left the identity the paths named untouched', async () => {
    expect((await t.mgmt.get(`/identities/${victimId}`)).body.data).toEqual(victimBefore)
  })
})
