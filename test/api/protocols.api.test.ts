// The listening Edge protocols (edge-api client.yml GET /protocols, listProtocols; the real controller's
// routes/protocol_router.go): `https` at the advertised host:port, without a scheme, on the Client API only, without
// a session. The advertised address's own case is in advertise.api.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

describe('GET /protocols', () => {
  it('lists https at the listener\'s host:port, without a session, on the Client API and its aliases', async () => {
    for (const path of ['/edge/client/v1/protocols', '/protocols', '/edge/v1/protocols']) {
      const res = await srv.raw.get(path)
      expectStatus(res, 200)
      expect(res.body).toEqual({ data: { https: { address: `127.0.0.1:${srv.server.port}` } }, meta: {} })
    }
  })

  it('answers the same with a session, or one that does not exist', async () => {
    const token = await srv.login('admin', 'admin-pass-1', 'client')
    expect((await srv.as(token, 'client').get('/protocols')).body.data).toEqual({ https: { address: `127.0.0.1:${srv.server.port}` } })
    expectStatus(await srv.raw.get('/edge/client/v1/protocols', { session: 'nope' }), 200)
  })

  it('is not on the Management API, and takes no other method', async () => {
    expect((await srv.mgmt.get('/protocols', { offSpec: 'the Management API has no /protocols' })).status).toBe(404)
    expectError(await srv.raw.post('/edge/client/v1/protocols', {}, { offSpec: 'the spec has only GET /protocols' }), 405, 'METHOD_NOT_ALLOWED')
  })
})
