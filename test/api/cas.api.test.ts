// Management /cas: third-party certificate authorities (seed "Certificate authority (CA)"; edge-api management.yml
// caCreate/caDetail/caUpdate/caPatch, /cas/{id}/jwt, /cas/{id}/verify; controller-behaviour.md §6 "CA verification"
// and "CA enrollment JWT"). Test CAs are generated here; verification certificates are signed by them.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose'
import { FakeClock, systemClock } from '../../src/lib/clock.ts'
import { encodePem } from '../../src/lib/pem.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { hasOpenssl, makeClientCert, makeTestCa, runOpenssl, type TestCa } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let seq = 0
/** A fresh test CA (valid around the server's clock) and the create body that registers it. */
async function newCa(over: Record<string, unknown> = {}): Promise<{ test: TestCa; body: Record<string, unknown> }> {
  const test = await makeTestCa({ commonName: `third party ${++seq}`, clock: srv.clock, keySpec: seq % 2 ? undefined : 'rsa-2048' })
  const body = {
    name: `ca-${seq}`,
    certPem: test.certPem,
    isAuthEnabled: true,
    isAutoCaEnrollmentEnabled: true,
    isOttCaEnrollmentEnabled: false,
    identityRoles: ['third-party'],
    ...over,
  }
  return { test, body }
}

async function registered(over: Record<string, unknown> = {}) {
  const ca = await newCa(over)
  const id = await srv.create('/cas', ca.body)
  const view = (await srv.mgmt.get(`/cas/${id}`)).body.data
  return { ...ca, id, view }
}

/** POST /cas/{id}/verify with a text/plain body. */
function verify(id: string, text: string): Promise<ApiResponse> {
  return srv.mgmt('POST', `/cas/${id}/verify`, { rawBody: text, headers: { 'content-type': 'text/plain' } })
}

async function count(): Promise<number> {
  return (await srv.mgmt.get('/cas?limit=-1')).body.meta.pagination.totalCount
}

