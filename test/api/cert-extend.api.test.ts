// Certificate extension of the current identity over real TLS (edge-api client.yml
// /current-identity/authenticators/{id}/extend and extend-verify; controller/model/authenticator_manager.go): the
// request must present the authenticator's current certificate; the old certificate logs in until extend-verify
// proves the new one, then only the new one does. Refusals with the real controller's codes.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { makeCsrPem } from '../support/pki.ts'
import { enrollNewIdentity, type EnrolledIdentity } from '../support/enroll.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const certLogin = (tls: { cert: string; key: string }): Promise<ApiResponse> =>
  srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls })

/** An enrolled identity logged in by its certificate: its session token and cert authenticator id. */
async function loggedIn(name: string): Promise<EnrolledIdentity & { token: string; authenticatorId: string }> {
  const me = await enrollNewIdentity(srv, name)
  const login = await certLogin(me)
  expectStatus(login, 200)
  return { ...me, token: login.body.data.token, authenticatorId: login.body.data.authenticatorId }
}

async function newKeyAndCsr(): Promise<{ key: string; csr: string }> {
  const keys = await generateKeyPair('ec-p256')
  return { key: await exportPrivateKeyPem(keys.privateKey), csr: await makeCsrPem(keys) }
}

describe('POST /current-identity/authenticators/{id}/extend, then extend-verify', () => {
  it('issues a certificate for a new key; the old one logs in until the new one is verified, then only the new one', async () => {
    const me = await loggedIn('extend-happy')
    const next = await newKeyAndCsr()
    const client = srv.as(me.token, 'client')
    const res = await client.post(`/current-identity/authenticators/${me.authenticatorId}/extend`, { clientCertCsr: next.csr }, { tls: me })
    expectStatus(res, 200)
    const [issued, ...more] = parseCertificatesPem(res.body.data.clientCert)
    expect(more).toHaveLength(0)
    const [oldLeaf] = parseCertificatesPem(me.cert)
    expect(issued.fingerprintSha1).not.toBe(oldLeaf.fingerprintSha1)
    expect(issued.subjectCn).toBe(me.id)
    expect(issued.uris).toEqual(oldLeaf.uris)
    expect(issued.extKeyUsages).toEqual(['clientAuth'])
    expect(parseCertificatesPem(res.body.data.ca).map((c) => c.isCa)).toEqual([true, true])
    const newCert = { cert: res.body.data.clientCert, key: next.key }

    // pending: the old certificate still logs in, the new one not yet
    expectStatus(await certLogin(me), 200)
    expectError(await certLogin(newCert), 401, 'INVALID_AUTH')
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data.fingerprint).toBe(oldLeaf.fingerprintSha1)

    expectStatus(await client.post(`/current-identity/authenticators/${me.authenticatorId}/extend-verify`, { clientCert: res.body.data.clientCert }), 200)
    expectError(await certLogin(me), 401, 'INVALID_AUTH')
    const login = await certLogin(newCert)
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(me.id)
    expect(login.body.data.authenticatorId).toBe(me.authenticatorId)
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data.fingerprint).toBe(issued.fingerprintSha1)
    // nothing pending any more
    expectError(await client.post(`/current-identity/authenticators/${me.authenticatorId}/extend-verify`, { clientCert: res.body.data.clientCert }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR')
  })

  it('keeps a pending extension across a restart, and a second extension replaces the first', async () => {
    const me = await loggedIn('extend-restart')
    const client = srv.as(me.token, 'client')
    const path = `/current-identity/authenticators/${me.authenticatorId}`
    const first = await client.post(`${path}/extend`, { clientCertCsr: (await newKeyAndCsr()).csr }, { tls: me })
    expectStatus(first, 200)
    const next = await newKeyAndCsr()
    const second = await client.post(`${path}/extend`, { clientCertCsr: next.csr }, { tls: me })
    expectStatus(second, 200)
    await srv.restart()
    expectError(await client.post(`${path}/extend-verify`, { clientCert: first.body.data.clientCert }), 400, 'INVALID_CLIENT_CERT')
    expectStatus(await client.post(`${path}/extend-verify`, { clientCert: second.body.data.clientCert }), 200)
    expectStatus(await certLogin({ cert: second.body.data.clientCert, key: next.key }), 200)
  })

  it('works on the Management API too', async () => {
    const me = await enrollNewIdentity(srv, 'extend-mgmt')
    const login = await srv.raw.post('/edge/management/v1/authenticate?method=cert', {}, { tls: me })
    expectStatus(login, 200)
    const res = await srv.as(login.body.data.token, 'management').post(
      `/current-identity/authenticators/${login.body.data.authenticatorId}/extend`,
      { clientCertCsr: (await newKeyAndCsr()).csr },
      { tls: me },
    )
    expectStatus(res, 200)
  })
})

