// Management API /service-policies, /edge-router-policies, /service-edge-router-policies (edge-api management.yml
// servicePolicy*/edgeRouterPolicy*/serviceEdgeRouterPolicy*, namedRoles; controller-behaviour.md §3).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { EdgeRouterPolicyDetail, ServiceEdgeRouterPolicyDetail, ServicePolicyDetail } from '../../schemas/policy.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
const ids: Record<string, string> = {}
beforeAll(async () => {
  srv = await startTestServer()
  ids.alice = await create('/identities', { name: 'alice', type: 'User', isAdmin: false, roleAttributes: ['staff'] })
  ids.bob = await create('/identities', { name: 'bob', type: 'User', isAdmin: false, roleAttributes: ['staff', 'ops'] })
  ids.web = await create('/services', { name: 'web', encryptionRequired: true, roleAttributes: ['web'] })
  ids.db = await create('/services', { name: 'db', encryptionRequired: true, roleAttributes: ['db'] })
  ids.er1 = await create('/edge-routers', { name: 'er1', roleAttributes: ['public'] })
  ids.er2 = await create('/edge-routers', { name: 'er2', roleAttributes: ['private'] })
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)
const idsOf = async (path: string) => (await srv.mgmt.get(path)).body.data.map((e: { id: string }) => e.id).sort()

describe('service policies', () => {
  it('creates a policy shown with its Display arrays and selects identities and services', async () => {
    const id = await create('/service-policies', {
      name: 'sp-a', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff', `@${ids.alice}`], serviceRoles: [`@${ids.web}`], postureCheckRoles: [],
    })
    const d = (await srv.mgmt.get(`/service-policies/${id}`)).body.data
    expect([...Value.Errors(ServicePolicyDetail, d)]).toEqual([])
    expect(d).toMatchObject({ name: 'sp-a', type: 'Dial', semantic: 'AnyOf', postureCheckRoles: [], postureCheckRolesDisplay: [] })
    expect(d.identityRolesDisplay).toEqual([{ role: '#staff', name: '#staff' }, { role: `@${ids.alice}`, name: '@alice' }])
    expect(d.serviceRolesDisplay).toEqual([{ role: `@${ids.web}`, name: '@web' }])
    expect(await idsOf(`/service-policies/${id}/identities`)).toEqual([ids.alice, ids.bob].sort())
    expect(await idsOf(`/service-policies/${id}/services`)).toEqual([ids.web])
    const pc = await srv.mgmt.get(`/service-policies/${id}/posture-checks`)
    expectStatus(pc, 200)
    expect(pc.body.data).toEqual([])
  })

  it('never shows null role lists or Display arrays', async () => {
    const id = await create('/service-policies', { name: 'sp-empty', type: 'Bind', semantic: 'AllOf' })
    const d = (await srv.mgmt.get(`/service-policies/${id}`)).body.data
    expect(d).toMatchObject({ identityRoles: [], identityRolesDisplay: [], serviceRoles: [], serviceRolesDisplay: [], postureCheckRoles: [] })
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['a missing type', { name: 'sp-x1', semantic: 'AllOf' }, 'type'],
    ['a missing semantic', { name: 'sp-x2', type: 'Dial' }, 'semantic'],
    ['an unknown type', { name: 'sp-x3', type: 'Host', semantic: 'AllOf' }, 'type'],
    ['an unknown semantic', { name: 'sp-x4', type: 'Dial', semantic: 'SomeOf' }, 'semantic'],
    ['a role without # or @', { name: 'sp-x5', type: 'Dial', semantic: 'AllOf', identityRoles: ['staff'] }, 'identityRoles'],
    ['#all with other roles', { name: 'sp-x6', type: 'Dial', semantic: 'AllOf', serviceRoles: ['#all', '#web'] }, 'serviceRoles'],
    ['an @id of no identity', { name: 'sp-x7', type: 'Dial', semantic: 'AllOf', identityRoles: ['@nope'] }, 'identityRoles'],
    ['an @id of no posture check', { name: 'sp-x8', type: 'Dial', semantic: 'AllOf', postureCheckRoles: ['@nope'] }, 'postureCheckRoles'],
  ]
  for (const [what, body, field] of bad) {
    it(`rejects ${what} with 400 COULD_NOT_VALIDATE on field ${field}`, async () => {
      const res = await srv.mgmt.post('/service-policies', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    })
  }

  it('PATCH changes roles and the selection follows; PUT resets absent roles; DELETE removes it', async () => {
    const id = await create('/service-policies', { name: 'sp-u', type: 'Bind', semantic: 'AllOf', identityRoles: ['#ops'], serviceRoles: ['#db'] })
    expect(await idsOf(`/service-policies/${id}/identities`)).toEqual([ids.bob])
    expectStatus(await srv.mgmt.patch(`/service-policies/${id}`, { identityRoles: ['#staff'] }), 200)
    expect(await idsOf(`/service-policies/${id}/identities`)).toEqual([ids.alice, ids.bob].sort())
    expect(await idsOf(`/service-policies/${id}/services`)).toEqual([ids.db])
    expectStatus(await srv.mgmt.put(`/service-policies/${id}`, { name: 'sp-u', type: 'Dial', semantic: 'AnyOf' }), 200)
    expect((await srv.mgmt.get(`/service-policies/${id}`)).body.data).toMatchObject({ type: 'Dial', semantic: 'AnyOf', identityRoles: [], serviceRoles: [] })
    expect(await idsOf(`/service-policies/${id}/identities`)).toEqual([])
    expectStatus(await srv.mgmt.del(`/service-policies/${id}`), 200)
    expectError(await srv.mgmt.get(`/service-policies/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get(`/service-policies/${id}/identities`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.patch(`/service-policies/${id}`, { name: 'x' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del(`/service-policies/${id}`), 404, 'NOT_FOUND')
  })

  it('drops a deleted identity from @ roles and Display arrays', async () => {
    const carol = await create('/identities', { name: 'carol', type: 'User', isAdmin: false })
    const id = await create('/service-policies', { name: 'sp-carol', type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${carol}`, '#staff'] })
    expectStatus(await srv.mgmt.del(`/identities/${carol}`), 200)
    // the graph drops the reference asynchronously (a tell); the Display array never shows an unreadable @id
    const d = (await srv.mgmt.get(`/service-policies/${id}`)).body.data
    expect(d.identityRolesDisplay).toEqual([{ role: '#staff', name: '#staff' }])
  })

  it('lists with filters on the policy fields, including the selected identities and services', async () => {
    await create('/service-policies', { name: 'sp-l', type: 'Bind', semantic: 'AnyOf', identityRoles: [`@${ids.bob}`], serviceRoles: ['#web'] })
    const res = await srv.mgmt.get(`/service-policies?filter=${encodeURIComponent(`type = "Bind" and anyOf(identities) = "${ids.bob}" and anyOf(services) = "${ids.web}"`)}`)
    expectStatus(res, 200)
    expect(res.body.data.map((p: { name: string }) => p.name)).toEqual(['sp-l'])
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'type', 'semantic', 'identityRoles', 'serviceRoles', 'postureCheckRoles', 'identities', 'services']))
  })
})

