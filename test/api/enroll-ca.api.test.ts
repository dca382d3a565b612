// Enrollment through third-party CAs, over real TLS with the client certificate presented on the connection:
// ottca (identity create with enrollment {ottca: caId}, POST /enroll/ottca and the generic POST /enroll?token= with
// method=ottca or none) and CA auto-enrollment (POST /enroll/ca and ?method=ca: identityNameFormat, collision counter,
// identityRoles, externalIdClaim), then certificate login (controller-behaviour.md §6 "POST /enroll/ottca",
// "CA auto-enrollment", "identityNameFormat"; edge-api client.yml enrollOttCa, enrollCa; management.yml caCreate
// externalIdClaim).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createIntermediateCa, parseCertificatePem } from '../../src/pki/pki-certs.ts'
import { generateKeyPair } from '../../src/pki/pki-keys.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { makeClientCert, makeTestCa, type TestCa, type TestClientCert } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

let seq = 0

/** A test CA registered through /cas and, unless `verified: false`, verified with a certificate it signed. */
async function registerCa(over: Record<string, unknown> = {}, opts: { verified?: boolean } = {}): Promise<{ id: string; name: string; test: TestCa }> {
  const n = ++seq
  const test = await makeTestCa({ commonName: `enroll CA ${n}`, clock: srv.clock, keySpec: n % 2 ? undefined : 'rsa-2048' })
  const name = `enroll-ca-${n}`
  const id = await srv.create('/cas', {
    name,
    certPem: test.certPem,
    isAuthEnabled: true,
    isAutoCaEnrollmentEnabled: true,
    isOttCaEnrollmentEnabled: true,
    identityRoles: ['from-ca'],
    ...over,
  })
  if (opts.verified !== false) {
    const token = (await srv.mgmt.get(`/cas/${id}`)).body.data.verificationToken
    const proof = await makeClientCert({ issuer: test.signer, commonName: token, clock: srv.clock })
    expectStatus(await srv.mgmt('POST', `/cas/${id}/verify`, { rawBody: proof.certPem, headers: { 'content-type': 'text/plain' } }), 200)
  }
  return { id, name, test }
}

/** A client certificate of `ca` (valid around the server's clock). */
function clientOf(ca: TestCa, opts: { commonName?: string; uris?: string[]; emails?: string[] } = {}): Promise<TestClientCert> {
  return makeClientCert({ issuer: ca.signer, clock: srv.clock, ...opts, commonName: opts.commonName ?? `device ${++seq}` })
}

const tlsOf = (c: TestClientCert, chainPem = '') => ({ cert: c.certPem + chainPem, key: c.keyPem })

/** An identity with an ottca enrollment of `caId`; answers its id and the enrollment's token. */
async function withOttCa(caId: string): Promise<{ id: string; token: string; jwt: string }> {
  const id = await srv.create('/identities', { name: `ottca-${++seq}`, type: 'Device', isAdmin: false, enrollment: { ottca: caId } })
  const e = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ottca
  return { id, token: e.token, jwt: e.jwt }
}

const enrollOttCa = (token: string | undefined, client?: TestClientCert, chainPem?: string): Promise<ApiResponse> =>
  srv.client.post('/enroll/ottca', token === undefined ? {} : { token }, client ? { tls: tlsOf(client, chainPem) } : {})

/** POST /authenticate?method=cert with `client`; answers the response. */
const certLogin = (client: TestClientCert, chainPem = '') =>
  srv.client.post('/authenticate?method=cert', {}, { tls: tlsOf(client, chainPem) })

const certAuthenticatorsOf = async (identityId: string) =>
  (await srv.mgmt.get(`/authenticators?filter=${encodeURIComponent(`identityId="${identityId}" and method="cert"`)}`)).body.data

