// The advertised address (--advertise, EDGEPLANE_ADVERTISE, key advertise): what clients are told to connect to in
// /version's apiBaseUrls, in enrollment JWTs, the network JWT and GET /protocols, and a name of the server certificate
// on a new PKI.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

describe('an advertised address', () => {
  let srv: TestServer
  beforeAll(async () => {
    srv = await startTestServer({ advertise: { host: 'ctrl.example.net', port: 8441 } })
  })
  afterAll(async () => {
    await srv.stop()
  })

  it('is the base of every apiBaseUrl in /version', async () => {
    const res = await srv.raw.get('/version')
    expectStatus(res, 200)
    for (const binding of Object.values(res.body.data.apiVersions) as any[]) {
      expect(binding.v1.apiBaseUrls).toEqual([`https://ctrl.example.net:8441${binding.v1.path}`])
    }
    expect(srv.server.advertisedUrl).toBe('https://ctrl.example.net:8441')
  })

  it('is the address GET /protocols lists for https, and the issuer and subject of the network JWT', async () => {
    const protocols = await srv.raw.get('/edge/client/v1/protocols')
    expectStatus(protocols, 200)
    expect(protocols.body.data).toEqual({ https: { address: 'ctrl.example.net:8441' } })
    const jwts = await srv.raw.get('/edge/client/v1/network-jwts')
    expectStatus(jwts, 200)
    const claims = JSON.parse(Buffer.from(jwts.body.data[0].token.split('.')[1], 'base64url').toString())
    expect(claims).toMatchObject({ iss: 'https://ctrl.example.net:8441/', sub: 'https://ctrl.example.net:8441/' })
  })

  it('is a name of the server certificate of a new PKI', () => {
    expect(srv.server.pki.server.view.dnsNames).toContain('ctrl.example.net')
    expect(srv.server.pki.sansMissing).toEqual([])
  })
})

describe('without an advertised address', () => {
  let srv: TestServer
  beforeAll(async () => {
    srv = await startTestServer({ host: '0.0.0.0' })
  })
  afterAll(async () => {
    await srv.stop()
  })

  it('advertises localhost and the listener\'s port for a wildcard bind', async () => {
    const res = await srv.raw.get('/version')
    expect(res.body.data.apiVersions['edge-client'].v1.apiBaseUrls).toEqual([`https://localhost:${srv.server.port}/edge/client/v1`])
  })
})