describe('edge router policies', () => {
  it('creates a policy with Display arrays and isSystem false, selecting identities and edge routers', async () => {
    const id = await create('/edge-router-policies', { name: 'erp-a', semantic: 'AnyOf', identityRoles: ['#ops'], edgeRouterRoles: ['#public', `@${ids.er2}`] })
    const d = (await srv.mgmt.get(`/edge-router-policies/${id}`)).body.data
    expect([...Value.Errors(EdgeRouterPolicyDetail, d)]).toEqual([])
    expect(d).toMatchObject({ name: 'erp-a', isSystem: false, identityRolesDisplay: [{ role: '#ops', name: '#ops' }] })
    expect(d.edgeRouterRolesDisplay).toEqual([{ role: '#public', name: '#public' }, { role: `@${ids.er2}`, name: '@er2' }])
    expect(await idsOf(`/edge-router-policies/${id}/identities`)).toEqual([ids.bob])
    expect(await idsOf(`/edge-router-policies/${id}/edge-routers`)).toEqual([ids.er1, ids.er2].sort())
    expectStatus(await srv.mgmt.patch(`/edge-router-policies/${id}`, { edgeRouterRoles: ['#private'] }), 200)
    expect(await idsOf(`/edge-router-policies/${id}/edge-routers`)).toEqual([ids.er2])
    expectStatus(await srv.mgmt.del(`/edge-router-policies/${id}`), 200)
    expectError(await srv.mgmt.get(`/edge-router-policies/${id}/edge-routers`), 404, 'NOT_FOUND')
  })

  it('validates roles: an @id must name an edge router', async () => {
    const res = await srv.mgmt.post('/edge-router-policies', { name: 'erp-x', semantic: 'AllOf', edgeRouterRoles: [`@${ids.web}`] })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('edgeRouterRoles')
    expectError(await srv.mgmt.post('/edge-router-policies', { name: 'erp-y' }), 400, 'COULD_NOT_VALIDATE')
  })

  it('filters on isSystem', async () => {
    const er = await create('/edge-routers', { name: 'er-sys-list', isTunnelerEnabled: true })
    expect(await idsOf(`/edge-router-policies?filter=${encodeURIComponent('isSystem = true')}`)).toEqual([er])
  })
})

