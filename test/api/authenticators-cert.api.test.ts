// Management /authenticators of method cert and /authenticators/{id}/re-enroll, over real TLS (seed
// "Authenticator"; edge-api management.yml authenticatorCreate, authenticatorDetail, reEnrollAuthenticator;
// controller/model/authenticator_manager.go ApplyCreate, ReEnroll).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { makeClientCert, makeCsrPem, makeTestCa, type TestCa, type TestClientCert } from '../support/pki.ts'

let srv: TestServer
let verifiedCa: { id: string; test: TestCa }
let unverifiedCa: { id: string; test: TestCa }
beforeAll(async () => {
  srv = await startTestServer()
  verifiedCa = await registerCa(true)
  unverifiedCa = await registerCa(false)
})
afterAll(async () => {
  await srv.stop()
})

let seq = 0

async function registerCa(verified: boolean): Promise<{ id: string; test: TestCa }> {
  const test = await makeTestCa({ commonName: `authenticator CA ${++seq}`, clock: srv.clock })
  const id = await srv.create('/cas', {
    name: `auth-ca-${seq}`, certPem: test.certPem, isAuthEnabled: true, isAutoCaEnrollmentEnabled: false, isOttCaEnrollmentEnabled: true, identityRoles: [],
  })
  if (verified) {
    const token = (await srv.mgmt.get(`/cas/${id}`)).body.data.verificationToken
    const proof = await makeClientCert({ issuer: test.signer, commonName: token, clock: srv.clock })
    expectStatus(await srv.mgmt('POST', `/cas/${id}/verify`, { rawBody: proof.certPem, headers: { 'content-type': 'text/plain' } }), 200)
  }
  return { id, test }
}

const newIdentity = () => srv.create('/identities', { name: `cert-holder-${++seq}`, type: 'Device', isAdmin: false })
const clientOf = (ca: TestCa) => makeClientCert({ issuer: ca.signer, clock: srv.clock, commonName: `holder ${++seq}` })
const createCert = (identityId: string, certPem: string) => srv.mgmt.post('/authenticators', { identityId, method: 'cert', certPem })
const certLogin = (c: { certPem: string; keyPem: string }) =>
  srv.client.post('/authenticate?method=cert', {}, { tls: { cert: c.certPem, key: c.keyPem } })
const reEnroll = (id: string, expiresAt = new Date(srv.clock.now() + 3_600_000).toISOString()) =>
  srv.mgmt.post(`/authenticators/${id}/re-enroll`, { expiresAt })

/** An identity enrolled by ott: its certificate chain and key, and the authenticator id. */
async function enrolledByOtt(): Promise<{ identityId: string; authId: string; client: { certPem: string; keyPem: string } }> {
  const identityId = await srv.create('/identities', { name: `ott-holder-${++seq}`, type: 'Device', isAdmin: false, enrollment: { ott: true } })
  const token = (await srv.mgmt.get(`/identities/${identityId}`)).body.data.enrollment.ott.token
  const keys = await generateKeyPair('ec-p256')
  const res = await srv.client.post('/enroll/ott', { token, clientCsr: await makeCsrPem(keys) })
  expectStatus(res, 200)
  const authId = (await srv.mgmt.get(`/identities/${identityId}`)).body.data.authenticators.cert.id
  return { identityId, authId, client: { certPem: res.body.data.cert, keyPem: await exportPrivateKeyPem(keys.privateKey) } }
}

describe('POST /authenticators with method cert', () => {
  it('registers a certificate of a verified CA; the authenticator shows it and the certificate logs in', async () => {
    const identityId = await newIdentity()
    const client = await clientOf(verifiedCa.test)
    const res = await createCert(identityId, client.certPem)
    expectStatus(res, 201)
    const got = await srv.mgmt.get(`/authenticators/${res.body.data.id}`)
    expectStatus(got, 200)
    expect(got.body.data).toMatchObject({
      method: 'cert', identityId, fingerprint: client.view.fingerprintSha1, certPem: client.certPem, isIssuedByNetwork: false,
    })
    const listed = await srv.mgmt.get(`/authenticators?filter=${encodeURIComponent(`fingerprint="${client.view.fingerprintSha1}"`)}`)
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([res.body.data.id])
    expect((await srv.mgmt.get(`/identities/${identityId}`)).body.data.authenticators.cert).toEqual({ id: res.body.data.id, fingerprint: client.view.fingerprintSha1 })
    const login = await certLogin(client)
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(identityId)
  })

  it('refuses a certificate no known CA signed (an unverified CA, a stranger) with CERTIFICATE_FAILED_VALIDATION', async () => {
    const identityId = await newIdentity()
    const fromUnverified = await clientOf(unverifiedCa.test)
    expectError(await createCert(identityId, fromUnverified.certPem), 400, 'CERTIFICATE_FAILED_VALIDATION')
    expectError(await createCert(identityId, (await clientOf(await makeTestCa({ clock: srv.clock }))).certPem), 400, 'CERTIFICATE_FAILED_VALIDATION')
    expect((await srv.mgmt.get(`/identities/${identityId}`)).body.data.authenticators).toEqual({})
    // and a certificate of an unverified CA logs nobody in
    expectError(await certLogin(fromUnverified), 401, 'INVALID_AUTH')
  })

  it('refuses bad PEM, a second certificate, a certificate in use and a missing certPem, writing nothing', async () => {
    const identityId = await newIdentity()
    const a = await clientOf(verifiedCa.test)
    const b = await clientOf(verifiedCa.test)
    expectError(await createCert(identityId, 'not a pem'), 400, 'COULD_NOT_PARSE_PEM_BLOCK')
    expectError(await createCert(identityId, a.certPem + b.certPem), 400, 'COULD_NOT_PARSE_PEM_BLOCK')
    const missing = await srv.mgmt.post('/authenticators', { identityId, method: 'cert' })
    expectError(missing, 400, 'COULD_NOT_VALIDATE')
    expect(missing.body.error.cause.field).toBe('certPem')
    expectError(await createCert('no-such-identity', a.certPem), 400, 'COULD_NOT_VALIDATE')
    expectStatus(await createCert(identityId, a.certPem), 201)
    expectError(await createCert(identityId, b.certPem), 409, 'MAX_AUTHENTICATOR_METHODS_REACHED')
    const inUse = await createCert(await newIdentity(), a.certPem)
    expectError(inUse, 409, 'CERT_IN_USE')
    expect(inUse.body.error.cause.data).toEqual({ fingerprint: a.view.fingerprintSha1 })
  })
})

