// Enrollment by an external JWT signer's token (edge-api client.yml POST /enroll/token, tokenEnrollmentRequest;
// controller/model/enrollment_mod_token.go, token_provider_cache.go; the real controller's
// tests/enrollment_token_to_cert_test.go): the token in Authorization: Bearer creates an identity (name, externalId
// and role attributes from its claims, the signer's enrollment auth policy) with a certificate when a CSR comes with
// it, else one that logs in by ext-jwt with such tokens. Refusals with the real controller's codes; the signer's
// enrollment settings are checked when it is written. Tokens are signed here with jose at the server's fake clock.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { SignJWT, type JWTPayload } from 'jose'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { authPolicyBody, DEFAULT_POLICY_WIRE } from '../support/auth-policy.ts'
import { makeCsrPem, makeTestCa } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const AUDIENCE = 'edgeplane-enroll-tests'
const nowS = () => Math.floor(srv.clock.now() / 1000)
let seq = 0

interface Signer {
  id: string
  issuer: string
  key: CryptoKey
}

/** An auth policy with the default rules, primary cert and ext-jwt as given. */
async function policy(over: { cert?: boolean; extJwt?: boolean; signers?: string[] } = {}): Promise<string> {
  const base = authPolicyBody(`enroll-token policy ${++seq}`)
  return srv.create('/auth-policies', {
    ...base,
    primary: {
      ...base.primary,
      cert: { ...DEFAULT_POLICY_WIRE.primary.cert, allowed: over.cert ?? true },
      extJwt: { allowed: over.extJwt ?? true, allowedSigners: over.signers ?? [] },
    },
  })
}

/** A certPem signer with a fresh key; `over` are the signer's fields. */
async function signer(over: Record<string, unknown> = {}): Promise<Signer> {
  const ca = await makeTestCa({ commonName: `enroll-token signer ${++seq}`, clock: srv.clock })
  const issuer = `https://enroll-idp-${seq}.test`
  const id = await srv.create('/external-jwt-signers', { name: `enroll-signer-${seq}`, enabled: true, issuer, audience: AUDIENCE, certPem: ca.certPem, ...over })
  return { id, issuer, key: ca.keyPair.privateKey }
}

/** A JWT of `s`, valid for five minutes from the server's clock unless the claims say otherwise. */
function tokenOf(s: Pick<Signer, 'issuer' | 'key'>, claims: JWTPayload): Promise<string> {
  return new SignJWT({ iss: s.issuer, aud: AUDIENCE, iat: nowS(), exp: nowS() + 300, ...claims }).setProtectedHeader({ alg: 'ES256' }).sign(s.key)
}

async function newCsr(): Promise<{ csr: string; key: string }> {
  const keys = await generateKeyPair('ec-p256')
  return { csr: await makeCsrPem(keys, { commonName: 'whatever the client asks' }), key: await exportPrivateKeyPem(keys.privateKey) }
}

function enroll(token: string | null, body: unknown = {}, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return srv.raw.post('/edge/client/v1/enroll/token', body, { headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers } })
}

