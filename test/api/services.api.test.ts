// Management API /services (edge-api management.yml serviceCreate/Update/Patch/Detail; controller-behaviour.md §2, §8).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { ServiceDetail } from '../../schemas/service.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)
const filter = (f: string) => `filter=${encodeURIComponent(f)}`

describe('POST /services', () => {
  it('creates a service with defaults; the management view has permissions ["Invalid"] for a caller without any', async () => {
    const res = await srv.mgmt.post('/services', { name: 'svc-a', encryptionRequired: true, roleAttributes: ['web'] })
    expectStatus(res, 201)
    expect(res.body.data._links.self.href).toBe(`./services/${res.body.data.id}`)
    const d = (await srv.mgmt.get(`/services/${res.body.data.id}`)).body.data
    expect([...Value.Errors(ServiceDetail, d)]).toEqual([])
    expect(d.name).toBe('svc-a')
    expect(d.roleAttributes).toEqual(['web'])
    expect(d.terminatorStrategy).toBe('smartrouting')
    expect(d.maxIdleTimeMillis).toBe(0)
    expect(d.encryptionRequired).toBe(true)
    expect(d.configs).toEqual([])
    expect(d.config).toEqual({})
    expect(d.permissions).toEqual(['Invalid'])
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['a missing name', { encryptionRequired: true }, 'name'],
    ['a missing encryptionRequired', { name: 'svc-x1' }, 'encryptionRequired'],
    ['an empty name', { name: '', encryptionRequired: true }, 'name'],
    ['a role attribute starting with #', { name: 'svc-x2', encryptionRequired: true, roleAttributes: ['#x'] }, 'roleAttributes'],
    ['an unknown config', { name: 'svc-x3', encryptionRequired: true, configs: ['nope'] }, 'configs'],
    ['a negative maxIdleTimeMillis', { name: 'svc-x4', encryptionRequired: true, maxIdleTimeMillis: -1 }, 'maxIdleTimeMillis'],
  ]
  for (const [what, body, field] of bad) {
    it(`rejects ${what} with 400 COULD_NOT_VALIDATE on field ${field}`, async () => {
      const res = await srv.mgmt.post('/services', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field.split('.')[0]).toBe(field)
    })
  }

  it('rejects a duplicate name with 400 COULD_NOT_VALIDATE on field name', async () => {
    await create('/services', { name: 'svc-dup', encryptionRequired: false })
    const res = await srv.mgmt.post('/services', { name: 'svc-dup', encryptionRequired: false })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
  })
})

describe('PUT, PATCH and DELETE /services/:id', () => {
  it('PATCH changes the given fields; encryptionRequired is read-only', async () => {
    const id = await create('/services', { name: 'svc-p', encryptionRequired: true, roleAttributes: ['a'], maxIdleTimeMillis: 5 })
    expectStatus(await srv.mgmt.patch(`/services/${id}`, { roleAttributes: ['b'], encryptionRequired: false }), 200)
    const d = (await srv.mgmt.get(`/services/${id}`)).body.data
    expect(d.roleAttributes).toEqual(['b'])
    expect(d.maxIdleTimeMillis).toBe(5)
    expect(d.encryptionRequired).toBe(true)
  })

  it('PUT resets absent fields', async () => {
    const id = await create('/services', { name: 'svc-u', encryptionRequired: true, roleAttributes: ['a'], terminatorStrategy: 'weighted', tags: { k: 'v' } })
    expectStatus(await srv.mgmt.put(`/services/${id}`, { name: 'svc-u2' }), 200)
    const d = (await srv.mgmt.get(`/services/${id}`)).body.data
    expect(d.name).toBe('svc-u2')
    expect(d.roleAttributes).toBeNull()
    expect(d.terminatorStrategy).toBe('smartrouting')
    expect(d.tags).toEqual({})
  })

  it('PUT without a name is 400; unknown ids are 404', async () => {
    const id = await create('/services', { name: 'svc-v', encryptionRequired: true })
    expectError(await srv.mgmt.put(`/services/${id}`, {}), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.get('/services/nope'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.patch('/services/nope', { name: 'x' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.put('/services/nope', { name: 'x' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del('/services/nope'), 404, 'NOT_FOUND')
  })

  it('DELETE removes the service and drops its @id from policies', async () => {
    const id = await create('/services', { name: 'svc-d', encryptionRequired: true })
    const sp = await create('/service-policies', { name: 'sp-svc-d', type: 'Dial', semantic: 'AnyOf', serviceRoles: [`@${id}`, '#other'] })
    expectStatus(await srv.mgmt.del(`/services/${id}`), 200)
    expectError(await srv.mgmt.get(`/services/${id}`), 404, 'NOT_FOUND')
    expect((await srv.mgmt.get(`/service-policies/${sp}`)).body.data.serviceRoles).toEqual(['#other'])
  })
})

describe('GET /services', () => {
  it('filters on the service fields and honours roleFilter/roleSemantic', async () => {
    await create('/services', { name: 'rf-1', encryptionRequired: true, roleAttributes: ['rf-a', 'rf-b'] })
    await create('/services', { name: 'rf-2', encryptionRequired: true, roleAttributes: ['rf-a'] })
    const names = async (q: string) => (await srv.mgmt.get(`/services?${q}`)).body.data.map((s: { name: string }) => s.name).sort()
    expect(await names('roleFilter=%23rf-a&roleFilter=%23rf-b')).toEqual(['rf-1'])
    expect(await names('roleFilter=%23rf-a&roleFilter=%23rf-b&roleSemantic=AnyOf')).toEqual(['rf-1', 'rf-2'])
    expect(await names(filter('anyOf(roleAttributes) = "rf-a" and name = "rf-2"'))).toEqual(['rf-2'])
    const res = await srv.mgmt.get(`/services?${filter('name contains "rf-"')}`)
    expect(res.body.meta.pagination.totalCount).toBe(2)
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'terminatorStrategy', 'roleAttributes', 'configs', 'isFabricOnly']))
    expectError(await srv.mgmt.get(`/services?${filter('nope = 1')}`), 400, 'INVALID_FILTER')
  })

  it('fills config for the configTypes asked for, and lists the configs of a service', async () => {
    const cfg = await create('/configs', { name: 'svc-host', configTypeId: 'host.v1', data: { protocol: 'tcp', address: 'localhost', port: 80 } })
    const id = await create('/services', { name: 'svc-cfg', encryptionRequired: true, configs: [cfg] })
    const d = (await srv.mgmt.get(`/services/${id}?configTypes=host.v1`)).body.data
    expect(d.configs).toEqual([cfg])
    expect(d.config).toEqual({ 'host.v1': { protocol: 'tcp', address: 'localhost', port: 80 } })
    const list = await srv.mgmt.get(`/services/${id}/configs`)
    expectStatus(list, 200)
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([cfg])
    expectError(await srv.mgmt.get('/services/nope/configs'), 404, 'NOT_FOUND')
  })
})

describe('persistence', () => {
  it('keeps services across a restart', async () => {
    const id = await create('/services', { name: 'svc-keep', encryptionRequired: false, roleAttributes: ['k'] })
    await srv.restart()
    const d = (await srv.mgmt.get(`/services/${id}`)).body.data
    expect(d.name).toBe('svc-keep')
    expect(d.encryptionRequired).toBe(false)
    expect(d.roleAttributes).toEqual(['k'])
  })
})
