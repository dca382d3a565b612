// A client acting as an SDK does, over real TLS: read /version and the external JWT signers without a session,
// enroll with the one-time token of its JWT (EC P-256 and RSA 2048 keys, both enroll forms), log in by certificate
// over mTLS (POST /authenticate?method=cert on both APIs), then list services and read the current identity.
// Certificate login failures are all 401 INVALID_AUTH (controller-behaviour.md §4 "cert").
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair, type KeySpec } from '../../src/pki/pki-keys.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { makeCsrPem, makeForeignClientCert } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
  await srv.create('/services', { name: 'sdk-web', encryptionRequired: true, roleAttributes: ['sdk-web'] })
  await srv.create('/service-policies', { name: 'sdk-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#sdk'], serviceRoles: ['#sdk-web'], postureCheckRoles: [] })
})
afterAll(async () => {
  await srv.stop()
})

interface Enrolled {
  id: string
  /** The certificate chain the enrollment answered (leaf, then intermediate). */
  cert: string
  key: string
}

/** What an SDK does with a JWT: make a key and a CSR, and enroll by the chosen form. */
async function enroll(name: string, keySpec: KeySpec, form: 'ott' | 'legacy'): Promise<Enrolled> {
  const id = await srv.create('/identities', { name, type: 'Device', isAdmin: false, roleAttributes: ['sdk'], enrollment: { ott: true } })
  const token = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ott.token
  const keys = await generateKeyPair(keySpec)
  const csr = await makeCsrPem(keys, { commonName: name })
  const res =
    form === 'ott'
      ? await srv.client.post('/enroll/ott', { token, clientCsr: csr }, { session: null })
      : await srv.client('POST', `/enroll?method=ott&token=${token}`, { rawBody: csr, headers: { 'content-type': 'application/x-pem-file' }, session: null })
  expectStatus(res, 200)
  return { id, cert: res.body.data.cert, key: await exportPrivateKeyPem(keys.privateKey) }
}

const certLogin = (api: 'client' | 'management', tls?: { cert: string; key: string }): Promise<ApiResponse> =>
  srv.raw.post(`/edge/${api}/v1/authenticate?method=cert`, {}, { tls })

describe('an SDK enrolls and logs in with its certificate', () => {
  it('reads /version and the external JWT signers without a session', async () => {
    expectStatus(await srv.raw.get('/version'), 200)
    expectStatus(await srv.raw.get('/edge/client/v1/external-jwt-signers?limit=25&offset=0'), 200)
  })

  const cases: [KeySpec, 'ott' | 'legacy'][] = [['ec-p256', 'ott'], ['rsa-2048', 'legacy']]
  for (const [keySpec, form] of cases) {
    it(`with a ${keySpec} key enrolled by ${form === 'ott' ? 'POST /enroll/ott' : 'POST /enroll?method=ott'}`, async () => {
      const name = `sdk-${keySpec}`
      const me = await enroll(name, keySpec, form)
      const login = await certLogin('client', me)
      expectStatus(login, 200)
      expect(login.body.data.identity.id).toBe(me.id)
      const authenticatorId = login.body.data.authenticatorId
      const [leaf] = parseCertificatesPem(me.cert)
      const detail = await srv.mgmt.get(`/authenticators/${authenticatorId}`)
      expect(detail.body.data).toMatchObject({ method: 'cert', fingerprint: leaf.fingerprintSha1, isIssuedByNetwork: true })

      const client = srv.as(login.body.data.token, 'client')
      const current = await client.get('/current-identity')
      expectStatus(current, 200)
      expect(current.body.data).toMatchObject({ id: me.id, name })
      expect(current.body.data.authenticators.cert.fingerprint).toBe(leaf.fingerprintSha1)
      const services = await client.get('/services')
      expectStatus(services, 200)
      expect(services.body.data.map((s: any) => s.name)).toEqual(['sdk-web'])

      // the same certificate opens a Management API session too
      expectStatus(await certLogin('management', me), 200)
    })
  }

  it('logs in with the leaf alone (the intermediate is a trust anchor of the controller)', async () => {
    const me = await enroll('sdk-leaf-only', 'ec-p256', 'ott')
    const [leafPem] = me.cert.split(/(?<=-----END CERTIFICATE-----\n?)/)
    expectStatus(await certLogin('client', { cert: leafPem, key: me.key }), 200)
  })
})

describe('after a restart', () => {
  it('an enrolled certificate still logs in, and its token stays used', async () => {
    const id = await srv.create('/identities', { name: 'sdk-restart', type: 'Device', isAdmin: false, enrollment: { ott: true } })
    const token = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ott.token
    const keys = await generateKeyPair('ec-p256')
    const csr = await makeCsrPem(keys)
    const res = await srv.client.post('/enroll/ott', { token, clientCsr: csr })
    expectStatus(res, 200)
    await srv.restart()
    expectStatus(await certLogin('client', { cert: res.body.data.cert, key: await exportPrivateKeyPem(keys.privateKey) }), 200)
    expectError(await srv.client.post('/enroll/ott', { token, clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN')
  })
})

describe('POST /authenticate?method=cert refusals: 401 INVALID_AUTH', () => {
  it('refuses a caller without a client certificate', async () => {
    expectError(await certLogin('client'), 401, 'INVALID_AUTH')
  })

  it('refuses a certificate of a CA the controller does not trust', async () => {
    const foreign = await makeForeignClientCert({ commonName: 'stranger' })
    expectError(await certLogin('client', { cert: foreign.certPem, key: foreign.keyPem }), 401, 'INVALID_AUTH')
  })

  it('refuses a certificate whose authenticator was deleted', async () => {
    const me = await enroll('sdk-revoked', 'ec-p256', 'ott')
    const login = await certLogin('client', me)
    expectStatus(login, 200)
    expectStatus(await srv.mgmt.del(`/authenticators/${login.body.data.authenticatorId}`), 200)
    expectError(await certLogin('client', me), 401, 'INVALID_AUTH')
  })

  it('refuses a certificate whose identity was deleted', async () => {
    const me = await enroll('sdk-gone', 'rsa-2048', 'ott')
    expectStatus(await srv.mgmt.del(`/identities/${me.id}`), 200)
    expectError(await certLogin('client', me), 401, 'INVALID_AUTH')
  })
})

// last: it moves the clock past the certificate's notAfter
describe('an expired client certificate', () => {
  it('still logs in under the default policy (allowExpiredCerts, as the real controller)', async () => {
    const me = await enroll('sdk-expired', 'ec-p256', 'ott')
    const [leaf] = parseCertificatesPem(me.cert)
    srv.clock.advance(leaf.notAfter - srv.clock.now() + 1_000)
    expectStatus(await certLogin('client', me), 200)
  })
})