/** The identities whose externalId is `externalId`. */
async function byExternalId(externalId: string): Promise<any[]> {
  return (await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`externalId = "${externalId}"`)}`)).body.data
}

describe('POST /enroll/token with a CSR (enrollToCertEnabled)', () => {
  it('creates the identity from the token (name and externalId = sub by default) with a certificate that logs in', async () => {
    const policyId = await policy({ cert: true, extJwt: false })
    const s = await signer({ enrollToCertEnabled: true, enrollAuthPolicyId: policyId })
    const { csr, key } = await newCsr()
    const res = await enroll(await tokenOf(s, { sub: 'cert-user-1' }), { clientCsr: csr })
    expectStatus(res, 200)
    expect(res.body.data.controllers).toEqual([srv.server.advertisedUrl])
    const [leaf, intermediate] = parseCertificatesPem(res.body.data.cert)
    expect(intermediate.isCa).toBe(true)
    expect(parseCertificatesPem(res.body.data.ca).length).toBeGreaterThanOrEqual(2)

    const [identity] = await byExternalId('cert-user-1')
    expect(identity).toMatchObject({ name: 'cert-user-1', externalId: 'cert-user-1', authPolicyId: policyId, isAdmin: false, roleAttributes: [] })
    expect(identity.type.name).toBe('Default')
    expect(leaf.subjectCn).toBe(identity.id)
    expect(leaf.extKeyUsages).toEqual(['clientAuth'])
    const authenticators = (await srv.mgmt.get(`/identities/${identity.id}/authenticators`)).body.data
    expect(authenticators).toHaveLength(1)
    expect(authenticators[0]).toMatchObject({ method: 'cert', isIssuedByNetwork: true, fingerprint: leaf.fingerprintSha1 })

    const login = await srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls: { cert: res.body.data.cert, key } })
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(identity.id)
  })

  it('reads the id, name and role attributes through the signer\'s claim selectors (JSON pointers)', async () => {
    const s = await signer({
      enrollToCertEnabled: true,
      claimsProperty: 'customId',
      enrollNameClaimsSelector: '/profile/name',
      enrollAttributeClaimsSelector: 'groups',
    })
    const token = await tokenOf(s, { sub: 'ignored', customId: 'selector-id-1', profile: { name: 'Selector Person' }, groups: ['red', '', 'blue'] })
    expectStatus(await enroll(token, { clientCsr: (await newCsr()).csr }), 200)
    const [identity] = await byExternalId('selector-id-1')
    expect(identity).toMatchObject({ name: 'Selector Person', authPolicyId: 'default' })
    expect([...identity.roleAttributes].sort()).toEqual(['blue', 'red'])

    // a single string is one attribute; an absent or null claim is none
    const one = await tokenOf(s, { customId: 'selector-id-2', profile: { name: 'One Attribute' }, groups: 'green' })
    expectStatus(await enroll(one, { clientCsr: (await newCsr()).csr }), 200)
    expect((await byExternalId('selector-id-2'))[0].roleAttributes).toEqual(['green'])
    for (const [i, groups] of [undefined, null].entries()) {
      const t = await tokenOf(s, { customId: `selector-none-${i}`, profile: { name: `No Attributes ${i}` }, ...(groups === null ? { groups } : {}) })
      expectStatus(await enroll(t, { clientCsr: (await newCsr()).csr }), 200)
      expect((await byExternalId(`selector-none-${i}`))[0].roleAttributes).toEqual([])
    }
  })

  it('the same token again: 409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED; two at once: one identity', async () => {
    const s = await signer({ enrollToCertEnabled: true })
    const token = await tokenOf(s, { sub: 'twice' })
    expectStatus(await enroll(token, { clientCsr: (await newCsr()).csr }), 200)
    expectError(await enroll(token, { clientCsr: (await newCsr()).csr }), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED')

    const racing = await tokenOf(s, { sub: 'racing' })
    const answers = await Promise.all([0, 1, 2].map(async () => enroll(racing, { clientCsr: (await newCsr()).csr })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409])
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.error.code).toBe('ENROLLMENT_IDENTITY_ALREADY_ENROLLED')
    expect(await byExternalId('racing')).toHaveLength(1)
  })

  it('takes the signer named by ziti-token-issuer-id, and the generic POST /enroll?method=token with a PEM body', async () => {
    const s = await signer({ enrollToCertEnabled: true })
    const token = await tokenOf(s, { sub: 'by-header' })
    expectStatus(await enroll(token, { clientCsr: (await newCsr()).csr }, { 'ziti-token-issuer-id': s.id }), 200)
    const other = await tokenOf(s, { sub: 'by-header-wrong' })
    expectError(await enroll(other, { clientCsr: (await newCsr()).csr }, { 'ziti-token-issuer-id': 'no-such-signer' }), 400, 'INVALID_ENROLLMENT_TOKEN')

    const generic = await srv.raw('POST', '/edge/client/v1/enroll?method=token', {
      rawBody: (await newCsr()).csr,
      headers: { 'content-type': 'application/x-pem-file', authorization: `Bearer ${await tokenOf(s, { sub: 'generic-form' })}` },
    })
    expectStatus(generic, 200)
    expect(parseCertificatesPem(generic.body.data.cert)[0].subjectCn).toBe((await byExternalId('generic-form'))[0].id)
  })
})

describe('POST /enroll/token without a CSR (enrollToTokenEnabled)', () => {
  it('creates an identity that logs in by ext-jwt with the signer\'s tokens', async () => {
    const s = await signer({ useExternalId: true })
    const policyId = await policy({ cert: false, extJwt: true, signers: [s.id] })
    expectStatus(await srv.mgmt.patch(`/external-jwt-signers/${s.id}`, { enrollToTokenEnabled: true, enrollAuthPolicyId: policyId }), 200)
    const token = await tokenOf(s, { sub: 'token-user-1' })
    const res = await enroll(token)
    expectStatus(res, 200)
    expect(res.body.data).toEqual({ controllers: [srv.server.advertisedUrl] })
    const [identity] = await byExternalId('token-user-1')
    expect(identity).toMatchObject({ name: 'token-user-1', authPolicyId: policyId })
    expect((await srv.mgmt.get(`/identities/${identity.id}/authenticators`)).body.data).toEqual([])
    const login = await srv.raw.post('/edge/client/v1/authenticate?method=ext-jwt', {}, { headers: { authorization: `Bearer ${token}` } })
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(identity.id)
    expectError(await enroll(token), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED')
  })
})

describe('POST /enroll/token refusals (nothing is written)', () => {
  let certSigner: Signer
  beforeAll(async () => {
    certSigner = await signer({ enrollToCertEnabled: true, enrollAttributeClaimsSelector: '/groups' })
  })

  const refused = async (res: ApiResponse, status: number, code: string, externalId: string) => {
    expectError(res, status, code)
    expect(await byExternalId(externalId)).toEqual([])
  }

  it('400 INVALID_ENROLLMENT_TOKEN without a bearer token, or with one that does not verify', async () => {
    const { csr } = await newCsr()
    await refused(await enroll(null, { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'none')
    await refused(await enroll('not-a-jwt', { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'none')
    await refused(await enroll(await tokenOf(certSigner, { sub: 'expired', exp: nowS() - 10 }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'expired')
    await refused(await enroll(await tokenOf(certSigner, { sub: 'wrong-aud', aud: 'other' }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'wrong-aud')
    const forger = await makeTestCa({ commonName: 'forger', clock: srv.clock })
    const forged = await tokenOf({ issuer: certSigner.issuer, key: forger.keyPair.privateKey }, { sub: 'forged' })
    await refused(await enroll(forged, { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'forged')
    const unknownIssuer = await tokenOf({ issuer: 'https://nobody.test', key: certSigner.key }, { sub: 'unknown-issuer' })
    await refused(await enroll(unknownIssuer, { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'unknown-issuer')
    const res = await srv.raw.post('/edge/client/v1/enroll/token', { clientCsr: csr }, { headers: { authorization: 'Basic abc' } })
    expectError(res, 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('400 INVALID_ENROLLMENT_TOKEN when the signer is disabled', async () => {
    const s = await signer({ enrollToCertEnabled: true, enabled: false })
    await refused(await enroll(await tokenOf(s, { sub: 'disabled-signer' }), { clientCsr: (await newCsr()).csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'disabled-signer')
  })

  it('400 INVALID_ENROLLMENT_TOKEN when the id or name claim is missing, empty or not a string, or the attributes are not strings', async () => {
    const { csr } = await newCsr()
    await refused(await enroll(await tokenOf(certSigner, {}), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', '')
    await refused(await enroll(await tokenOf(certSigner, { sub: '' }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', '')
    const named = await signer({ enrollToCertEnabled: true, enrollNameClaimsSelector: '/name' })
    await refused(await enroll(await tokenOf(named, { sub: 'no-name' }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'no-name')
    await refused(await enroll(await tokenOf(named, { sub: 'null-name', name: null }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'null-name')
    await refused(await enroll(await tokenOf(named, { sub: 'number-name', name: 7 }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'number-name')
    await refused(await enroll(await tokenOf(certSigner, { sub: 'bad-groups', groups: { a: 1 } }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'bad-groups')
    await refused(await enroll(await tokenOf(certSigner, { sub: 'mixed-groups', groups: ['a', 2] }), { clientCsr: csr }), 400, 'INVALID_ENROLLMENT_TOKEN', 'mixed-groups')
  })

  it('409 INVALID_ENROLLMENT_NOT_ALLOWED when the signer does not allow the kind of enrollment asked for', async () => {
    await refused(await enroll(await tokenOf(certSigner, { sub: 'no-token-kind' })), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED', 'no-token-kind')
    const tokenOnly = await signer({ useExternalId: true, enrollToTokenEnabled: true })
    await refused(await enroll(await tokenOf(tokenOnly, { sub: 'no-cert-kind' }), { clientCsr: (await newCsr()).csr }), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED', 'no-cert-kind')
    const neither = await signer()
    await refused(await enroll(await tokenOf(neither, { sub: 'neither' }), { clientCsr: (await newCsr()).csr }), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED', 'neither')
  })

  it('409 INVALID_ENROLLMENT_NOT_ALLOWED when the auth policy stopped allowing it after the signer was written', async () => {
    const policyId = await policy({ cert: true, extJwt: true })
    const s = await signer({ enrollToCertEnabled: true, enrollToTokenEnabled: true, useExternalId: true, enrollAuthPolicyId: policyId })
    expectStatus(await srv.mgmt.patch(`/auth-policies/${policyId}`, { primary: { cert: { allowed: false }, extJwt: { allowed: false } } }), 200)
    await refused(await enroll(await tokenOf(s, { sub: 'policy-no-cert' }), { clientCsr: (await newCsr()).csr }), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED', 'policy-no-cert')
    await refused(await enroll(await tokenOf(s, { sub: 'policy-no-ext-jwt' })), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED', 'policy-no-ext-jwt')
    // ext-jwt allowed again, but only for another signer
    const other = await signer()
    expectStatus(await srv.mgmt.patch(`/auth-policies/${policyId}`, { primary: { extJwt: { allowed: true, allowedSigners: [other.id] } } }), 200)
    await refused(await enroll(await tokenOf(s, { sub: 'policy-other-signer' })), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED', 'policy-other-signer')
  })

  it('409 INVALID_ENROLLMENT_NOT_ALLOWED for token login by a signer without useExternalId (the identity could never log in)', async () => {
    const s = await signer({ enrollToTokenEnabled: true, useExternalId: false })
    await refused(await enroll(await tokenOf(s, { sub: 'never-logs-in' })), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED', 'never-logs-in')
  })

  it('409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED when an admin\'s identity holds the externalId', async () => {
    await srv.create('/identities', { name: 'admin-made', type: 'User', isAdmin: false, externalId: 'taken-external-id' })
    expectError(await enroll(await tokenOf(certSigner, { sub: 'taken-external-id' }), { clientCsr: (await newCsr()).csr }), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED')
    expect(await byExternalId('taken-external-id')).toHaveLength(1)
  })

  it('400 COULD_NOT_PROCESS_CSR for a CSR that does not parse; 400 COULD_NOT_VALIDATE for a name taken, a role attribute an admin could not set, or a body not the spec\'s', async () => {
    await refused(await enroll(await tokenOf(certSigner, { sub: 'bad-csr' }), { clientCsr: 'garbage' }), 400, 'COULD_NOT_PROCESS_CSR', 'bad-csr')
    await srv.create('/identities', { name: 'name-taken', type: 'User', isAdmin: false })
    const named = await signer({ enrollToCertEnabled: true, enrollNameClaimsSelector: 'name' })
    const taken = await enroll(await tokenOf(named, { sub: 'name-taken-id', name: 'name-taken' }), { clientCsr: (await newCsr()).csr })
    await refused(taken, 400, 'COULD_NOT_VALIDATE', 'name-taken-id')
    expect(taken.body.error.cause.field).toBe('name')
    const hashed = await enroll(await tokenOf(certSigner, { sub: 'hashed-attribute', groups: ['ok', '#all'] }), { clientCsr: (await newCsr()).csr })
    await refused(hashed, 400, 'COULD_NOT_VALIDATE', 'hashed-attribute')
    expect(hashed.body.error.cause.field).toBe('roleAttributes')
    await refused(await enroll(await tokenOf(named, { sub: 'bad-body', name: 'bad body' }), { clientCsr: 5 }), 400, 'COULD_NOT_VALIDATE', 'bad-body')
  })
})

describe('the signer\'s enrollment settings', () => {
  it('default to the name claim /sub and the default auth policy', async () => {
    const s = await signer()
    expect((await srv.mgmt.get(`/external-jwt-signers/${s.id}`)).body.data).toMatchObject({
      enrollToCertEnabled: false,
      enrollToTokenEnabled: false,
      enrollNameClaimsSelector: '/sub',
      enrollAttributeClaimsSelector: '',
      enrollAuthPolicyId: 'default',
    })
  })

  it('400 COULD_NOT_VALIDATE for an unknown auth policy, one that does not allow the enrollment, or a selector that is no JSON pointer', async () => {
    const base = { name: `refused-signer-${++seq}`, enabled: true, issuer: `https://refused-${seq}.test`, audience: AUDIENCE, certPem: (await makeTestCa({ clock: srv.clock })).certPem }
    const field = async (body: Record<string, unknown>, name: string) => {
      const res = await srv.mgmt.post('/external-jwt-signers', { ...base, ...body })
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(name)
    }
    await field({ enrollAuthPolicyId: 'no-such-policy' }, 'enrollAuthPolicyId')
    await field({ enrollToCertEnabled: true, enrollAuthPolicyId: await policy({ cert: false }) }, 'enrollAuthPolicyId')
    await field({ enrollToTokenEnabled: true, enrollAuthPolicyId: await policy({ extJwt: false }) }, 'enrollAuthPolicyId')
    await field({ enrollNameClaimsSelector: '/a~2' }, 'enrollNameClaimsSelector')
    await field({ enrollAttributeClaimsSelector: 'groups~' }, 'enrollAttributeClaimsSelector')
    expect((await srv.mgmt.get(`/external-jwt-signers?filter=${encodeURIComponent(`name = "${base.name}"`)}`)).body.data).toEqual([])
  })

  it('an auth policy a signer enrolls into cannot be deleted (409 CAN_NOT_DELETE_REFERENCED_ENTITY) until the signer lets go', async () => {
    const policyId = await policy()
    const s = await signer({ enrollAuthPolicyId: policyId })
    expectError(await srv.mgmt.del(`/auth-policies/${policyId}`), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY')
    expectStatus(await srv.mgmt.patch(`/external-jwt-signers/${s.id}`, { enrollAuthPolicyId: 'default' }), 200)
    expectStatus(await srv.mgmt.del(`/auth-policies/${policyId}`), 200)
  })
})

describe('an enrolled identity across a restart', () => {
  it('keeps its identity and certificate authenticator', async () => {
    const s = await signer({ enrollToCertEnabled: true })
    const { csr, key } = await newCsr()
    const res = await enroll(await tokenOf(s, { sub: 'restart-user' }), { clientCsr: csr })
    expectStatus(res, 200)
    await srv.restart()
    const login = await srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls: { cert: res.body.data.cert, key } })
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe((await byExternalId('restart-user'))[0].id)
  })
})