describe('service edge router policies', () => {
  it('creates a policy with Display arrays selecting services and edge routers', async () => {
    const id = await create('/service-edge-router-policies', { name: 'serp-a', semantic: 'AllOf', serviceRoles: ['#all'], edgeRouterRoles: [`@${ids.er1}`] })
    const d = (await srv.mgmt.get(`/service-edge-router-policies/${id}`)).body.data
    expect([...Value.Errors(ServiceEdgeRouterPolicyDetail, d)]).toEqual([])
    expect(d.serviceRolesDisplay).toEqual([{ role: '#all', name: '#all' }])
    expect(d.edgeRouterRolesDisplay).toEqual([{ role: `@${ids.er1}`, name: '@er1' }])
    expect(await idsOf(`/service-edge-router-policies/${id}/services?limit=-1`)).toEqual(expect.arrayContaining([ids.web, ids.db]))
    expect(await idsOf(`/service-edge-router-policies/${id}/edge-routers`)).toEqual([ids.er1])
    expectStatus(await srv.mgmt.put(`/service-edge-router-policies/${id}`, { name: 'serp-a2', semantic: 'AnyOf', serviceRoles: ['#db'] }), 200)
    expect(await idsOf(`/service-edge-router-policies/${id}/services`)).toEqual([ids.db])
    expect(await idsOf(`/service-edge-router-policies/${id}/edge-routers`)).toEqual([])
    expectStatus(await srv.mgmt.del(`/service-edge-router-policies/${id}`), 200)
    expectError(await srv.mgmt.get(`/service-edge-router-policies/${id}`), 404, 'NOT_FOUND')
  })

  it('rejects a duplicate name and an @id of no service', async () => {
    await create('/service-edge-router-policies', { name: 'serp-dup', semantic: 'AllOf' })
    expectError(await srv.mgmt.post('/service-edge-router-policies', { name: 'serp-dup', semantic: 'AllOf' }), 400, 'COULD_NOT_VALIDATE')
    const res = await srv.mgmt.post('/service-edge-router-policies', { name: 'serp-x', semantic: 'AllOf', serviceRoles: ['@nope'] })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('serviceRoles')
  })
})

describe('persistence', () => {
  it('keeps policies and their selections across a restart', async () => {
    const id = await create('/service-policies', { name: 'sp-keep', type: 'Dial', semantic: 'AllOf', identityRoles: ['#ops'], serviceRoles: ['#db'] })
    await srv.restart()
    expect((await srv.mgmt.get(`/service-policies/${id}`)).body.data.name).toBe('sp-keep')
    expect(await idsOf(`/service-policies/${id}/identities`)).toEqual([ids.bob])
  })
})