describe('POST /cas', () => {
  it('registers a CA unverified, with a verification token, and shows it as caDetail', async () => {
    const { test, body, id, view } = await registered()
    expect(view).toMatchObject({
      id,
      name: body.name,
      certPem: test.certPem,
      fingerprint: test.view.fingerprintSha1,
      isVerified: false,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: false,
      identityRoles: ['third-party'],
      identityNameFormat: '[caName]-[commonName]',
      tags: {},
    })
    expect(view.verificationToken).toMatch(UUID)
    expect(view.externalIdClaim).toBeUndefined()
    expect(view._links).toEqual({ self: { href: `./cas/${id}` }, verify: { href: `./cas/${id}/verify` }, jwt: { href: `./cas/${id}/jwt` } })
  })

  it('keeps the given name format, tags and externalIdClaim', async () => {
    const claim = { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: null, index: 0 }
    const { view } = await registered({ identityNameFormat: '[caName]/[requestedName]', tags: { team: 'blue' }, externalIdClaim: claim, isAutoCaEnrollmentEnabled: false })
    expect(view).toMatchObject({ identityNameFormat: '[caName]/[requestedName]', tags: { team: 'blue' } })
    expect(view.externalIdClaim).toEqual({ ...claim, parserCriteria: '' })
    expect(view._links.jwt).toBeUndefined()
  })

  it('refuses a name in use and a certificate registered already, as the real controller does', async () => {
    const first = await registered()
    const other = await newCa()
    const before = await count()
    const sameName = await srv.mgmt.post('/cas', { ...other.body, name: first.body.name })
    expectError(sameName, 400, 'COULD_NOT_VALIDATE')
    expect(sameName.body.error.cause).toMatchObject({ field: 'name', reason: `duplicate value '${first.body.name}' in unique index on cas store` })
    const sameCert = await srv.mgmt.post('/cas', { ...first.body, name: 'another name' })
    expectError(sameCert, 400, 'COULD_NOT_VALIDATE')
    expect(sameCert.body.error.cause).toMatchObject({ field: 'certPem', reason: `certificate already used as CA ${first.id}` })
    expect(await count()).toBe(before)
  })

  it('refuses a certificate that is not a CA with 400 CERTIFICATE_IS_NOT_CA', async () => {
    const { test, body } = await newCa()
    const leaf = await makeClientCert({ issuer: test.signer, clock: srv.clock })
    expectError(await srv.mgmt.post('/cas', { ...body, certPem: leaf.certPem }), 400, 'CERTIFICATE_IS_NOT_CA')
  })

  const badPem: [string, (ca: TestCa) => string, string][] = [
    ['text that is not PEM', () => 'not a certificate', 'INVALID_CERT_PEM'],
    ['two certificates', (ca) => ca.certPem + ca.certPem, 'INVALID_CERT_PEM'],
    ['a private key', (ca) => ca.keyPem, 'EXPECTED_PEM_CERTIFICATE'],
    ['a CERTIFICATE block that is not DER of a certificate', () => encodePem('CERTIFICATE', new Uint8Array([48, 3, 2, 1, 1])), 'COULD_NOT_PARSE_DER_BLOCK'],
  ]
  for (const [what, pem, code] of badPem) {
    it(`refuses ${what} as certPem with 400 ${code} and writes nothing`, async () => {
      const { test, body } = await newCa()
      const before = await count()
      expectError(await srv.mgmt.post('/cas', { ...body, certPem: pem(test) }), 400, code)
      expect(await count()).toBe(before)
    })
  }

  const badFields: [string, Record<string, unknown>, string][] = [
    ['no certPem', { certPem: undefined }, 'certPem'],
    ['no isAuthEnabled', { isAuthEnabled: undefined }, 'isAuthEnabled'],
    ['no identityRoles', { identityRoles: undefined }, 'identityRoles'],
    ['a role attribute with #', { identityRoles: ['#all'] }, 'identityRoles'],
    ['an unknown externalIdClaim location', { externalIdClaim: { location: 'SUBJECT', matcher: 'ALL', parser: 'NONE' } }, 'externalIdClaim.location'],
    ['an unknown externalIdClaim matcher', { externalIdClaim: { location: 'SAN_URI', matcher: 'REGEX', parser: 'NONE' } }, 'externalIdClaim.matcher'],
    ['an unknown externalIdClaim parser', { externalIdClaim: { location: 'SAN_URI', matcher: 'ALL', parser: 'JSON' } }, 'externalIdClaim.parser'],
    ['a claim without a location', { externalIdClaim: { matcher: 'ALL', parser: 'NONE' } }, 'externalIdClaim.location'],
    ['a negative claim index', { externalIdClaim: { location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE', index: -1 } }, 'externalIdClaim.index'],
    ['a SCHEME matcher on the common name', { externalIdClaim: { location: 'COMMON_NAME', matcher: 'SCHEME', matcherCriteria: 'x', parser: 'NONE' } }, 'externalIdClaim'],
    ['a PREFIX matcher without criteria', { externalIdClaim: { location: 'SAN_EMAIL', matcher: 'PREFIX', parser: 'NONE' } }, 'externalIdClaim'],
    ['a SPLIT parser without a separator', { externalIdClaim: { location: 'COMMON_NAME', matcher: 'ALL', parser: 'SPLIT' } }, 'externalIdClaim'],
  ]
  for (const [what, over, field] of badFields) {
    it(`refuses ${what} with 400 COULD_NOT_VALIDATE on ${field}`, async () => {
      const { body } = await newCa()
      const before = await count()
      const res = await srv.mgmt.post('/cas', { ...body, ...over })
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
      expect(await count()).toBe(before)
    })
  }

  it('is for admins only: another session gets 401', async () => {
    const user = await srv.create('/identities', { name: `not-admin-${++seq}`, type: 'User', isAdmin: false })
    expectStatus(await srv.mgmt.post('/authenticators', { identityId: user, method: 'updb', username: `not-admin-${seq}`, password: 'pass-word-1' }), 201)
    const token = await srv.login(`not-admin-${seq}`, 'pass-word-1')
    const { body } = await newCa()
    const mgmt = srv.as(token, 'management')
    expectError(await mgmt.post('/cas', body), 401, 'UNAUTHORIZED')
    expectError(await mgmt.get('/cas'), 401, 'UNAUTHORIZED')
    expectError(await srv.mgmt.get('/cas', { session: null }), 401, 'UNAUTHORIZED')
  })
})

describe('GET /cas', () => {
  it('lists with filters and paging, and names its filterable fields', async () => {
    const a = await registered({ isOttCaEnrollmentEnabled: true })
    await registered()
    const byName = await srv.mgmt.get(`/cas?filter=${encodeURIComponent(`name = "${a.body.name}"`)}`)
    expectStatus(byName, 200)
    expect(byName.body.data.map((c: { id: string }) => c.id)).toEqual([a.id])
    const ott = await srv.mgmt.get(`/cas?filter=${encodeURIComponent('isOttCaEnrollmentEnabled = true and isVerified = false')}`)
    expect(ott.body.data.map((c: { id: string }) => c.id)).toContain(a.id)
    expect(ott.body.data.every((c: { isOttCaEnrollmentEnabled: boolean }) => c.isOttCaEnrollmentEnabled)).toBe(true)
    const roles = await srv.mgmt.get(`/cas?filter=${encodeURIComponent('anyOf(identityRoles) = "third-party"')}&limit=1&offset=1`)
    expect(roles.body.data).toHaveLength(1)
    expect(roles.body.meta.pagination).toMatchObject({ limit: 1, offset: 1 })
    expect(roles.body.meta.pagination.totalCount).toBeGreaterThanOrEqual(2)
    expect(roles.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'fingerprint', 'isVerified', 'isAuthEnabled', 'identityRoles']))
    const sorted = await srv.mgmt.get('/cas?limit=-1')
    const ids = sorted.body.data.map((c: { id: string }) => c.id)
    expect(ids).toEqual([...ids].sort())
  })

  it('answers 404 for an unknown CA', async () => {
    expectError(await srv.mgmt.get('/cas/no-such-ca'), 404, 'NOT_FOUND')
  })
})

describe('PUT and PATCH /cas/:id', () => {
  it('PATCH changes only the given fields; a null scalar leaves its field', async () => {
    const { id, view } = await registered({ tags: { keep: 'me' } })
    expectStatus(await srv.mgmt.patch(`/cas/${id}`, { isAuthEnabled: false, name: null, identityNameFormat: null }), 200)
    const after = (await srv.mgmt.get(`/cas/${id}`)).body.data
    expect(after).toMatchObject({ ...view, isAuthEnabled: false, updatedAt: after.updatedAt })
  })

  it('PATCH lays externalIdClaim members over the stored claim, and null removes it', async () => {
    const claim = { location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.test', parser: 'NONE', parserCriteria: '', index: 0 }
    const { id } = await registered({ externalIdClaim: claim })
    expectStatus(await srv.mgmt.patch(`/cas/${id}`, { externalIdClaim: { parser: 'SPLIT', parserCriteria: '@' } }), 200)
    expect((await srv.mgmt.get(`/cas/${id}`)).body.data.externalIdClaim).toEqual({ ...claim, parser: 'SPLIT', parserCriteria: '@' })
    const bad = await srv.mgmt.patch(`/cas/${id}`, { externalIdClaim: { matcher: 'SCHEME' } })
    expectError(bad, 400, 'COULD_NOT_VALIDATE')
    expect(bad.body.error.cause.reason).toBe('unsupported matcher [SCHEME] for location [SAN_EMAIL]')
    expectStatus(await srv.mgmt.patch(`/cas/${id}`, { externalIdClaim: null }), 200)
    expect((await srv.mgmt.get(`/cas/${id}`)).body.data.externalIdClaim).toBeUndefined()
  })

  it('PUT sets every field but the certificate; absent tags and claim are cleared', async () => {
    const { id, test, view } = await registered({ tags: { old: 'tag' }, externalIdClaim: { location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE' } })
    const other = await makeTestCa({ clock: srv.clock })
    const put = {
      name: `renamed-${seq}`,
      certPem: other.certPem,
      isAuthEnabled: false,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: true,
      identityRoles: ['a', 'b'],
      identityNameFormat: '',
    }
    expectStatus(await srv.mgmt.put(`/cas/${id}`, put), 200)
    const after = (await srv.mgmt.get(`/cas/${id}`)).body.data
    expect(after).toMatchObject({
      name: put.name,
      certPem: test.certPem,
      fingerprint: view.fingerprint,
      verificationToken: view.verificationToken,
      isAuthEnabled: false,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: true,
      identityRoles: ['a', 'b'],
      identityNameFormat: '[caName]-[commonName]',
      tags: {},
    })
    expect(after.externalIdClaim).toBeUndefined()
  })

  it('PUT refuses a body without the fields the spec requires, and a name in use', async () => {
    const a = await registered()
    const b = await registered()
    const full: Record<string, unknown> = { ...b.body, identityNameFormat: 'x' }
    delete full.certPem
    const missing = await srv.mgmt.put(`/cas/${b.id}`, { ...full, identityNameFormat: undefined })
    expectError(missing, 400, 'COULD_NOT_VALIDATE')
    expect(missing.body.error.cause.field).toBe('identityNameFormat')
    const taken = await srv.mgmt.put(`/cas/${b.id}`, { ...full, name: a.body.name })
    expectError(taken, 400, 'COULD_NOT_VALIDATE')
    expect(taken.body.error.cause.field).toBe('name')
    expectError(await srv.mgmt.patch('/cas/no-such-ca', { name: 'x' }), 404, 'NOT_FOUND')
  })
})

describe('DELETE /cas/:id', () => {
  it('deletes the CA; its certificate can be registered again', async () => {
    const { id, body } = await registered()
    expectStatus(await srv.mgmt.del(`/cas/${id}`), 200)
    expectError(await srv.mgmt.get(`/cas/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del(`/cas/${id}`), 404, 'NOT_FOUND')
    expectStatus(await srv.mgmt.post('/cas', body), 201)
  })
})

describe('GET /cas/:id/jwt', () => {
  it("answers the CA's enrollment JWT as application/jwt, signed with the server certificate's key", async () => {
    const { id } = await registered()
    const res = await srv.mgmt.get(`/cas/${id}/jwt`)
    expectStatus(res, 200)
    expect(res.headers.get('content-type')).toBe('application/jwt')
    const pki = srv.server.pki
    const header = decodeProtectedHeader(res.text)
    expect(header.kid).toBe(pki.server.view.fingerprintSha1)
    const key = await importX509(pki.server.certPem, header.alg!)
    const { payload } = await jwtVerify(res.text, key, { currentDate: new Date(srv.clock.now()) })
    expect(payload).toEqual({ em: 'ca', aud: ['openziti-enroller'], iss: `${srv.url}/`, sub: id, jti: id })
  })

  it('answers 404 for an unknown CA', async () => {
    expectError(await srv.mgmt.get('/cas/no-such-ca/jwt'), 404, 'NOT_FOUND')
  })
})

describe('POST /cas/:id/verify', () => {
  it('verifies with a certificate the CA signed whose CN is the verification token; the CA survives a restart', async () => {
    const { id, test, view } = await registered()
    const cacerts = (await srv.raw.get('/.well-known/est/cacerts')).text
    const proof = await makeClientCert({ issuer: test.signer, commonName: view.verificationToken, clock: srv.clock })
    expectStatus(await verify(id, proof.certPem), 200)
    const after = (await srv.mgmt.get(`/cas/${id}`)).body.data
    expect(after.isVerified).toBe(true)
    expect(after._links.verify).toBeUndefined()
    // EST cacerts keeps serving the controller's own CAs only
    expect((await srv.raw.get('/.well-known/est/cacerts')).text).toBe(cacerts)
    await srv.restart()
    expect((await srv.mgmt.get(`/cas/${id}`)).body.data).toMatchObject({ isVerified: true, fingerprint: test.view.fingerprintSha1 })
  })

  it('refuses in the real controller order, and verifies nothing on a refusal', async () => {
    const { id, test, view } = await registered()
    const stranger = await makeTestCa({ clock: srv.clock })
    const token = view.verificationToken
    const steps: [string, string, number, string][] = [
      ['an empty body', '', 400, 'COULD_NOT_PARSE_BODY'],
      ['text without a PEM block', 'hello', 400, 'COULD_NOT_PARSE_BODY'],
      ['a PEM block that is not a certificate', test.keyPem, 400, 'EXPECTED_PEM_CERTIFICATE'],
      ['a CERTIFICATE block that is not a certificate', encodePem('CERTIFICATE', new Uint8Array([48, 0])), 400, 'COULD_NOT_PARSE_DER_BLOCK'],
      // a wrong CN is refused before the signature is looked at
      ['a certificate of another CA with another CN', (await makeClientCert({ issuer: stranger.signer, commonName: 'other', clock: srv.clock })).certPem, 400, 'INVALID_COMMON_NAME'],
      ['a certificate of the CA with another CN', (await makeClientCert({ issuer: test.signer, commonName: 'other', clock: srv.clock })).certPem, 400, 'INVALID_COMMON_NAME'],
      ['the token signed by another CA', (await makeClientCert({ issuer: stranger.signer, commonName: token, clock: srv.clock })).certPem, 400, 'CERTIFICATE_FAILED_VALIDATION'],
      ['the token self-signed', (await makeClientCert({ issuer: 'self', commonName: token, clock: srv.clock })).certPem, 400, 'CERTIFICATE_FAILED_VALIDATION'],
      [
        'an expired certificate of the CA',
        (await makeClientCert({ issuer: test.signer, commonName: token, notBefore: srv.clock.now() - 2 * 86_400_000, notAfter: srv.clock.now() - 86_400_000 })).certPem,
        400,
        'CERTIFICATE_FAILED_VALIDATION',
      ],
    ]
    for (const [what, body, status, code] of steps) {
      const res = await verify(id, body)
      if (res.status !== status || res.body?.error?.code !== code) throw new Error(`${what}: expected ${status} ${code}, got ${res.status} ${res.text}`)
      expectError(res, status, code)
    }
    expect((await srv.mgmt.get(`/cas/${id}`)).body.data.isVerified).toBe(false)
    const proof = await makeClientCert({ issuer: test.signer, commonName: token, clock: srv.clock })
    expectStatus(await verify(id, proof.certPem), 200)
    // once verified, that comes first, whatever the body
    expectError(await verify(id, proof.certPem), 409, 'CA_ALREADY_VERIFIED')
    expectError(await verify(id, ''), 409, 'CA_ALREADY_VERIFIED')
  })

  it('answers 404 for an unknown CA and 401 without a session', async () => {
    expectError(await verify('no-such-ca', 'x'), 404, 'NOT_FOUND')
    const { id } = await registered()
    expectError(await srv.mgmt('POST', `/cas/${id}/verify`, { rawBody: 'x', headers: { 'content-type': 'text/plain' }, session: null }), 401, 'UNAUTHORIZED')
  })

  it('reads the body as text whatever its content type: JSON is no PEM certificate', async () => {
    const { id } = await registered()
    expectError(await srv.mgmt.post(`/cas/${id}/verify`, { certificate: 'x' }), 400, 'COULD_NOT_PARSE_BODY')
  })

  it('is described in the served spec as consuming text/plain, as the JWT as producing application/jwt', async () => {
    const res = await srv.mgmt.get('/specs/edge-management/spec')
    expectStatus(res, 200)
    const paths = JSON.parse(res.body.data).paths
    expect(paths['/cas/{id}/verify'].post.consumes).toEqual(['text/plain'])
    expect(paths['/cas/{id}/verify'].post.parameters).toContainEqual(expect.objectContaining({ in: 'body', schema: expect.objectContaining({ type: 'string' }) }))
    expect(paths['/cas/{id}/jwt'].get.produces).toEqual(['application/jwt'])
    expect(paths['/cas/{id}/jwt'].get.responses['200'].schema).toEqual({ type: 'string' })
  })

  it('is not an update: PUT and PATCH leave isVerified alone', async () => {
    const { id } = await registered()
    expectStatus(await srv.mgmt.patch(`/cas/${id}`, { isVerified: true }), 200)
    expect((await srv.mgmt.get(`/cas/${id}`)).body.data.isVerified).toBe(false)
  })
})

describe('a CA made with openssl, as the README shows', () => {
  it.skipIf(!hasOpenssl)('registers and verifies', async () => {
    // openssl dates its certificates from the real clock: this controller's clock starts there too
    const real = await startTestServer({ clock: new FakeClock(systemClock.now()) })
    const dir = mkdtempSync(join(tmpdir(), 'edgeplane-openssl-ca-'))
    try {
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
      const at = (f: string) => join(dir, f)
      const ca = await runOpenssl(['req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '365', '-subj', '/CN=openssl CA',
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'])
      expect(ca.code).toBe(0)
      const certPem = readFileSync(at('ca.pem'), 'utf8')
      const id = await real.create('/cas', { name: 'openssl CA', certPem, isAuthEnabled: true, isAutoCaEnrollmentEnabled: false, isOttCaEnrollmentEnabled: true, identityRoles: [] })
      const token = (await real.mgmt.get(`/cas/${id}`)).body.data.verificationToken
      const csr = await runOpenssl(['req', ...ec, '-keyout', at('verify.key'), '-subj', `/CN=${token}`])
      expect(csr.code).toBe(0)
      const signed = await runOpenssl(['x509', '-req', '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-days', '1'], csr.stdout)
      expect(signed.code).toBe(0)
      // the certificate is valid from the second openssl made it; the fake clock stood still since the start
      real.clock.advance(systemClock.now() - real.clock.now() + 1_000)
      expectStatus(await real.mgmt('POST', `/cas/${id}/verify`, { rawBody: signed.stdout, headers: { 'content-type': 'text/plain' } }), 200)
      expect((await real.mgmt.get(`/cas/${id}`)).body.data.isVerified).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await real.stop()
    }
  })
})
