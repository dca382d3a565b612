// Management API /routers, the fabric view (edge-api management.yml routerCreate/Update/Patch/Detail; seed "Router").
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { RouterDetail } from '../../schemas/router.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)

describe('/routers', () => {
  it('creates a fabric-only router, absent from /edge-routers', async () => {
    const id = await create('/routers', { name: 'r-a', cost: 9, noTraversal: true })
    const d = (await srv.mgmt.get(`/routers/${id}`)).body.data
    expect([...Value.Errors(RouterDetail, d)]).toEqual([])
    expect(d).toMatchObject({ name: 'r-a', cost: 9, noTraversal: true, disabled: false, isOnline: false, isVerified: false, fingerprint: '' })
    expectError(await srv.mgmt.get(`/edge-routers/${id}`), 404, 'NOT_FOUND')
  })

  it('lists every router, edge ones included', async () => {
    const edge = await create('/edge-routers', { name: 'r-edge' })
    const fabric = await create('/routers', { name: 'r-fabric' })
    const ids = (await srv.mgmt.get('/routers?limit=-1')).body.data.map((r: { id: string }) => r.id)
    expect(ids).toEqual(expect.arrayContaining([edge, fabric]))
    expect((await srv.mgmt.get(`/routers?filter=${encodeURIComponent('name = "r-edge"')}`)).body.data.map((r: { id: string }) => r.id)).toEqual([edge])
  })

  it('validates name and cost, and names are unique across edge and fabric routers', async () => {
    expectError(await srv.mgmt.post('/routers', {}), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/routers', { name: 'r-x', cost: 70000 }), 400, 'COULD_NOT_VALIDATE')
    await create('/edge-routers', { name: 'r-shared' })
    const res = await srv.mgmt.post('/routers', { name: 'r-shared' })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
  })

  it('PUT resets the fabric fields only: an edge router keeps its edge fields', async () => {
    const id = await create('/edge-routers', { name: 'r-e2', roleAttributes: ['keep'], isTunnelerEnabled: true, cost: 5 })
    expectStatus(await srv.mgmt.put(`/routers/${id}`, { name: 'r-e2-renamed' }), 200)
    const d = (await srv.mgmt.get(`/edge-routers/${id}`)).body.data
    expect(d).toMatchObject({ name: 'r-e2-renamed', cost: 0, roleAttributes: ['keep'], isTunnelerEnabled: true })
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.name).toBe('r-e2-renamed')
    expectStatus(await srv.mgmt.patch(`/routers/${id}`, { cost: 11 }), 200)
    expect((await srv.mgmt.get(`/routers/${id}`)).body.data.cost).toBe(11)
  })

  it('DELETE removes a router (and an edge router identity); unknown ids are 404', async () => {
    const id = await create('/edge-routers', { name: 'r-del', isTunnelerEnabled: true })
    expectStatus(await srv.mgmt.del(`/routers/${id}`), 200)
    expectError(await srv.mgmt.get(`/routers/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get(`/identities/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get('/routers/nope'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.patch('/routers/nope', { cost: 1 }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del('/routers/nope'), 404, 'NOT_FOUND')
  })
})