describe('ottca enrollment', () => {
  it('creates the identity with an ottca enrollment whose JWT says em ottca', async () => {
    const ca = await registerCa()
    const { id, token, jwt } = await withOttCa(ca.id)
    const claims = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString())
    expect(claims).toMatchObject({ sub: id, jti: token, em: 'ottca' })
    const shown = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ottca
    expect(shown).toMatchObject({ caId: ca.id, ca: { id: ca.id, name: ca.name }, token })
    const list = await srv.mgmt.get(`/identities/${id}/enrollments`)
    expect(list.body.data).toHaveLength(1)
    expect(list.body.data[0]).toMatchObject({ method: 'ottca', caId: ca.id, token })
  })

  it('refuses an ottca enrollment of an unknown CA, and writes nothing', async () => {
    const name = `ottca-unknown-${++seq}`
    expectError(await srv.mgmt.post('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ottca: 'no-such-ca' } }), 400, 'COULD_NOT_VALIDATE')
    const found = await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`name="${name}"`)}`)
    expect(found.body.data).toHaveLength(0)
  })

  it('turns the presented certificate into a cert authenticator, consumes the token, and the certificate logs in', async () => {
    const ca = await registerCa()
    const { id, token } = await withOttCa(ca.id)
    const client = await clientOf(ca.test)
    const res = await enrollOttCa(token, client)
    expectStatus(res, 200)
    expect(res.body.data).toEqual({ controllers: [srv.server.advertisedUrl] })
    const [auth] = await certAuthenticatorsOf(id)
    expect(auth).toMatchObject({ method: 'cert', fingerprint: client.view.fingerprintSha1, isIssuedByNetwork: false, identityId: id })
    expect(parseCertificatePem(auth.certPem).fingerprintSha1).toBe(client.view.fingerprintSha1)
    expect((await srv.mgmt.get(`/identities/${id}/enrollments`)).body.data).toHaveLength(0)
    expectError(await enrollOttCa(token, client), 400, 'INVALID_ENROLLMENT_TOKEN')
    const login = await certLogin(client)
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(id)
  })

  it('redeems by the generic form with the token in the query', async () => {
    const ca = await registerCa()
    const { id, token } = await withOttCa(ca.id)
    const client = await clientOf(ca.test)
    const res = await srv.client.post(`/enroll?method=ottca&token=${token}`, {}, { tls: tlsOf(client) })
    expectStatus(res, 200)
    expect(await certAuthenticatorsOf(id)).toHaveLength(1)
  })

  it('redeems by the generic form without a method (the token names ottca), JSON or no body, and the certificate logs in', async () => {
    const ca = await registerCa()
    const first = await withOttCa(ca.id)
    const client = await clientOf(ca.test)
    const res = await srv.client.post(`/enroll?token=${first.token}`, {}, { tls: tlsOf(client) })
    expectStatus(res, 200)
    expect(res.body.data).toEqual({ controllers: [srv.server.advertisedUrl] })
    expect((await certAuthenticatorsOf(first.id)).map((a: { fingerprint: string }) => a.fingerprint)).toEqual([client.view.fingerprintSha1])
    expect((await srv.mgmt.get(`/identities/${first.id}/enrollments`)).body.data).toHaveLength(0)
    const login = await certLogin(client)
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(first.id)

    // the legacy form of older SDKs: no content type and no body, the certificate on the connection
    const second = await withOttCa(ca.id)
    const other = await clientOf(ca.test)
    expectStatus(await srv.client('POST', `/enroll?token=${second.token}`, { rawBody: '', tls: tlsOf(other) }), 200)
    expect(await certAuthenticatorsOf(second.id)).toHaveLength(1)
    expectStatus(await certLogin(other), 200)
  })

  it('without a method refuses as ottca does: no certificate is CERTIFICATE_FAILED_VALIDATION, and the token is kept', async () => {
    const ca = await registerCa()
    const { id, token } = await withOttCa(ca.id)
    expectError(await srv.client.post(`/enroll?token=${token}`, {}), 400, 'CERTIFICATE_FAILED_VALIDATION')
    expectError(await srv.client.post(`/enroll?method=ott&token=${token}`, {}, { tls: tlsOf(await clientOf(ca.test)) }), 400, 'INVALID_ENROLLMENT_TOKEN')
    expect((await srv.mgmt.get(`/identities/${id}/enrollments`)).body.data).toHaveLength(1)
    expect(await certAuthenticatorsOf(id)).toHaveLength(0)
  })

  it('accepts a certificate issued by an intermediate of the CA, with the intermediate presented after the leaf', async () => {
    const ca = await registerCa()
    const { id, token } = await withOttCa(ca.id)
    const keys = await generateKeyPair('ec-p256')
    const now = srv.clock.now()
    const intermediatePem = await createIntermediateCa({
      issuer: ca.test.signer, subject: { commonName: `intermediate ${++seq}` }, publicKey: keys.publicKey,
      notBefore: now - 3_600_000, notAfter: now + 30 * 86_400_000,
    })
    const client = await makeClientCert({ issuer: { certPem: intermediatePem, privateKey: keys.privateKey }, clock: srv.clock })
    expectStatus(await enrollOttCa(token, client, intermediatePem), 200)
    expect(await certAuthenticatorsOf(id)).toHaveLength(1)
    expectStatus(await certLogin(client, intermediatePem), 200)
  })

  it('refuses a CA that is not verified, does not allow ottca, or is auth-disabled, with ENROLLMENT_CA_NOT_VALID', async () => {
    const cases = [[{}, false], [{ isOttCaEnrollmentEnabled: false }, true], [{ isAuthEnabled: false }, true]] as const
    for (const [over, verified] of cases) {
      const ca = await registerCa(over, { verified })
      const { id, token } = await withOttCa(ca.id)
      expectError(await enrollOttCa(token, await clientOf(ca.test)), 400, 'ENROLLMENT_CA_NOT_VALID')
      expect(await certAuthenticatorsOf(id)).toHaveLength(0)
      expect((await srv.mgmt.get(`/identities/${id}/enrollments`)).body.data).toHaveLength(1)
    }
  })

  it('refuses a missing certificate, one of another CA, and an expired one with CERTIFICATE_FAILED_VALIDATION', async () => {
    const ca = await registerCa()
    const other = await registerCa()
    const { id, token } = await withOttCa(ca.id)
    expectError(await enrollOttCa(token), 400, 'CERTIFICATE_FAILED_VALIDATION')
    expectError(await enrollOttCa(token, await clientOf(other.test)), 400, 'CERTIFICATE_FAILED_VALIDATION')
    const now = srv.clock.now()
    const expired = await makeClientCert({ issuer: ca.test.signer, clock: srv.clock, notBefore: now - 86_400_000, notAfter: now - 60_000 })
    expectError(await enrollOttCa(token, expired), 400, 'CERTIFICATE_FAILED_VALIDATION')
    expect(await certAuthenticatorsOf(id)).toHaveLength(0)
    // the token is still good
    expectStatus(await enrollOttCa(token, await clientOf(ca.test)), 200)
  })

  it('refuses a certificate that already belongs to an authenticator with 409 CERT_IN_USE naming its fingerprint', async () => {
    const ca = await registerCa()
    const client = await clientOf(ca.test)
    expectStatus(await enrollOttCa((await withOttCa(ca.id)).token, client), 200)
    const second = await withOttCa(ca.id)
    const res = await enrollOttCa(second.token, client)
    expectError(res, 409, 'CERT_IN_USE')
    expect(res.body.error.cause.data).toEqual({ fingerprint: client.view.fingerprintSha1 })
    expect((await srv.mgmt.get(`/identities/${second.id}/enrollments`)).body.data).toHaveLength(1)
  })

  it('refuses unknown and expired tokens', async () => {
    const ca = await registerCa()
    const client = await clientOf(ca.test)
    expectError(await enrollOttCa('00000000-0000-4000-8000-000000000000', client), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectError(await enrollOttCa(undefined, client), 400, 'INVALID_ENROLLMENT_TOKEN')
    // an admin's enrollment that expires in a minute (the admin's session outlives it)
    const identityId = await srv.create('/identities', { name: `ottca-expiring-${++seq}`, type: 'Device', isAdmin: false })
    const expiresAt = new Date(srv.clock.now() + 60_000).toISOString()
    const enrollmentId = await srv.create('/enrollments', { identityId, method: 'ottca', caId: ca.id, expiresAt })
    const { token } = (await srv.mgmt.get(`/enrollments/${enrollmentId}`)).body.data
    srv.clock.advance(61_000)
    expectError(await enrollOttCa(token, client), 400, 'ENROLLMENT_EXPIRED')
  })

  it('lets exactly one of two racing redeems of a token win', async () => {
    const ca = await registerCa()
    const { id, token } = await withOttCa(ca.id)
    const [a, b] = await Promise.all([enrollOttCa(token, await clientOf(ca.test)), enrollOttCa(token, await clientOf(ca.test))])
    expect([a.status, b.status].sort()).toEqual([200, 400])
    expect((a.status === 400 ? a : b).body.error.code).toBe('INVALID_ENROLLMENT_TOKEN')
    expect(await certAuthenticatorsOf(id)).toHaveLength(1)
  })
})

describe('CA auto-enrollment', () => {
  const enrollCa = (client?: TestClientCert, chainPem?: string) =>
    srv.client.post('/enroll/ca', undefined, client ? { tls: tlsOf(client, chainPem) } : {})
  const identityNamed = async (name: string) =>
    (await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`name="${name}"`)}`)).body.data[0]

  it('creates an identity named by the default format, with the CA roles and a cert authenticator; the certificate logs in', async () => {
    const ca = await registerCa()
    const client = await clientOf(ca.test, { commonName: `auto ${++seq}` })
    const res = await enrollCa(client)
    expectStatus(res, 200)
    expect(res.body.data).toEqual({})
    const identity = await identityNamed(`${ca.name}-${client.view.subjectCn}`)
    expect(identity).toMatchObject({ typeId: 'Default', isAdmin: false, roleAttributes: ['from-ca'], externalId: null })
    const [auth] = await certAuthenticatorsOf(identity.id)
    expect(auth).toMatchObject({ fingerprint: client.view.fingerprintSha1, isIssuedByNetwork: false })
    const login = await certLogin(client)
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(identity.id)
    // a second contact with the same certificate is a conflict, not a second identity
    expectError(await enrollCa(client), 409, 'CERT_IN_USE')
  })

  it('accepts a chain through two intermediates presented in any order, and logs it in', async () => {
    const ca = await registerCa()
    const now = srv.clock.now()
    const validity = { notBefore: now - 3_600_000, notAfter: now + 30 * 86_400_000 }
    const upperKeys = await generateKeyPair('rsa-2048')
    const upperPem = await createIntermediateCa({ issuer: ca.test.signer, subject: { commonName: `upper ${++seq}` }, publicKey: upperKeys.publicKey, pathLen: 1, ...validity })
    const lowerKeys = await generateKeyPair('ec-p256')
    const lowerPem = await createIntermediateCa({ issuer: { certPem: upperPem, privateKey: upperKeys.privateKey }, subject: { commonName: `lower ${seq}` }, publicKey: lowerKeys.publicKey, ...validity })
    const client = await makeClientCert({ issuer: { certPem: lowerPem, privateKey: lowerKeys.privateKey }, clock: srv.clock, commonName: `deep ${seq}` })
    // the upper intermediate first: the order the client sends them in does not matter
    expectStatus(await enrollCa(client, upperPem + lowerPem), 200)
    const identity = await identityNamed(`${ca.name}-deep ${seq}`)
    expect(await certAuthenticatorsOf(identity.id)).toHaveLength(1)
    expectStatus(await certLogin(client, lowerPem + upperPem), 200)
    // without the intermediates the chain does not reach the CA
    expectError(await certLogin(client), 401, 'INVALID_AUTH')
  })

  it('lets exactly one of two racing first contacts with the same certificate create an identity', async () => {
    const ca = await registerCa()
    const client = await clientOf(ca.test, { commonName: `racer ${++seq}` })
    const [a, b] = await Promise.all([enrollCa(client), enrollCa(client)])
    expect([a.status, b.status].sort()).toEqual([200, 409])
    expect((a.status === 409 ? a : b).body.error.code).toBe('CERT_IN_USE')
    const made = (await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`name contains "racer ${seq}"`)}`)).body.data
    expect(made).toHaveLength(1)
  })

  it('fills every placeholder of identityNameFormat, takes the requested name of the generic form, and counts collisions', async () => {
    const ca = await registerCa({ identityNameFormat: '[caName]/[caId]/[commonName]/[requestedName]' })
    const cn = `same cn ${++seq}`
    const first = await clientOf(ca.test, { commonName: cn })
    expectStatus(await srv.client.post('/enroll?method=ca', { name: 'laptop' }, { tls: tlsOf(first) }), 200)
    const base = `${ca.name}/${ca.id}/${cn}/laptop`
    expect(await identityNamed(base)).toBeDefined()
    for (const suffix of ['000001', '000001000002']) {
      expectStatus(await srv.client.post('/enroll?method=ca', { name: 'laptop' }, { tls: tlsOf(await clientOf(ca.test, { commonName: cn })) }), 200)
      expect(await identityNamed(base + suffix)).toBeDefined()
    }
    const idCa = await registerCa({ identityNameFormat: 'device-[identityId]' })
    expectStatus(await enrollCa(await clientOf(idCa.test)), 200)
    const made = (await srv.mgmt.get(`/identities?filter=${encodeURIComponent('name contains "device-"')}`)).body.data
    expect(made.some((i: { id: string; name: string }) => i.name === `device-${i.id}`)).toBe(true)
  })

  it('maps the certificate to an externalId when the CA has an externalIdClaim, and logs in by it without an authenticator', async () => {
    const claim = { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', index: 0 }
    const ca = await registerCa({ externalIdClaim: claim })
    const spiffe = `spiffe://example.org/workload/${++seq}`
    const client = await clientOf(ca.test, { uris: ['https://example.org/other', spiffe] })
    expectStatus(await enrollCa(client), 200)
    const found = (await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`externalId="${spiffe}"`)}`)).body.data
    expect(found).toHaveLength(1)
    expect(await certAuthenticatorsOf(found[0].id)).toHaveLength(0)
    // another certificate with the same claim logs in as the same identity (certificates can rotate)
    const rotated = await clientOf(ca.test, { uris: [spiffe] })
    const login = await certLogin(rotated)
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(found[0].id)
    // and cannot auto-enroll a second identity with the same externalId
    expectError(await enrollCa(rotated), 400, 'COULD_NOT_VALIDATE')
  })

  it('reads e-mail and common-name claims with prefix, suffix and split', async () => {
    const emailCa = await registerCa({ externalIdClaim: { location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.example', parser: 'SPLIT', parserCriteria: '.', index: 1 } })
    const lee = `lee${++seq}`
    expectStatus(await enrollCa(await clientOf(emailCa.test, { emails: ['x@other.example', `ann.${lee}@corp.example`] })), 200)
    expect((await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`externalId="${lee}"`)}`)).body.data).toHaveLength(1)
    const cnCa = await registerCa({ externalIdClaim: { location: 'COMMON_NAME', matcher: 'PREFIX', matcherCriteria: 'user:', parser: 'NONE', index: 0 } })
    const bob = `bob${++seq}`
    expectStatus(await enrollCa(await clientOf(cnCa.test, { commonName: `user:${bob}` })), 200)
    expect((await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`externalId="${bob}"`)}`)).body.data).toHaveLength(1)
    expectError(await enrollCa(await clientOf(cnCa.test, { commonName: 'no prefix here' })), 400, 'MISSING_CERT_CLAIM')
  })

  it('refuses certificates of unverified, auto-enrollment-disabled, auth-disabled or unknown CAs, and a missing certificate', async () => {
    const unverified = await registerCa({}, { verified: false })
    const disabled = await registerCa({ isAutoCaEnrollmentEnabled: false })
    const authDisabled = await registerCa({ isAuthEnabled: false })
    const before = (await srv.mgmt.get('/identities?limit=1')).body.meta.pagination.totalCount
    for (const ca of [unverified, disabled, authDisabled]) expectError(await enrollCa(await clientOf(ca.test)), 400, 'CERT_FAILED_VALIDATION')
    const stranger = await makeTestCa({ clock: srv.clock })
    expectError(await enrollCa(await clientOf(stranger)), 400, 'CERT_FAILED_VALIDATION')
    expectError(await enrollCa(), 400, 'CERT_FAILED_VALIDATION')
    expect((await srv.mgmt.get('/identities?limit=1')).body.meta.pagination.totalCount).toBe(before)
  })
})

describe('certificate login through third-party CAs', () => {
  it('refuses the certificate of a CA while it is auth-disabled', async () => {
    const ca = await registerCa()
    const client = await clientOf(ca.test)
    const { id, token } = await withOttCa(ca.id)
    expectStatus(await enrollOttCa(token, client), 200)
    expectStatus(await certLogin(client), 200)
    expectStatus(await srv.mgmt.patch(`/cas/${ca.id}`, { isAuthEnabled: false }), 200)
    expectError(await certLogin(client), 401, 'INVALID_AUTH')
    expectStatus(await srv.mgmt.patch(`/cas/${ca.id}`, { isAuthEnabled: true }), 200)
    expectStatus(await certLogin(client), 200)
    expect(await certAuthenticatorsOf(id)).toHaveLength(1)
  })

  it('logs nobody in through the externalIdClaim of a CA until it is verified', async () => {
    const ca = await registerCa({ externalIdClaim: { location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE', index: 0 } }, { verified: false })
    const cn = `claimed ${++seq}`
    const identityId = await srv.create('/identities', { name: `claimed-${seq}`, type: 'Default', isAdmin: false, externalId: cn })
    const client = await clientOf(ca.test, { commonName: cn })
    expectError(await certLogin(client), 401, 'INVALID_AUTH')
    const token = (await srv.mgmt.get(`/cas/${ca.id}`)).body.data.verificationToken
    const proof = await makeClientCert({ issuer: ca.test.signer, commonName: token, clock: srv.clock })
    expectStatus(await srv.mgmt('POST', `/cas/${ca.id}/verify`, { rawBody: proof.certPem, headers: { 'content-type': 'text/plain' } }), 200)
    const login = await certLogin(client)
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(identityId)
  })
})

describe('DELETE /cas/{id} cascade', () => {
  it("deletes the CA's cert authenticators and ottca enrollments, keeps everything else, and survives a restart", async () => {
    const ca = await registerCa()
    const keep = await registerCa()
    const client = await clientOf(ca.test)
    const enrolled = await withOttCa(ca.id)
    expectStatus(await enrollOttCa(enrolled.token, client), 200)
    const pending = await withOttCa(ca.id)
    const kept = await withOttCa(keep.id)
    const keptClient = await clientOf(keep.test)
    expectStatus(await enrollOttCa(kept.token, keptClient), 200)
    const keptPending = await withOttCa(keep.id)

    expectStatus(await srv.mgmt.del(`/cas/${ca.id}`), 200)
    expect(await certAuthenticatorsOf(enrolled.id)).toHaveLength(0)
    expect((await srv.mgmt.get(`/identities/${pending.id}/enrollments`)).body.data).toHaveLength(0)
    expectError(await certLogin(client), 401, 'INVALID_AUTH')
    // the identities stay; the other CA's authenticators and enrollments stay
    expectStatus(await srv.mgmt.get(`/identities/${enrolled.id}`), 200)
    expect(await certAuthenticatorsOf(kept.id)).toHaveLength(1)
    expect((await srv.mgmt.get(`/identities/${keptPending.id}/enrollments`)).body.data).toHaveLength(1)

    await srv.restart()
    expect(await certAuthenticatorsOf(enrolled.id)).toHaveLength(0)
    expect((await srv.mgmt.get(`/identities/${pending.id}/enrollments`)).body.data).toHaveLength(0)
    expectStatus(await certLogin(keptClient), 200)
  })
})
