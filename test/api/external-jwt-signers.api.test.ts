// GET /external-jwt-signers: public on the Client API (an SDK asks before it logs in: edge-api client.yml
// listExternalJwtSigners has no security), admin only on the Management API. No signer exists yet.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

describe('GET /edge/client/v1/external-jwt-signers', () => {
  it('answers the empty list without a session, as the C SDK asks it', async () => {
    const res = await srv.raw.get('/edge/client/v1/external-jwt-signers?limit=25&offset=0')
    expectStatus(res, 200)
    expect(res.body.data).toEqual([])
    expect(res.body.meta.pagination).toEqual({ limit: 25, offset: 0, totalCount: 0 })
    expect(res.body.meta.filterableFields).toContain('issuer')
  })

  it('checks the filter like every list', async () => {
    expectStatus(await srv.raw.get('/edge/client/v1/external-jwt-signers?filter=' + encodeURIComponent('name = "x"')), 200)
    expectError(await srv.raw.get('/edge/client/v1/external-jwt-signers?filter=' + encodeURIComponent('nope = 1')), 400, 'INVALID_FILTER')
  })
})

describe('GET /edge/management/v1/external-jwt-signers', () => {
  it('needs a session', async () => {
    expectError(await srv.raw.get('/edge/management/v1/external-jwt-signers'), 401, 'UNAUTHORIZED')
  })

  it('answers the admin the empty list', async () => {
    const res = await srv.mgmt.get('/external-jwt-signers')
    expectStatus(res, 200)
    expect(res.body.data).toEqual([])
    expect(res.body.meta.pagination.totalCount).toBe(0)
  })
})
