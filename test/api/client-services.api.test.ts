// Client API: services an identity may use, their edge routers, sessions, and the service-update marker
// (edge-api client.yml; seed "Service (Client view)", "Session"; controller-behaviour.md §7, §8).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'

let srv: TestServer
let alice: { id: string; token: string; client: ApiClient }
const ids: Record<string, string> = {}

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)

async function identityWithLogin(name: string, roleAttributes: string[]): Promise<{ id: string; token: string; client: ApiClient }> {
  const id = await create('/identities', { name, type: 'User', isAdmin: false, roleAttributes })
  expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId: id, username: name, password: `${name}-pass-1` }), 201)
  const res = await srv.raw.post('/edge/client/v1/authenticate?method=password', { username: name, password: `${name}-pass-1`, configTypes: ['intercept.v1'] })
  expectStatus(res, 200)
  return { id, token: res.body.data.token, client: srv.as(res.body.data.token, 'client') }
}

beforeAll(async () => {
  srv = await startTestServer()
  ids.web = await create('/services', { name: 'web', encryptionRequired: true, roleAttributes: ['web'] })
  ids.db = await create('/services', { name: 'db', encryptionRequired: true, roleAttributes: ['db'] })
  ids.er1 = await create('/edge-routers', { name: 'er1', roleAttributes: ['public'] })
  ids.er2 = await create('/edge-routers', { name: 'er2', roleAttributes: ['private'] })
  ids.spDial = await create('/service-policies', { name: 'staff-dial-web', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#web'], postureCheckRoles: [] })
  ids.erp = await create('/edge-router-policies', { name: 'staff-public', semantic: 'AnyOf', identityRoles: ['#staff'], edgeRouterRoles: ['#public', '#private'] })
  ids.serp = await create('/service-edge-router-policies', { name: 'web-public', semantic: 'AnyOf', serviceRoles: ['#web'], edgeRouterRoles: ['#public'] })
  alice = await identityWithLogin('alice', ['staff'])
})
afterAll(async () => {
  await srv.stop()
})

describe('GET /services (client)', () => {
  it('lists only the services the caller may use, with permissions and placeholder posture queries', async () => {
    const res = await alice.client.get('/services')
    expectStatus(res, 200)
    expect(res.body.data.map((s: { name: string }) => s.name)).toEqual(['web'])
    const web = res.body.data[0]
    expect(web.permissions).toEqual(['Dial'])
    expect(web.postureQueries).toEqual([{ policyId: 'dummy dial policy: no posture checks defined', policyType: 'Dial', isPassing: true, postureQueries: [] }])
    expect(web.config).toEqual({})
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 1 })
    expect(res.body.meta.filterableFields).toContain('roleAttributes')
  })

  it('answers 404 for a service the caller may not use, and for an unknown one', async () => {
    expectError(await alice.client.get(`/services/${ids.db}`), 404, 'NOT_FOUND')
    expectError(await alice.client.get('/services/nope'), 404, 'NOT_FOUND')
    expectStatus(await alice.client.get(`/services/${ids.web}`), 200)
  })

  it('sees a new policy on the very next request after the 2xx, and loses it after the delete', async () => {
    const p = await create('/service-policies', { name: 'staff-bind-all', type: 'Bind', semantic: 'AllOf', identityRoles: [`@${alice.id}`], serviceRoles: ['#all'], postureCheckRoles: [] })
    const res = await alice.client.get('/services')
    expect(res.body.data.map((s: { name: string; permissions: string[] }) => [s.name, s.permissions])).toEqual([
      ['db', ['Bind']],
      ['web', ['Bind', 'Dial']],
    ].sort((a, b) => (ids[a[0] as string]! < ids[b[0] as string]! ? -1 : 1)))
    expectStatus(await srv.mgmt.del(`/service-policies/${p}`), 200)
    expect((await alice.client.get('/services')).body.data.map((s: { name: string }) => s.name)).toEqual(['web'])
  })

  it('a listing repeated unchanged answers the same text; the next one after a change shows it', async () => {
    // an answer asked for twice is kept for the next asks: every change, of the identity (not of the policy graph)
    // as well, must reach the listing right after it
    const names = async (query = '') => {
      const [a, b] = [await alice.client.get(`/services${query}`), await alice.client.get(`/services${query}`)]
      expect(b.text).toBe(a.text)
      return a.body.data.map((s: { name: string }) => s.name)
    }
    const first = await alice.client.get('/services')
    for (let i = 0; i < 2; i++) expect((await alice.client.get('/services')).text).toBe(first.text)
    const p = await create('/service-policies', { name: 'dba-dial-db', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#dba'], serviceRoles: ['#db'], postureCheckRoles: [] })
    expect(await names()).toEqual(['web'])
    expectStatus(await srv.mgmt.patch(`/identities/${alice.id}`, { roleAttributes: ['staff', 'dba'] }), 200)
    expect((await names()).sort()).toEqual(['db', 'web'])
    expect(await names('?limit=1')).toHaveLength(1)
    const extra = await create('/services', { name: 'web2', encryptionRequired: true, roleAttributes: ['web'] })
    expect((await names()).sort()).toEqual(['db', 'web', 'web2'])
    expectStatus(await srv.mgmt.del(`/services/${extra}`), 200)
    expectStatus(await srv.mgmt.patch(`/identities/${alice.id}`, { roleAttributes: ['staff'] }), 200)
    expect(await names()).toEqual(['web'])
    expectStatus(await srv.mgmt.del(`/service-policies/${p}`), 200)
    expect((await alice.client.get('/services')).text).toBe(first.text)
  })

  it('applies filter, paging and roleFilter on the visible list only', async () => {
    expect((await alice.client.get('/services?filter=name="db"')).body.data).toEqual([])
    expect((await alice.client.get('/services?filter=name="web"')).body.meta.pagination.totalCount).toBe(1)
    expect((await alice.client.get('/services?roleFilter=%23web')).body.data.length).toBe(1)
    expect((await alice.client.get('/services?roleFilter=%23db')).body.data.length).toBe(0)
    expectError(await alice.client.get('/services?filter=name=='), 400, 'INVALID_FILTER')
  })

  it('fills config by the config types asked for; an identity override of the same type wins', async () => {
    const c1 = await create('/configs', { name: 'web-intercept', configTypeId: 'g7cIWbcGg', data: { protocols: ['tcp'], addresses: ['web.local'], portRanges: [{ low: 80, high: 80 }] } })
    const c2 = await create('/configs', { name: 'alice-intercept', configTypeId: 'g7cIWbcGg', data: { protocols: ['tcp'], addresses: ['alice.web.local'], portRanges: [{ low: 8080, high: 8080 }] } })
    expectStatus(await srv.mgmt.patch(`/services/${ids.web}`, { configs: [c1] }), 200)
    let web = (await alice.client.get(`/services/${ids.web}`)).body.data
    expect(web.configs).toEqual([c1])
    expect(web.config['intercept.v1'].addresses).toEqual(['web.local'])
    // the query overrides the session's choice; 'all' selects every type
    expect((await alice.client.get(`/services/${ids.web}?configTypes=host.v1`)).body.data.config).toEqual({})
    expect(Object.keys((await alice.client.get(`/services/${ids.web}?configTypes=all`)).body.data.config)).toEqual(['intercept.v1'])
    expectStatus(await srv.mgmt.post(`/identities/${alice.id}/service-configs`, [{ serviceId: ids.web, configId: c2 }]), 200)
    web = (await alice.client.get(`/services/${ids.web}`)).body.data
    expect(web.config['intercept.v1'].addresses).toEqual(['alice.web.local'])
  })

  it('a listing after an edit shows the edit: service fields, config data, the config type name, an override removed', async () => {
    // rows are rendered once and reused: every kind of edit that shows in a row must be seen by the next listing
    const bob = await identityWithLogin('erin', ['staff'])
    const c3 = await create('/configs', { name: 'web-host', configTypeId: 'NH5p4FpGR', data: { protocol: 'tcp', address: 'localhost', port: 80 } })
    const probeType = await create('/config-types', { name: 'probe.v1', schema: {} })
    const c4 = await create('/configs', { name: 'web-probe', configTypeId: probeType, data: { every: '5s' } })
    const webOf = async (who: { client: ApiClient }, query = '') =>
      (await who.client.get(`/services${query}`)).body.data.find((s: { id: string }) => s.id === ids.web)
    const types = '?configTypes=all'
    expectStatus(await srv.mgmt.patch(`/services/${ids.web}`, { configs: [(await webOf(bob)).configs[0], c3, c4] }), 200)
    expect((await webOf(bob, types)).config['host.v1']).toEqual({ protocol: 'tcp', address: 'localhost', port: 80 })
    expect((await webOf(bob, types)).config['probe.v1']).toEqual({ every: '5s' })
    expectStatus(await srv.mgmt.patch(`/config-types/${probeType}`, { name: 'probe.v2' }), 200)
    expect(Object.keys((await webOf(bob, types)).config).sort()).toEqual(['host.v1', 'intercept.v1', 'probe.v2'])
    expectStatus(await srv.mgmt.patch(`/configs/${c3}`, { data: { protocol: 'tcp', address: 'web.internal', port: 8443 } }), 200)
    expect((await webOf(bob, types)).config['host.v1'].address).toBe('web.internal')
    expectStatus(await srv.mgmt.patch(`/services/${ids.web}`, { tags: { team: 'web' }, maxIdleTimeMillis: 5000 }), 200)
    const after = await webOf(bob, types)
    expect(after).toMatchObject({ name: 'web', tags: { team: 'web' }, maxIdleTimeMillis: 5000 })
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(after.createdAt))
    // alice's override still wins for her; bob sees the service's config
    expect((await webOf(alice, types)).config['intercept.v1'].addresses).toEqual(['alice.web.local'])
    expect((await webOf(bob, types)).config['intercept.v1'].addresses).toEqual(['web.local'])
    const overrides = (await srv.mgmt.get(`/identities/${alice.id}/service-configs`)).body.data
    expectStatus(await srv.mgmt.del(`/identities/${alice.id}/service-configs`, { body: overrides.map((o: { serviceId: string; configId: string }) => ({ serviceId: o.serviceId, configId: o.configId })) }), 200)
    expect((await webOf(alice, types)).config['intercept.v1'].addresses).toEqual(['web.local'])
    // the one row and the listing render the same text
    const one = await alice.client.get(`/services/${ids.web}${types}`)
    expect(one.body.data).toEqual(await webOf(alice, types))
  })
})

describe('edge routers for the client', () => {
  it('GET /services/{id}/edge-routers: the intersection of the identity and service router policies', async () => {
    const res = await alice.client.get(`/services/${ids.web}/edge-routers`)
    expectStatus(res, 200)
    expect(res.body.data.edgeRouters.map((r: { name: string }) => r.name)).toEqual(['er1'])
    expect(res.body.data.edgeRouters[0]).toMatchObject({ isOnline: false, cost: 0, disabled: false, syncStatus: expect.any(String) })
  })

  it('GET /current-identity/edge-routers lists the routers of the identity policies', async () => {
    const res = await alice.client.get('/current-identity/edge-routers')
    expectStatus(res, 200)
    expect(res.body.data.map((r: { name: string }) => r.name).sort()).toEqual(['er1', 'er2'])
  })

  it('refuses an invalid session-token header with 401', async () => {
    expectError(await alice.client.get(`/services/${ids.web}/edge-routers`, { headers: { 'session-token': 'not-a-jwt' } }), 401, 'UNAUTHORIZED')
  })
})

describe('sessions', () => {
  let sessionId = ''
  it('POST /sessions answers 201 with a JWT and the usable edge routers with urls; a repeat answers the same session', async () => {
    const res = await alice.client.post('/sessions', { serviceId: ids.web, type: 'Dial' })
    expectStatus(res, 201)
    const s = res.body.data
    expect(s).toMatchObject({ serviceId: ids.web, identityId: alice.id, type: 'Dial', apiSessionId: expect.any(String) })
    expect(s.token.split('.')).toHaveLength(3)
    const claims = JSON.parse(Buffer.from(s.token.split('.')[1], 'base64url').toString())
    expect(claims).toMatchObject({ sub: ids.web, jti: s.id, aud: ['openziti'], z_st: 'Dial', z_t: 's', z_iid: alice.id })
    expect(s.edgeRouters.map((r: { name: string }) => r.name)).toEqual(['er1'])
    expect(s.edgeRouters[0].urls).toEqual({})
    // a router created without appData shows {} (clients generated from older specs reject a null map)
    expect(s.edgeRouters[0].appData).toEqual({})
    sessionId = s.id
    const again = await alice.client.post('/sessions', { serviceId: ids.web })
    expect(again.body.data.id).toBe(sessionId)
    // the token is accepted as the session-token header of the router listing
    expectStatus(await alice.client.get(`/services/${ids.web}/edge-routers`, { headers: { 'session-token': s.token } }), 200)
  })

  it('refuses: unknown or invisible service 404, a type not permitted 400, no shared router 400 NO_EDGE_ROUTERS_AVAILABLE', async () => {
    expectError(await alice.client.post('/sessions', { serviceId: ids.db }), 404, 'NOT_FOUND')
    expectError(await alice.client.post('/sessions', {}), 404, 'NOT_FOUND')
    const bind = await alice.client.post('/sessions', { serviceId: ids.web, type: 'Bind' })
    expectError(bind, 400, 'COULD_NOT_VALIDATE')
    expect(bind.body.error.cause.field).toBe('ServiceId')
    expectError(await alice.client.post('/sessions', { serviceId: ids.web, type: 'Sideways' }), 400, 'COULD_NOT_VALIDATE')
    expectStatus(await srv.mgmt.patch(`/service-edge-router-policies/${ids.serp}`, { edgeRouterRoles: ['#nowhere'] }), 200)
    expectError(await alice.client.post('/sessions', { serviceId: ids.web, type: 'Dial' }), 400, 'NO_EDGE_ROUTERS_AVAILABLE')
    expectStatus(await srv.mgmt.patch(`/service-edge-router-policies/${ids.serp}`, { edgeRouterRoles: ['#public'] }), 200)
  })

  it('lists the caller\'s sessions; admins see them in the Management API', async () => {
    const mine = await alice.client.get('/sessions')
    expect(mine.body.data.map((s: { id: string }) => s.id)).toEqual([sessionId])
    expectStatus(await alice.client.get(`/sessions/${sessionId}`), 200)
    const all = await srv.mgmt.get('/sessions')
    expect(all.body.data.map((s: { id: string }) => s.id)).toContain(sessionId)
    expectStatus(await srv.mgmt.get(`/sessions/${sessionId}`), 200)
  })

  it('GET /sessions/{id}/route-path (Management API, admins): the empty path of a session without a circuit; 404 for an unknown one', async () => {
    const res = await srv.mgmt.get(`/sessions/${sessionId}/route-path`)
    expectStatus(res, 200)
    expect(res.body).toEqual({ data: { routePath: [] }, meta: {} })
    expectError(await srv.mgmt.get('/sessions/no-such-session/route-path'), 404, 'NOT_FOUND')
    const asAlice = srv.as(alice.token, 'management')
    expectError(await asAlice.get(`/sessions/${sessionId}/route-path`), 401, 'UNAUTHORIZED')
    expectError(await srv.mgmt.get(`/sessions/${sessionId}/route-path`, { session: null }), 401, 'UNAUTHORIZED')
    expectError(await srv.mgmt.post(`/sessions/${sessionId}/route-path`, {}, { offSpec: 'the spec has only GET of a route path' }), 405, 'METHOD_NOT_ALLOWED')
    expect((await alice.client.get(`/sessions/${sessionId}/route-path`, { offSpec: 'the Client API has no route path' })).status).toBe(404)
  })

  it('the enforcer removes a session whose access was lost', async () => {
    const bob = await identityWithLogin('bobby', ['staff'])
    const s = await bob.client.post('/sessions', { serviceId: ids.web })
    expectStatus(s, 201)
    expectStatus(await srv.mgmt.patch(`/identities/${bob.id}`, { roleAttributes: [] }), 200)
    await srv.server.enforcePolicies()
    expectError(await srv.mgmt.get(`/sessions/${s.body.data.id}`), 404, 'NOT_FOUND')
  })

  it('sessions disappear when their API session ends (logout)', async () => {
    const carol = await identityWithLogin('carol', ['staff'])
    const s = await carol.client.post('/sessions', { serviceId: ids.web })
    expectStatus(s, 201)
    expectStatus(await carol.client.del(`/sessions/${s.body.data.id}`), 200)
    const s2 = await carol.client.post('/sessions', { serviceId: ids.web })
    expectStatus(await carol.client.del('/current-api-session'), 200)
    expectError(await srv.mgmt.get(`/sessions/${s2.body.data.id}`), 404, 'NOT_FOUND')
  })
})

describe('GET /current-api-session/service-updates', () => {
  it('moves forward on changes to the caller\'s services or their configs, and not otherwise', async () => {
    const dave = await identityWithLogin('david', ['ops'])
    const at = async () => {
      const res = await dave.client.get('/current-api-session/service-updates')
      expectStatus(res, 200)
      return Date.parse(res.body.data.lastChangeAt)
    }
    const t0 = await at()
    srv.clock.advance(1000)
    // a router policy does not change the service list
    await create('/edge-router-policies', { name: 'ops-routers', semantic: 'AnyOf', identityRoles: ['#ops'], edgeRouterRoles: ['#all'] })
    expect(await at()).toBe(t0)
    // a policy granting a service does
    srv.clock.advance(1000)
    const p = await create('/service-policies', { name: 'ops-dial-db', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#ops'], serviceRoles: ['#db'], postureCheckRoles: [] })
    const t1 = await at()
    expect(t1).toBeGreaterThan(t0)
    // a change of a service the caller does not see does not
    srv.clock.advance(1000)
    expectStatus(await srv.mgmt.patch(`/services/${ids.web}`, { tags: { x: 'y' } }), 200)
    expect(await at()).toBe(t1)
    // a change of a service it sees does
    srv.clock.advance(1000)
    expectStatus(await srv.mgmt.patch(`/services/${ids.db}`, { tags: { x: 'y' } }), 200)
    const t2 = await at()
    expect(t2).toBeGreaterThan(t1)
    // a second identical change within the same millisecond still moves the marker
    expectStatus(await srv.mgmt.del(`/service-policies/${p}`), 200)
    expect(await at()).toBeGreaterThan(t2)
  })
})
