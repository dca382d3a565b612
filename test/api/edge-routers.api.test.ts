// Management API /edge-routers (edge-api management.yml edgeRouterCreate/Update/Patch/Detail; seed "Edge router";
// controller-behaviour.md §3 system edge router policies and router identities).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { EdgeRouterDetail } from '../../schemas/router.ts'
import { EdgeRouterPolicyDetail } from '../../schemas/policy.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)

describe('POST /edge-routers', () => {
  it('creates an edge router: offline, not enrolled (an enrollment outstanding), not tunneling', async () => {
    const id = await create('/edge-routers', { name: 'er-a', roleAttributes: ['eu'], cost: 7, appData: { k: 'v' } })
    const d = (await srv.mgmt.get(`/edge-routers/${id}`)).body.data
    expect([...Value.Errors(EdgeRouterDetail, d)]).toEqual([])
    expect(d).toMatchObject({ name: 'er-a', roleAttributes: ['eu'], cost: 7, appData: { k: 'v' }, isOnline: false, isVerified: false })
    expect(d).toMatchObject({ isTunnelerEnabled: false, disabled: false, noTraversal: false })
    // not enrolled: no certificate, so no fingerprint ("", never null: a plain string in the spec)
    expect(d.fingerprint).toBe('')
    // its erott enrollment: test/api/enroll-router.api.test.ts
    expect(d.enrollmentToken).toMatch(/^[0-9a-f-]{36}$/)
    expect(d.enrollmentJwt).toBeString()
    expectError(await srv.mgmt.get(`/identities/${id}`), 404, 'NOT_FOUND')
  })

  it('shows appData as {} when none was given, or null was (older clients reject a null map)', async () => {
    const id = await create('/edge-routers', { name: 'er-no-app-data' })
    expect((await srv.mgmt.get(`/edge-routers/${id}`)).body.data.appData).toEqual({})
    expectStatus(await srv.mgmt.patch(`/edge-routers/${id}`, { appData: null }), 200)
    expect((await srv.mgmt.get(`/edge-routers/${id}`)).body.data.appData).toEqual({})
    await srv.mgmt.del(`/edge-routers/${id}`)
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['a missing name', {}, 'name'],
    ['a cost above 65535', { name: 'er-x1', cost: 65536 }, 'cost'],
    ['a negative cost', { name: 'er-x2', cost: -1 }, 'cost'],
    ['a fractional cost', { name: 'er-x3', cost: 1.5 }, 'cost'],
    ['a role attribute starting with @', { name: 'er-x4', roleAttributes: ['@x'] }, 'roleAttributes'],
    ['a non-boolean isTunnelerEnabled', { name: 'er-x5', isTunnelerEnabled: 'yes' }, 'isTunnelerEnabled'],
  ]
  for (const [what, body, field] of bad) {
    it(`rejects ${what} with 400 COULD_NOT_VALIDATE on field ${field}`, async () => {
      const res = await srv.mgmt.post('/edge-routers', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field.split('.')[0]).toBe(field)
    })
  }

  it('rejects a duplicate name', async () => {
    await create('/edge-routers', { name: 'er-dup' })
    const res = await srv.mgmt.post('/edge-routers', { name: 'er-dup' })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
  })
})

describe('tunneler-enabled edge routers', () => {
  it('get an identity (id and name of the router, type Router) and a system edge router policy', async () => {
    const id = await create('/edge-routers', { name: 'er-tun', isTunnelerEnabled: true })
    const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(identity).toMatchObject({ id, name: 'er-tun', typeId: 'Router', isAdmin: false })
    const p = (await srv.mgmt.get(`/edge-router-policies/${id}`)).body.data
    expect([...Value.Errors(EdgeRouterPolicyDetail, p)]).toEqual([])
    expect(p).toMatchObject({
      name: `edge-router-${id}-system`,
      semantic: 'AnyOf',
      isSystem: true,
      identityRoles: [`@${id}`],
      edgeRouterRoles: [`@${id}`],
      identityRolesDisplay: [{ role: `@${id}`, name: '@er-tun' }],
      edgeRouterRolesDisplay: [{ role: `@${id}`, name: '@er-tun' }],
    })
    const routers = (await srv.mgmt.get(`/identities/${id}/edge-routers`)).body.data.map((r: { id: string }) => r.id)
    expect(routers).toEqual([id])
  })

  it('refuses admin changes of the system policy and deletion of the router identity with 400', async () => {
    const id = await create('/edge-routers', { name: 'er-sys', isTunnelerEnabled: true })
    expectError(await srv.mgmt.patch(`/edge-router-policies/${id}`, { name: 'mine' }), 400, 'ENTITY_CAN_NOT_BE_UPDATED')
    expectError(await srv.mgmt.put(`/edge-router-policies/${id}`, { name: 'mine', semantic: 'AllOf' }), 400, 'ENTITY_CAN_NOT_BE_UPDATED')
    expectError(await srv.mgmt.del(`/edge-router-policies/${id}`), 400, 'ENTITY_CAN_NOT_BE_DELETED')
    expectError(await srv.mgmt.del(`/identities/${id}`), 400, 'ENTITY_CAN_NOT_BE_DELETED')
  })

  it('renaming the router renames its identity', async () => {
    const id = await create('/edge-routers', { name: 'er-ren', isTunnelerEnabled: true })
    expectStatus(await srv.mgmt.patch(`/edge-routers/${id}`, { name: 'er-ren-2' }), 200)
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.name).toBe('er-ren-2')
  })

  it('turning tunneling off removes the identity and the system policy; turning it on brings them back', async () => {
    const id = await create('/edge-routers', { name: 'er-off', isTunnelerEnabled: true })
    expectStatus(await srv.mgmt.patch(`/edge-routers/${id}`, { isTunnelerEnabled: false }), 200)
    expectError(await srv.mgmt.get(`/identities/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get(`/edge-router-policies/${id}`), 404, 'NOT_FOUND')
    expectStatus(await srv.mgmt.patch(`/edge-routers/${id}`, { isTunnelerEnabled: true }), 200)
    expectStatus(await srv.mgmt.get(`/identities/${id}`), 200)
    expectStatus(await srv.mgmt.get(`/edge-router-policies/${id}`), 200)
    // a put without isTunnelerEnabled resets it to false
    expectStatus(await srv.mgmt.put(`/edge-routers/${id}`, { name: 'er-off' }), 200)
    expectError(await srv.mgmt.get(`/identities/${id}`), 404, 'NOT_FOUND')
  })

  it('deleting the router deletes its identity and system policy', async () => {
    const id = await create('/edge-routers', { name: 'er-del', isTunnelerEnabled: true })
    expectStatus(await srv.mgmt.del(`/edge-routers/${id}`), 200)
    expectError(await srv.mgmt.get(`/edge-routers/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get(`/identities/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get(`/edge-router-policies/${id}`), 404, 'NOT_FOUND')
  })

  it('refuses a tunneler router named like an existing identity', async () => {
    expectStatus(await srv.mgmt.post('/identities', { name: 'taken-by-identity', type: 'User', isAdmin: false }), 201)
    const res = await srv.mgmt.post('/edge-routers', { name: 'taken-by-identity', isTunnelerEnabled: true })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
  })
})

describe('PUT, PATCH, DELETE and lists', () => {
  it('PATCH keeps absent fields, PUT resets them', async () => {
    const id = await create('/edge-routers', { name: 'er-u', roleAttributes: ['a'], cost: 3, noTraversal: true })
    expectStatus(await srv.mgmt.patch(`/edge-routers/${id}`, { cost: 4, name: null }), 200)
    expect((await srv.mgmt.get(`/edge-routers/${id}`)).body.data).toMatchObject({ name: 'er-u', roleAttributes: ['a'], cost: 4, noTraversal: true })
    expectStatus(await srv.mgmt.put(`/edge-routers/${id}`, { name: 'er-u' }), 200)
    expect((await srv.mgmt.get(`/edge-routers/${id}`)).body.data).toMatchObject({ roleAttributes: [], cost: 0, noTraversal: false })
  })

  it('answers 404 for unknown ids and for fabric routers', async () => {
    const fabric = await create('/routers', { name: 'fabric-only' })
    for (const id of ['nope', fabric]) {
      expectError(await srv.mgmt.get(`/edge-routers/${id}`), 404, 'NOT_FOUND')
      expectError(await srv.mgmt.patch(`/edge-routers/${id}`, { cost: 1 }), 404, 'NOT_FOUND')
      expectError(await srv.mgmt.del(`/edge-routers/${id}`), 404, 'NOT_FOUND')
      expectError(await srv.mgmt.get(`/edge-routers/${id}/identities`), 404, 'NOT_FOUND')
    }
  })

  it('lists edge routers only, with roleFilter and the router filterable fields', async () => {
    await create('/edge-routers', { name: 'er-l1', roleAttributes: ['l-x', 'l-y'] })
    await create('/edge-routers', { name: 'er-l2', roleAttributes: ['l-x'] })
    const names = async (q: string) => (await srv.mgmt.get(`/edge-routers?limit=-1&${q}`)).body.data.map((r: { name: string }) => r.name).sort()
    expect(await names('roleFilter=%23l-x&roleFilter=%23l-y')).toEqual(['er-l1'])
    expect(await names('roleFilter=%23l-y&roleFilter=%23l-x&roleSemantic=AnyOf')).toEqual(['er-l1', 'er-l2'])
    expect(await names(`filter=${encodeURIComponent('cost = 0 and name contains "er-l"')}`)).toEqual(['er-l1', 'er-l2'])
    expect(await names('')).not.toContain('fabric-only')
    const res = await srv.mgmt.get('/edge-routers')
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'cost', 'roleAttributes', 'isTunnelerEnabled', 'isVerified', 'online']))
  })
})

describe('persistence', () => {
  it('keeps edge routers, their identity and system policy across a restart', async () => {
    const id = await create('/edge-routers', { name: 'er-keep', isTunnelerEnabled: true, roleAttributes: ['k'] })
    await srv.restart()
    expect((await srv.mgmt.get(`/edge-routers/${id}`)).body.data).toMatchObject({ name: 'er-keep', isTunnelerEnabled: true, roleAttributes: ['k'] })
    expectStatus(await srv.mgmt.get(`/identities/${id}`), 200)
    expect((await srv.mgmt.get(`/identities/${id}/edge-routers`)).body.data.map((r: { id: string }) => r.id)).toEqual([id])
  })
})