describe('extend refusals', () => {
  it('401 UNAUTHORIZED without a session, and without the authenticator\'s certificate on the connection', async () => {
    const me = await loggedIn('extend-no-mtls')
    const { csr } = await newKeyAndCsr()
    const path = `/current-identity/authenticators/${me.authenticatorId}/extend`
    expectError(await srv.client.post(path, { clientCertCsr: csr }, { tls: me, session: null }), 401, 'UNAUTHORIZED')
    expectError(await srv.as(me.token, 'client').post(path, { clientCertCsr: csr }), 401, 'UNAUTHORIZED')
    // another identity's certificate on the connection does not do either
    const other = await enrollNewIdentity(srv, 'extend-other-cert')
    expectError(await srv.as(me.token, 'client').post(path, { clientCertCsr: csr }, { tls: other }), 401, 'UNAUTHORIZED')
  })

  it('404 NOT_FOUND for an unknown authenticator, 401 UNAUTHORIZED for another identity\'s', async () => {
    const me = await loggedIn('extend-foreign-a')
    const other = await loggedIn('extend-foreign-b')
    const { csr } = await newKeyAndCsr()
    const client = srv.as(me.token, 'client')
    expectError(await client.post('/current-identity/authenticators/nope/extend', { clientCertCsr: csr }, { tls: me }), 404, 'NOT_FOUND')
    expectError(await client.post(`/current-identity/authenticators/${other.authenticatorId}/extend`, { clientCertCsr: csr }, { tls: me }), 401, 'UNAUTHORIZED')
    expectError(await client.post(`/current-identity/authenticators/${other.authenticatorId}/extend-verify`, { clientCert: other.cert }), 401, 'UNAUTHORIZED')
  })

  it('409 CAN_NOT_UPDATE_AUTHENTICATOR for a updb authenticator', async () => {
    const mine = (await srv.mgmt.get('/current-identity/authenticators')).body.data
    const updb = mine.find((a: any) => a.method === 'updb')
    const { csr } = await newKeyAndCsr()
    expectError(await srv.mgmt.post(`/current-identity/authenticators/${updb.id}/extend`, { clientCertCsr: csr }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR')
    expectError(await srv.mgmt.post(`/current-identity/authenticators/${updb.id}/extend-verify`, { clientCert: 'x' }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR')
  })

  it('400 COULD_NOT_PROCESS_CSR for garbage, a CA request or foreign names; nothing becomes pending', async () => {
    const me = await loggedIn('extend-bad-csr')
    const keys = await generateKeyPair('ec-p256')
    const path = `/current-identity/authenticators/${me.authenticatorId}`
    const client = srv.as(me.token, 'client')
    for (const csr of ['garbage', await makeCsrPem(keys, { askCa: true }), await makeCsrPem(keys, { dnsNames: ['evil.example'] })]) {
      expectError(await client.post(`${path}/extend`, { clientCertCsr: csr }, { tls: me }), 400, 'COULD_NOT_PROCESS_CSR')
    }
    expectError(await client.post(`${path}/extend-verify`, { clientCert: me.cert }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR')
  })

  it('extend-verify: 400 INVALID_CLIENT_CERT for garbage, a chain, or a certificate other than the pending one', async () => {
    const me = await loggedIn('extend-bad-verify')
    const path = `/current-identity/authenticators/${me.authenticatorId}`
    const client = srv.as(me.token, 'client')
    const res = await client.post(`${path}/extend`, { clientCertCsr: (await newKeyAndCsr()).csr }, { tls: me })
    expectStatus(res, 200)
    const [leaf] = me.cert.split(/(?<=-----END CERTIFICATE-----\n?)/)
    for (const clientCert of ['garbage', res.body.data.clientCert + res.body.data.ca, leaf]) {
      expectError(await client.post(`${path}/extend-verify`, { clientCert }), 400, 'INVALID_CLIENT_CERT')
    }
    expectStatus(await certLogin(me), 200)
  })
})
