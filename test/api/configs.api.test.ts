// Management API /configs (edge-api management.yml configCreate/Update/Patch/Detail; seed "Config type and config").
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { ConfigDetail } from '../../schemas/config.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
let typeId: string
beforeAll(async () => {
  srv = await startTestServer()
  typeId = await create('/config-types', {
    name: 'port-type',
    schema: { type: 'object', properties: { port: { type: 'integer', maximum: 65535 } }, required: ['port'] },
  })
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)

describe('POST /configs', () => {
  it('creates a config whose data matches its type, shown with its type as an entity reference', async () => {
    const id = await create('/configs', { name: 'cfg-a', configTypeId: typeId, data: { port: 80 } })
    const d = (await srv.mgmt.get(`/configs/${id}`)).body.data
    expect([...Value.Errors(ConfigDetail, d)]).toEqual([])
    expect(d).toMatchObject({ name: 'cfg-a', configTypeId: typeId, data: { port: 80 } })
    expect(d.configType).toMatchObject({ id: typeId, name: 'port-type', entity: 'config-types' })
  })

  it('accepts the config type by name', async () => {
    const id = await create('/configs', { name: 'cfg-by-name', configTypeId: 'port-type', data: { port: 1 } })
    expect((await srv.mgmt.get(`/configs/${id}`)).body.data.configTypeId).toBe(typeId)
  })

  const bad: [string, () => Record<string, unknown>, string][] = [
    ['a missing name', () => ({ configTypeId: typeId, data: { port: 1 } }), 'name'],
    ['a missing data', () => ({ name: 'cfg-x1', configTypeId: typeId }), 'data'],
    ['a missing configTypeId', () => ({ name: 'cfg-x2', data: {} }), 'configTypeId'],
    ['an unknown config type', () => ({ name: 'cfg-x3', configTypeId: 'nope', data: {} }), 'configTypeId'],
    ['data that is not an object', () => ({ name: 'cfg-x4', configTypeId: typeId, data: [1] }), 'data'],
    ['data missing a required field of the schema', () => ({ name: 'cfg-x5', configTypeId: typeId, data: {} }), 'data'],
    ['data breaking the schema', () => ({ name: 'cfg-x6', configTypeId: typeId, data: { port: 70000 } }), 'data.port'],
  ]
  for (const [what, body, field] of bad) {
    it(`rejects ${what} with 400 COULD_NOT_VALIDATE on field ${field}`, async () => {
      const res = await srv.mgmt.post('/configs', body())
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    })
  }
})

describe('PUT, PATCH, DELETE /configs/:id', () => {
  it('PATCH changes data (checked again), PUT replaces name, data and tags', async () => {
    const id = await create('/configs', { name: 'cfg-u', configTypeId: typeId, data: { port: 1 }, tags: { a: 'b' } })
    expectStatus(await srv.mgmt.patch(`/configs/${id}`, { data: { port: 2 } }), 200)
    expect((await srv.mgmt.get(`/configs/${id}`)).body.data).toMatchObject({ name: 'cfg-u', data: { port: 2 }, tags: { a: 'b' } })
    expectError(await srv.mgmt.patch(`/configs/${id}`, { data: { port: 'x' } }), 400, 'COULD_NOT_VALIDATE')
    expectStatus(await srv.mgmt.put(`/configs/${id}`, { name: 'cfg-u2', data: { port: 3 } }), 200)
    expect((await srv.mgmt.get(`/configs/${id}`)).body.data).toMatchObject({ name: 'cfg-u2', data: { port: 3 }, tags: {} })
    expectError(await srv.mgmt.put(`/configs/${id}`, { name: 'cfg-u3' }), 400, 'COULD_NOT_VALIDATE')
  })

  it('refuses to delete a config a service uses with 409, and lists that service', async () => {
    const id = await create('/configs', { name: 'cfg-used', configTypeId: typeId, data: { port: 1 } })
    const svc = await create('/services', { name: 'svc-uses-cfg', encryptionRequired: true, configs: [id] })
    expectError(await srv.mgmt.del(`/configs/${id}`), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY')
    const services = await srv.mgmt.get(`/configs/${id}/services`)
    expectStatus(services, 200)
    expect(services.body.data.map((s: { id: string }) => s.id)).toEqual([svc])
    expectStatus(await srv.mgmt.patch(`/services/${svc}`, { configs: [] }), 200)
    expectStatus(await srv.mgmt.del(`/configs/${id}`), 200)
  })

  it('filters on name and type, and answers 404 for unknown ids', async () => {
    const res = await srv.mgmt.get(`/configs?filter=${encodeURIComponent(`type = "${typeId}" and name = "cfg-a"`)}`)
    expect(res.body.data.map((c: { name: string }) => c.name)).toEqual(['cfg-a'])
    expectError(await srv.mgmt.get('/configs/nope'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get('/configs/nope/services'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.patch('/configs/nope', { name: 'x' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del('/configs/nope'), 404, 'NOT_FOUND')
  })
})
