// Management API: what policies give identities, services and edge routers (sub-lists from the policy index),
// identity service configs and policy advice (edge-api management.yml /identities/{id}/services, /edge-routers,
// /service-policies, /edge-router-policies, /service-configs, /policy-advice/{serviceId}; policyAdvice).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { PolicyAdvice } from '../../schemas/policy-advice.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
const ids: Record<string, string> = {}
beforeAll(async () => {
  srv = await startTestServer()
  ids.alice = await create('/identities', { name: 'alice', type: 'User', isAdmin: false, roleAttributes: ['staff'] })
  ids.bob = await create('/identities', { name: 'bob', type: 'User', isAdmin: false, roleAttributes: ['guest'] })
  ids.web = await create('/services', { name: 'web', encryptionRequired: true, roleAttributes: ['web'] })
  ids.db = await create('/services', { name: 'db', encryptionRequired: true, roleAttributes: ['db'] })
  ids.er1 = await create('/edge-routers', { name: 'er1', roleAttributes: ['public'] })
  ids.er2 = await create('/edge-routers', { name: 'er2', roleAttributes: ['private'] })
  ids.spDial = await create('/service-policies', { name: 'staff-dial-web', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#web'] })
  ids.spBind = await create('/service-policies', { name: 'staff-bind-all', type: 'Bind', semantic: 'AllOf', identityRoles: ['#staff'], serviceRoles: ['#all'] })
  ids.erp = await create('/edge-router-policies', { name: 'staff-all-routers', semantic: 'AnyOf', identityRoles: ['#staff'], edgeRouterRoles: ['#public', '#private'] })
  ids.serp = await create('/service-edge-router-policies', { name: 'web-public', semantic: 'AnyOf', serviceRoles: ['#web'], edgeRouterRoles: ['#public'] })
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)
const idsOf = async (path: string, offSpec?: string) => {
  const res = await srv.mgmt.get(path, { offSpec })
  expectStatus(res, 200)
  return res.body.data.map((e: { id: string }) => e.id).sort()
}
const sorted = (...xs: string[]) => [...xs].sort()

describe('sub-lists reflect the policies', () => {
  it('of an identity: services, edge routers, service policies, edge router policies', async () => {
    expect(await idsOf(`/identities/${ids.alice}/services`)).toEqual(sorted(ids.web, ids.db))
    expect(await idsOf(`/identities/${ids.alice}/services?policyType=dial`)).toEqual([ids.web])
    expect(await idsOf(`/identities/${ids.alice}/services?policyType=Bind`)).toEqual(sorted(ids.web, ids.db))
    expect(await idsOf(`/identities/${ids.alice}/edge-routers`)).toEqual(sorted(ids.er1, ids.er2))
    expect(await idsOf(`/identities/${ids.alice}/service-policies`)).toEqual(sorted(ids.spDial, ids.spBind))
    expect(await idsOf(`/identities/${ids.alice}/edge-router-policies`)).toEqual([ids.erp])
    expect(await idsOf(`/identities/${ids.bob}/services`)).toEqual([])
    expect(await idsOf(`/identities/${ids.bob}/edge-routers`)).toEqual([])
  })

  it('of a service: identities, edge routers, service policies, service edge router policies', async () => {
    expect(await idsOf(`/services/${ids.web}/identities`)).toEqual([ids.alice])
    expect(await idsOf(`/services/${ids.web}/edge-routers`)).toEqual([ids.er1])
    expect(await idsOf(`/services/${ids.db}/edge-routers`)).toEqual([])
    expect(await idsOf(`/services/${ids.web}/service-policies`)).toEqual(sorted(ids.spDial, ids.spBind))
    expect(await idsOf(`/services/${ids.db}/service-policies`)).toEqual([ids.spBind])
    expect(await idsOf(`/services/${ids.web}/service-edge-router-policies`)).toEqual([ids.serp])
  })

  it('of an edge router: identities, services, edge router policies, service edge router policies', async () => {
    expect(await idsOf(`/edge-routers/${ids.er1}/identities`)).toEqual([ids.alice])
    expect(await idsOf(`/edge-routers/${ids.er1}/services`)).toEqual([ids.web])
    expect(await idsOf(`/edge-routers/${ids.er2}/services`)).toEqual([])
    expect(await idsOf(`/edge-routers/${ids.er1}/edge-router-policies`)).toEqual([ids.erp])
    // management.yml types this list as service policies; the real controller answers service edge router policies
    const mistyped = 'management.yml types GET /edge-routers/{id}/service-edge-router-policies as a list of service policies'
    expect(await idsOf(`/edge-routers/${ids.er1}/service-edge-router-policies`, mistyped)).toEqual([ids.serp])
  })

  it('follow role attribute changes at once, with filter and paging applied on top', async () => {
    expectStatus(await srv.mgmt.patch(`/identities/${ids.bob}`, { roleAttributes: ['guest', 'staff'] }), 200)
    expect(await idsOf(`/services/${ids.web}/identities`)).toEqual(sorted(ids.alice, ids.bob))
    const page = await srv.mgmt.get(`/services/${ids.web}/identities?limit=1&filter=${encodeURIComponent('name != "nobody"')}`)
    expect(page.body.meta.pagination).toEqual({ limit: 1, offset: 0, totalCount: 2 })
    expect(await idsOf(`/services/${ids.web}/identities?filter=${encodeURIComponent('name = "bob"')}`)).toEqual([ids.bob])
    expectStatus(await srv.mgmt.patch(`/identities/${ids.bob}`, { roleAttributes: ['guest'] }), 200)
    expect(await idsOf(`/services/${ids.web}/identities`)).toEqual([ids.alice])
  })

  it('answer 404 for an unknown parent', async () => {
    for (const p of ['/identities/nope/services', '/identities/nope/edge-routers', '/identities/nope/service-policies', '/identities/nope/edge-router-policies',
      '/services/nope/identities', '/services/nope/edge-routers', '/edge-routers/nope/services']) {
      expectError(await srv.mgmt.get(p), 404, 'NOT_FOUND')
    }
  })
})

describe('GET /identities/:id/policy-advice/:serviceId', () => {
  it('reports permissions, router counts and the common routers', async () => {
    const res = await srv.mgmt.get(`/identities/${ids.alice}/policy-advice/${ids.web}`)
    expectStatus(res, 200)
    const a = res.body.data
    expect([...Value.Errors(PolicyAdvice, a)]).toEqual([])
    expect(a).toMatchObject({ identityId: ids.alice, serviceId: ids.web, isDialAllowed: true, isBindAllowed: true, identityRouterCount: 2, serviceRouterCount: 1 })
    expect(a.identity).toMatchObject({ id: ids.alice, name: 'alice', entity: 'identities' })
    expect(a.service).toMatchObject({ id: ids.web, name: 'web', entity: 'services' })
    expect(a.commonRouters).toEqual([expect.objectContaining({ id: ids.er1, name: 'er1', isOnline: false })])
    const db = (await srv.mgmt.get(`/identities/${ids.alice}/policy-advice/${ids.db}`)).body.data
    expect(db).toMatchObject({ isDialAllowed: false, isBindAllowed: true, serviceRouterCount: 0, commonRouters: [] })
    const bob = (await srv.mgmt.get(`/identities/${ids.bob}/policy-advice/${ids.web}`)).body.data
    expect(bob).toMatchObject({ isDialAllowed: false, isBindAllowed: false, identityRouterCount: 0, commonRouters: [] })
  })

  it('answers 404 for an unknown identity or service', async () => {
    expectError(await srv.mgmt.get(`/identities/nope/policy-advice/${ids.web}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get(`/identities/${ids.alice}/policy-advice/nope`), 404, 'NOT_FOUND')
  })
})

describe('/identities/:id/service-configs', () => {
  it('adds overrides, replaces one of the same config type, removes listed ones, and removes all without a body', async () => {
    const c1 = await create('/configs', { name: 'host-a', configTypeId: 'host.v1', data: { port: 1 } })
    const c2 = await create('/configs', { name: 'host-b', configTypeId: 'host.v1', data: { port: 2 } })
    const c3 = await create('/configs', { name: 'intercept-a', configTypeId: 'intercept.v1', data: { addresses: ['a'] } })
    const path = `/identities/${ids.alice}/service-configs`
    const pairs = async () =>
      (await srv.mgmt.get(path)).body.data.map((x: { serviceId: string; configId: string }) => `${x.serviceId}/${x.configId}`).sort()
    expectStatus(await srv.mgmt.post(path, [{ serviceId: ids.web, configId: c1 }, { serviceId: ids.web, configId: c3 }]), 200)
    expect(await pairs()).toEqual(sorted(`${ids.web}/${c1}`, `${ids.web}/${c3}`))
    const detail = (await srv.mgmt.get(path)).body.data.find((x: { configId: string }) => x.configId === c1)
    expect(detail.service).toMatchObject({ id: ids.web, name: 'web' })
    expect(detail.config).toMatchObject({ id: c1, name: 'host-a' })
    // same service and config type: the new config replaces the old one
    expectStatus(await srv.mgmt.post(path, [{ serviceId: ids.web, configId: c2 }]), 200)
    expect(await pairs()).toEqual(sorted(`${ids.web}/${c2}`, `${ids.web}/${c3}`))
    expectStatus(await srv.mgmt.del(path, { body: [{ serviceId: ids.web, configId: c3 }] }), 200)
    expect(await pairs()).toEqual([`${ids.web}/${c2}`])
    expectStatus(await srv.mgmt.post(path, [{ serviceId: ids.db, configId: c3 }]), 200)
    expectStatus(await srv.mgmt.del(path), 200)
    expect(await pairs()).toEqual([])
  })

  it('validates the pairs', async () => {
    const path = `/identities/${ids.alice}/service-configs`
    expectError(await srv.mgmt.post(path, [{ serviceId: ids.web }]), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post(path, { serviceId: ids.web, configId: 'x' }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post(path, [{ serviceId: 'nope', configId: 'nope' }]), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post(path, [{ serviceId: ids.web, configId: 'nope' }]), 400, 'COULD_NOT_VALIDATE')
  })

  it('answers 404 for an unknown identity', async () => {
    expectError(await srv.mgmt.get('/identities/nope/service-configs'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.post('/identities/nope/service-configs', []), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del('/identities/nope/service-configs'), 404, 'NOT_FOUND')
  })
})

describe('management service view', () => {
  it('shows the calling identity\'s permissions, ["Invalid"] when it has none', async () => {
    expect((await srv.mgmt.get(`/services/${ids.web}`)).body.data.permissions).toEqual(['Invalid'])
    const me = (await srv.mgmt.get('/current-identity')).body.data.id
    const sp = await create('/service-policies', { name: 'admin-dial-web', type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${me}`], serviceRoles: [`@${ids.web}`] })
    expect((await srv.mgmt.get(`/services/${ids.web}`)).body.data.permissions).toEqual(['Dial'])
    expectStatus(await srv.mgmt.del(`/service-policies/${sp}`), 200)
    expect((await srv.mgmt.get(`/services/${ids.web}`)).body.data.permissions).toEqual(['Invalid'])
  })
})