describe('DELETE /authenticators/{id} of method cert', () => {
  it('removes the authenticator; its certificate no longer logs in', async () => {
    const { authId, client } = await enrolledByOtt()
    expectStatus(await certLogin(client), 200)
    expectStatus(await srv.mgmt.del(`/authenticators/${authId}`), 200)
    expectError(await certLogin(client), 401, 'INVALID_AUTH')
    expectError(await srv.mgmt.get(`/authenticators/${authId}`), 404, 'NOT_FOUND')
  })
})

describe('POST /authenticators/{id}/re-enroll', () => {
  const enrollmentOf = async (id: string) => (await srv.mgmt.get(`/enrollments/${id}`)).body.data

  it('turns a certificate the network issued into an ott enrollment, in one step', async () => {
    const { identityId, authId, client } = await enrolledByOtt()
    const expiresAt = new Date(srv.clock.now() + 7_200_000).toISOString()
    const res = await reEnroll(authId, expiresAt)
    expectStatus(res, 201)
    expect(await enrollmentOf(res.body.data.id)).toMatchObject({ method: 'ott', identityId, expiresAt })
    expectError(await srv.mgmt.get(`/authenticators/${authId}`), 404, 'NOT_FOUND')
    expectError(await certLogin(client), 401, 'INVALID_AUTH')
    // the new token enrolls again
    const token = (await enrollmentOf(res.body.data.id)).token
    expectStatus(await srv.client.post('/enroll/ott', { token, clientCsr: await makeCsrPem(await generateKeyPair('ec-p256')) }), 200)
  })

  it('turns a certificate of a third-party CA into an ottca enrollment of that CA; the same certificate enrolls again', async () => {
    const identityId = await newIdentity()
    const client: TestClientCert = await clientOf(verifiedCa.test)
    const authId = (await createCert(identityId, client.certPem)).body.data.id
    const res = await reEnroll(authId)
    expectStatus(res, 201)
    const enrollment = await enrollmentOf(res.body.data.id)
    expect(enrollment).toMatchObject({ method: 'ottca', caId: verifiedCa.id, identityId })
    expectError(await certLogin(client), 401, 'INVALID_AUTH')
    expectStatus(await srv.client.post('/enroll/ottca', { token: enrollment.token }, { tls: { cert: client.certPem, key: client.keyPem } }), 200)
    expectStatus(await certLogin(client), 200)
  })

  it('turns a updb authenticator into a updb enrollment of its username', async () => {
    const identityId = await newIdentity()
    const username = `re-user-${++seq}`
    const authId = (await srv.mgmt.post('/authenticators', { identityId, method: 'updb', username, password: 'old-pass-1' })).body.data.id
    const res = await reEnroll(authId)
    expectStatus(res, 201)
    const enrollment = await enrollmentOf(res.body.data.id)
    expect(enrollment).toMatchObject({ method: 'updb', username, identityId })
    expectError(await srv.client.post('/authenticate?method=password', { username, password: 'old-pass-1' }), 401, 'INVALID_AUTH')
    expectStatus(await srv.client.post(`/enroll/updb?token=${enrollment.token}`, { password: 'new-pass-1' }), 200)
    expectStatus(await srv.client.post('/authenticate?method=password', { username, password: 'new-pass-1' }), 200)
  })

  it('refuses when an enrollment of that method is outstanding (409 ENROLLMENT_EXISTS), keeping the authenticator', async () => {
    const { identityId, authId, client } = await enrolledByOtt()
    await srv.create('/enrollments', { identityId, method: 'ott', expiresAt: new Date(srv.clock.now() + 3_600_000).toISOString() })
    expectError(await reEnroll(authId), 409, 'ENROLLMENT_EXISTS')
    expectStatus(await srv.mgmt.get(`/authenticators/${authId}`), 200)
    expectStatus(await certLogin(client), 200)
  })

  it('refuses an unknown authenticator with 404 and a past expiresAt with 400', async () => {
    expectError(await reEnroll('no-such-authenticator'), 404, 'NOT_FOUND')
    const { authId } = await enrolledByOtt()
    expectError(await reEnroll(authId, new Date(srv.clock.now() - 1000).toISOString()), 400, 'COULD_NOT_VALIDATE')
    expectStatus(await srv.mgmt.get(`/authenticators/${authId}`), 200)
  })
})

describe('POST /enroll/ca on a controller whose CAs allow no auto-enrollment', () => {
  // this file's CAs all have isAutoCaEnrollmentEnabled false (controller-behaviour.md §6 "CA auto-enrollment")
  it('answers ENROLLMENT_NO_VALID_CAS', async () => {
    const client = await clientOf(verifiedCa.test)
    expectError(await srv.client.post('/enroll/ca', undefined, { tls: { cert: client.certPem, key: client.keyPem } }), 400, 'ENROLLMENT_NO_VALID_CAS')
  })
})
