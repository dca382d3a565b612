// Wire answers that clients generated from the official specs (edge-api client.yml, management.yml) need beyond the
// shape checks every answer gets (test/support/spec-check.ts): operations those specs have that edgeplane once did
// not serve. Issue 9, part 1.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, expectError, expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'

let srv: TestServer
let user: ApiClient
beforeAll(async () => {
  srv = await startTestServer()
  const id = await srv.create('/identities', { name: 'plain-user', type: 'User', isAdmin: false })
  await srv.create('/authenticators', { identityId: id, method: 'updb', username: 'plain-user', password: 'plain-user-1' })
  user = srv.as(await srv.login('plain-user', 'plain-user-1', 'client'), 'client')
})
afterAll(async () => {
  await srv.stop()
})

describe('/transit-routers (the older name of /routers, still in management.yml)', () => {
  it('creates, reads, lists, updates and deletes the same routers as /routers', async () => {
    const created = await srv.mgmt.post('/transit-routers', { name: 'transit-a', cost: 3 })
    expectStatus(created, 201)
    const id = created.body.data.id
    expect((await srv.mgmt.get(`/routers/${id}`)).body.data).toMatchObject({ name: 'transit-a', cost: 3 })
    const viaOld = await srv.mgmt.get(`/transit-routers/${id}`)
    expectStatus(viaOld, 200)
    expect(viaOld.body.data).toEqual((await srv.mgmt.get(`/routers/${id}`)).body.data)
    const listed = await srv.mgmt.get(`/transit-routers?filter=${encodeURIComponent('name = "transit-a"')}`)
    expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([id])
    expectStatus(await srv.mgmt.patch(`/transit-routers/${id}`, { cost: 5 }), 200)
    expect((await srv.mgmt.get(`/routers/${id}`)).body.data.cost).toBe(5)
    expectStatus(await srv.mgmt.put(`/transit-routers/${id}`, { name: 'transit-b' }), 200)
    expect((await srv.mgmt.get(`/routers/${id}`)).body.data).toMatchObject({ name: 'transit-b', cost: 0 })
    expectStatus(await srv.mgmt.del(`/transit-routers/${id}`), 200)
    expectError(await srv.mgmt.get(`/routers/${id}`), 404, 'NOT_FOUND')
  })

  it('is admin only, as /routers', async () => {
    const asUser = srv.as(user.session, 'management')
    expectError(await asUser.get('/transit-routers'), 401, 'UNAUTHORIZED')
    expectError(await srv.raw.get('/edge/management/v1/transit-routers'), 401, 'UNAUTHORIZED')
  })
})

describe('GET /authenticators?filter=identity="<id>"', () => {
  it('filters authenticators by their identity, as by identityId', async () => {
    const a = await srv.create('/identities', { name: 'auth-owner-a', type: 'User', isAdmin: false })
    const b = await srv.create('/identities', { name: 'auth-owner-b', type: 'User', isAdmin: false })
    const authA = await srv.create('/authenticators', { identityId: a, method: 'updb', username: 'auth-owner-a', password: 'auth-owner-a-1' })
    await srv.create('/authenticators', { identityId: b, method: 'updb', username: 'auth-owner-b', password: 'auth-owner-b-1' })
    for (const filter of [`identity = "${a}"`, `identityId = "${a}"`, `identity in ["${a}", "${a}"]`]) {
      const res = await srv.mgmt.get(`/authenticators?filter=${encodeURIComponent(filter)}`)
      expectStatus(res, 200)
      expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([authA])
    }
    const both = await srv.mgmt.get(`/authenticators?filter=${encodeURIComponent(`identity in ["${a}", "${b}"] and method = "updb"`)}`)
    expect(both.body.data).toHaveLength(2)
    expect((await srv.mgmt.get('/authenticators?limit=1')).body.meta.filterableFields).toContain('identity')
  })
})

describe('PUT, PATCH and DELETE /edge/client/v1/services/{id} (in client.yml; the Management API\'s rules)', () => {
  it('lets an admin update and delete a service through the Client API', async () => {
    const admin = srv.as(await srv.login(ADMIN.username, ADMIN.password, 'client'), 'client')
    const id = await srv.create('/services', { name: 'client-side-edit', encryptionRequired: true })
    expectStatus(await admin.patch(`/services/${id}`, { roleAttributes: ['edited'] }), 200)
    expect((await srv.mgmt.get(`/services/${id}`)).body.data.roleAttributes).toEqual(['edited'])
    expectStatus(await admin.put(`/services/${id}`, { name: 'client-side-put' }), 200)
    const put = (await srv.mgmt.get(`/services/${id}`)).body.data
    expect(put.name).toBe('client-side-put')
    expect(put.roleAttributes ?? []).toEqual([])
    expectError(await admin.put(`/services/${id}`, {}), 400, 'COULD_NOT_VALIDATE')
    expectStatus(await admin.del(`/services/${id}`), 200)
    expectError(await srv.mgmt.get(`/services/${id}`), 404, 'NOT_FOUND')
    expectError(await admin.del(`/services/${id}`), 404, 'NOT_FOUND')
  })

  it('refuses non-admins and anonymous callers with 401 and changes nothing', async () => {
    const id = await srv.create('/services', { name: 'not-yours', encryptionRequired: true })
    expectError(await user.patch(`/services/${id}`, { name: 'taken-over' }), 401, 'UNAUTHORIZED')
    expectError(await user.put(`/services/${id}`, { name: 'taken-over' }), 401, 'UNAUTHORIZED')
    expectError(await user.del(`/services/${id}`), 401, 'UNAUTHORIZED')
    expectError(await srv.client.del(`/services/${id}`), 401, 'UNAUTHORIZED')
    expect((await srv.mgmt.get(`/services/${id}`)).body.data.name).toBe('not-yours')
  })
})
