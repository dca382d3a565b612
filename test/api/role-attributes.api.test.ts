// Management API role attributes in use (edge-api management.yml listRoleAttributesEnvelope; controller-behaviour.md §2).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
  await create('/identities', { name: 'ra-i1', type: 'User', isAdmin: false, roleAttributes: ['sales', 'eu'] })
  await create('/identities', { name: 'ra-i2', type: 'User', isAdmin: false, roleAttributes: ['eu', 'ops'] })
  await create('/services', { name: 'ra-s1', encryptionRequired: true, roleAttributes: ['web'] })
  await create('/edge-routers', { name: 'ra-e1', roleAttributes: ['public', 'eu-west'] })
})
afterAll(async () => {
  await srv.stop()
})

const create = (path: string, body: Record<string, unknown>) => srv.create(path, body)

describe('role attribute lists', () => {
  it('list the attributes in use per kind as sorted strings', async () => {
    const get = async (p: string) => {
      const res = await srv.mgmt.get(p)
      expectStatus(res, 200)
      return res.body
    }
    const identities = await get('/identity-role-attributes')
    expect(identities.data).toEqual(['eu', 'ops', 'sales'])
    expect(identities.meta.pagination.totalCount).toBe(3)
    expect((await get('/service-role-attributes')).data).toEqual(['web'])
    expect((await get('/edge-router-role-attributes')).data).toEqual(['eu-west', 'public'])
    expect((await get('/posture-check-role-attributes')).data).toEqual([])
  })

  it('filter on id (the attribute); every match without a limit; a limit and offset, as parameters or in the filter, page', async () => {
    const q = (f: string, extra = '') => srv.mgmt.get(`/identity-role-attributes?filter=${encodeURIComponent(f)}${extra}`)
    expect((await q('id contains "e"')).body.data).toEqual(['eu', 'sales'])
    expect((await q('id != "eu"')).body.data).toEqual(['ops', 'sales'])
    expect((await q('id != "eu"', '&limit=1&offset=1')).body.data).toEqual(['sales'])
    expect((await q('true limit 1')).body.data).toEqual(['eu'])
    expect((await q('true sort by id desc')).body.data).toEqual(['sales', 'ops', 'eu'])
    expectError(await q('name = "eu"'), 400, 'INVALID_FILTER')
  })

  it('follow changes: an attribute no entity carries any more disappears', async () => {
    const id = await create('/services', { name: 'ra-s2', encryptionRequired: true, roleAttributes: ['temp'] })
    expect((await srv.mgmt.get('/service-role-attributes')).body.data).toEqual(['temp', 'web'])
    expectStatus(await srv.mgmt.patch(`/services/${id}`, { roleAttributes: [] }), 200)
    expect((await srv.mgmt.get('/service-role-attributes')).body.data).toEqual(['web'])
  })

  it('are admin only', async () => {
    expectError(await srv.mgmt.get('/identity-role-attributes', { session: null }), 401, 'UNAUTHORIZED')
  })
})
