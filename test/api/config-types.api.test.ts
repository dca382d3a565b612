// Management API /config-types (edge-api management.yml configTypeCreate/Update/Patch/Detail; controller-behaviour.md §10).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { ConfigTypeDetail } from '../../schemas/config.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)
const SCHEMA = { type: 'object', properties: { port: { type: 'integer' } }, required: ['port'] }

describe('built-in config types', () => {
  it('lists the built-in types, which cannot be changed or deleted', async () => {
    const res = await srv.mgmt.get(`/config-types?limit=-1&filter=${encodeURIComponent('name = "intercept.v1"')}`)
    expectStatus(res, 200)
    expect(res.body.data).toHaveLength(1)
    expect(res.body.data[0].id).toBe('g7cIWbcGg')
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'schema', 'target']))
    const all = (await srv.mgmt.get('/config-types?limit=-1')).body.data.map((t: { name: string }) => t.name)
    expect(all).toEqual(expect.arrayContaining(['host.v1', 'host.v2', 'intercept.v1', 'router.link.v1', 'ziti-tunneler-client.v1']))
    expectError(await srv.mgmt.patch('/config-types/g7cIWbcGg', { name: 'mine' }), 400, 'ENTITY_CAN_NOT_BE_UPDATED')
    expectError(await srv.mgmt.del('/config-types/g7cIWbcGg'), 400, 'ENTITY_CAN_NOT_BE_DELETED')
  })
})

describe('POST, PUT, PATCH, DELETE /config-types', () => {
  it('creates a config type (target defaults to service) and reads it back', async () => {
    const id = await create('/config-types', { name: 'ct-a', schema: SCHEMA, tags: { team: 'x' } })
    const d = (await srv.mgmt.get(`/config-types/${id}`)).body.data
    expect([...Value.Errors(ConfigTypeDetail, d)]).toEqual([])
    expect(d).toMatchObject({ id, name: 'ct-a', schema: SCHEMA, target: 'service', tags: { team: 'x' } })
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['a missing name', { schema: {} }, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a schema that is not an object', { name: 'ct-x1', schema: 'nope' }, 'schema'],
    ['a schema that is not a JSON schema', { name: 'ct-x2', schema: { type: 'nonsense' } }, 'schema'],
    ['an unknown target', { name: 'ct-x3', target: 'elsewhere' }, 'target'],
  ]
  for (const [what, body, field] of bad) {
    it(`rejects ${what} with 400 COULD_NOT_VALIDATE on field ${field}`, async () => {
      const res = await srv.mgmt.post('/config-types', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    })
  }

  it('rejects a duplicate name', async () => {
    await create('/config-types', { name: 'ct-dup' })
    const res = await srv.mgmt.post('/config-types', { name: 'ct-dup' })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
  })

  it('PATCH keeps absent fields, PUT resets them', async () => {
    const id = await create('/config-types', { name: 'ct-u', schema: SCHEMA, tags: { a: 'b' } })
    expectStatus(await srv.mgmt.patch(`/config-types/${id}`, { name: 'ct-u2' }), 200)
    expect((await srv.mgmt.get(`/config-types/${id}`)).body.data).toMatchObject({ name: 'ct-u2', schema: SCHEMA, tags: { a: 'b' } })
    expectStatus(await srv.mgmt.put(`/config-types/${id}`, { name: 'ct-u3' }), 200)
    expect((await srv.mgmt.get(`/config-types/${id}`)).body.data).toMatchObject({ name: 'ct-u3', schema: {}, tags: {} })
    expectError(await srv.mgmt.put(`/config-types/${id}`, {}), 400, 'COULD_NOT_VALIDATE')
  })

  it('refuses to delete a type that has configs with 409, lists them, and deletes it once they are gone', async () => {
    const id = await create('/config-types', { name: 'ct-used', schema: SCHEMA })
    const cfg = await create('/configs', { name: 'ct-used-cfg', configTypeId: id, data: { port: 1 } })
    expectError(await srv.mgmt.del(`/config-types/${id}`), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY')
    const configs = await srv.mgmt.get(`/config-types/${id}/configs`)
    expectStatus(configs, 200)
    expect(configs.body.data.map((c: { id: string }) => c.id)).toEqual([cfg])
    expectStatus(await srv.mgmt.del(`/configs/${cfg}`), 200)
    expectStatus(await srv.mgmt.del(`/config-types/${id}`), 200)
    expectError(await srv.mgmt.get(`/config-types/${id}`), 404, 'NOT_FOUND')
  })

  it('answers 404 for unknown ids', async () => {
    expectError(await srv.mgmt.get('/config-types/nope'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get('/config-types/nope/configs'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.patch('/config-types/nope', { name: 'x' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del('/config-types/nope'), 404, 'NOT_FOUND')
  })
})
