// Management API /terminators (edge-api management.yml terminatorCreate/Update/Patch/Detail).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { TerminatorDetail } from '../../schemas/terminator.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
const ids: Record<string, string> = {}
beforeAll(async () => {
  srv = await startTestServer()
  ids.svc = await create('/services', { name: 't-svc', encryptionRequired: true })
  ids.svc2 = await create('/services', { name: 't-svc-2', encryptionRequired: true })
  ids.er = await create('/edge-routers', { name: 't-er' })
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)
const base = () => ({ service: ids.svc, router: ids.er, binding: 'transport', address: 'tcp:localhost:80' })

describe('POST /terminators', () => {
  it('creates a terminator shown with service and router as entity references', async () => {
    const id = await create('/terminators', { ...base(), identity: 'host-1', cost: 10, precedence: 'required' })
    const d = (await srv.mgmt.get(`/terminators/${id}`)).body.data
    expect([...Value.Errors(TerminatorDetail, d)]).toEqual([])
    expect(d).toMatchObject({ serviceId: ids.svc, routerId: ids.er, binding: 'transport', address: 'tcp:localhost:80', identity: 'host-1' })
    expect(d).toMatchObject({ cost: 10, dynamicCost: 10, precedence: 'required' })
    expect(d.service).toMatchObject({ id: ids.svc, name: 't-svc', entity: 'services' })
    expect(d.router).toMatchObject({ id: ids.er, name: 't-er', entity: 'routers' })
    const list = await srv.mgmt.get(`/services/${ids.svc}/terminators`)
    expect(list.body.data.map((t: { id: string }) => t.id)).toContain(id)
  })

  const bad: [string, () => Record<string, unknown>, string][] = [
    ['a missing service', () => ({ ...base(), service: undefined }), 'service'],
    ['a missing address', () => ({ ...base(), address: undefined }), 'address'],
    ['an unknown service', () => ({ ...base(), service: 'nope' }), 'service'],
    ['an unknown router', () => ({ ...base(), router: 'nope' }), 'router'],
    ['a cost above 65535', () => ({ ...base(), cost: 65536 }), 'cost'],
    ['an unknown precedence', () => ({ ...base(), precedence: 'top' }), 'precedence'],
  ]
  for (const [what, body, field] of bad) {
    it(`rejects ${what} with 400 COULD_NOT_VALIDATE on field ${field}`, async () => {
      const res = await srv.mgmt.post('/terminators', body())
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    })
  }
})

describe('PUT, PATCH, DELETE /terminators/:id', () => {
  it('PATCH moves a terminator to another service; PUT resets cost and precedence', async () => {
    const id = await create('/terminators', { ...base(), cost: 5, precedence: 'failed' })
    expectStatus(await srv.mgmt.patch(`/terminators/${id}`, { service: ids.svc2 }), 200)
    expect((await srv.mgmt.get(`/terminators/${id}`)).body.data).toMatchObject({ serviceId: ids.svc2, cost: 5, precedence: 'failed' })
    expectStatus(await srv.mgmt.put(`/terminators/${id}`, { ...base(), address: 'tcp:h:1' }), 200)
    expect((await srv.mgmt.get(`/terminators/${id}`)).body.data).toMatchObject({ serviceId: ids.svc, address: 'tcp:h:1', cost: 0, precedence: 'default' })
    expectError(await srv.mgmt.put(`/terminators/${id}`, { service: ids.svc }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.patch(`/terminators/${id}`, { router: 'nope' }), 400, 'COULD_NOT_VALIDATE')
  })

  it('DELETE removes it; unknown ids are 404', async () => {
    const id = await create('/terminators', base())
    expectStatus(await srv.mgmt.del(`/terminators/${id}`), 200)
    expectError(await srv.mgmt.get(`/terminators/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.patch('/terminators/nope', { cost: 1 }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del('/terminators/nope'), 404, 'NOT_FOUND')
  })

  it('filters on service and router', async () => {
    const id = await create('/terminators', { ...base(), service: ids.svc2, address: 'tcp:filter:1' })
    const res = await srv.mgmt.get(`/terminators?filter=${encodeURIComponent(`service = "${ids.svc2}" and address = "tcp:filter:1"`)}`)
    expect(res.body.data.map((t: { id: string }) => t.id)).toEqual([id])
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['service', 'router', 'binding', 'address', 'cost', 'precedence']))
  })

  it('deleting the service deletes its terminators', async () => {
    const svc = await create('/services', { name: 't-svc-gone', encryptionRequired: true })
    const id = await create('/terminators', { ...base(), service: svc })
    expectStatus(await srv.mgmt.del(`/services/${svc}`), 200)
    expectError(await srv.mgmt.get(`/terminators/${id}`), 404, 'NOT_FOUND')
  })
})
