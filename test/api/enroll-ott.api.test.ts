// One-time-token enrollment: identity create with enrollment {ott: true}, the enrollment JWT, and its redemption by
// POST /enroll/ott and the legacy generic POST /enroll?token= (without a method, the token's own; a PEM CSR body; a
// JSON answer) (controller-behaviour.md §6; edge-api client.yml enrollOtt, enroll; management.yml identityEnrollments).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose'
import { decodePem, encodePem } from '../../src/lib/pem.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { verifyCertificateChain } from '../../src/pki/pki-chain.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { makeCsrPem } from '../support/pki.ts'

let srv: TestServer
let csrPem: string
beforeAll(async () => {
  srv = await startTestServer()
  csrPem = await makeCsrPem(await generateKeyPair('ec-p256'), { commonName: 'my device' })
})
afterAll(async () => {
  await srv.stop()
})

/** Creates an identity with an ott enrollment; answers its id and the enrollment the identity view shows. */
async function withOtt(name: string): Promise<{ id: string; ott: { id: string; jwt: string; token: string; expiresAt: string } }> {
  const id = await srv.create('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ott: true } })
  const res = await srv.mgmt.get(`/identities/${id}`)
  expectStatus(res, 200)
  return { id, ott: res.body.data.enrollment.ott }
}

const enrollOtt = (token: string | undefined, clientCsr: string | undefined, headers?: Record<string, string>) =>
  srv.client.post('/enroll/ott', { token, clientCsr }, { headers })

describe('POST /identities with enrollment {ott: true}', () => {
  it('stores the enrollment with the identity and shows it on the identity', async () => {
    const { id, ott } = await withOtt('ott-shown')
    expect(ott.token).toMatch(/^[0-9a-f-]{36}$/)
    expect(ott.id).toBeString()
    // default lifetime: 180 minutes from creation
    expect(Date.parse(ott.expiresAt) - srv.clock.now()).toBe(180 * 60_000)
    const list = await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`id="${id}"`)}`)
    expect(list.body.data[0].enrollment.ott.token).toBe(ott.token)
  })

  it('signs the JWT with the TLS server key, with the claims of the real controller', async () => {
    const { id, ott } = await withOtt('ott-jwt')
    const header = decodeProtectedHeader(ott.jwt)
    expect(header.kid).toBe(srv.server.pki.server.view.fingerprintSha1)
    const key = await importX509(srv.server.pki.server.certPem, header.alg!)
    const { payload } = await jwtVerify(ott.jwt, key, { currentDate: new Date(srv.clock.now()) })
    expect(payload).toEqual({
      iss: srv.server.advertisedUrl,
      sub: id,
      aud: [''],
      jti: ott.token,
      exp: Math.floor(Date.parse(ott.expiresAt) / 1000),
      em: 'ott',
      ctrls: [srv.server.ctrlEndpoint],
    })
  })
})

describe('POST /enroll/ott', () => {
  it('issues a client certificate for the CSR, creates the cert authenticator and consumes the token', async () => {
    const { id, ott } = await withOtt('ott-json')
    const res = await enrollOtt(ott.token, csrPem)
    expectStatus(res, 200)
    expect(res.body.data.controllers).toEqual([srv.server.advertisedUrl])
    const [leaf, intermediate] = parseCertificatesPem(res.body.data.cert)
    expect(leaf.subjectCn).toBe(id)
    expect(leaf.uris).toEqual([`spiffe://${srv.server.pki.root.view.fingerprintSha1}/identity/${id}`])
    expect(leaf.extKeyUsages).toEqual(['clientAuth'])
    expect(leaf.isCa).toBe(false)
    expect(leaf.publicKeyAlgorithm).toBe('ec-p256')
    expect(intermediate.fingerprintSha1).toBe(srv.server.pki.intermediate.view.fingerprintSha1)
    // chains to what /.well-known/est/cacerts serves (the root, through the intermediate)
    const chain = await verifyCertificateChain({ leaf: res.body.data.cert, trusted: [srv.server.pki.root.certPem], at: srv.clock.now() })
    expect(chain.ok).toBe(true)

    const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(identity.enrollment).toEqual({})
    expect(identity.authenticators.cert.fingerprint).toBe(leaf.fingerprintSha1)
    const auths = await srv.mgmt.get(`/identities/${id}/authenticators`)
    const cert = auths.body.data.find((a: any) => a.method === 'cert')
    expect(cert).toMatchObject({ isIssuedByNetwork: true, fingerprint: leaf.fingerprintSha1, identityId: id })

    expectError(await enrollOtt(ott.token, csrPem), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('refuses a missing or unknown token with INVALID_ENROLLMENT_TOKEN', async () => {
    expectError(await enrollOtt(undefined, csrPem), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectError(await enrollOtt(crypto.randomUUID(), csrPem), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('refuses the token of a deleted identity', async () => {
    const { id, ott } = await withOtt('ott-deleted')
    expectStatus(await srv.mgmt.del(`/identities/${id}`), 200)
    expectError(await enrollOtt(ott.token, csrPem), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  describe('bad CSRs: 400 COULD_NOT_PROCESS_CSR with a cause, and nothing written', () => {
    const cases: [string, () => Promise<string | undefined>][] = [
      ['a missing CSR', async () => undefined],
      ['garbage', async () => 'not a csr at all'],
      ['a truncated CSR', async () => csrPem.slice(0, csrPem.length / 2)],
      ['a certificate instead of a CSR', async () => srv.server.pki.root.certPem],
      ['a CSR whose signature does not verify', async () => {
        const der = decodePem(csrPem)[0].der.slice()
        der[der.length - 1] ^= 0x01
        return encodePem('CERTIFICATE REQUEST', der)
      }],
      ['a CSR that asks for CA rights', async () => makeCsrPem(await generateKeyPair('ec-p256'), { askCa: true })],
      ['a CSR that asks for a DNS name', async () => makeCsrPem(await generateKeyPair('ec-p256'), { dnsNames: ['bank.example'] })],
      ['a CSR that asks for another SPIFFE id', async () => makeCsrPem(await generateKeyPair('ec-p256'), { uris: ['spiffe://elsewhere/identity/admin'] })],
    ]
    for (const [what, csr] of cases) {
      it(`refuses ${what}`, async () => {
        const { id, ott } = await withOtt(`ott-bad-${what.replaceAll(' ', '-')}`)
        const res = await enrollOtt(ott.token, await csr())
        expectError(res, 400, 'COULD_NOT_PROCESS_CSR')
        expect(res.body.error.cause.message).toBeString()
        const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
        expect(identity.enrollment.ott.token).toBe(ott.token)
        expect(identity.authenticators).toEqual({})
      })
    }
  })

  it('accepts a CSR that asks for the identity\'s own SPIFFE id', async () => {
    const { id, ott } = await withOtt('ott-own-spiffe')
    const own = `spiffe://${srv.server.pki.root.view.fingerprintSha1}/identity/${id}`
    const res = await enrollOtt(ott.token, await makeCsrPem(await generateKeyPair('ec-p256'), { uris: [own] }))
    expectStatus(res, 200)
    expect(parseCertificatesPem(res.body.data.cert)[0].uris).toEqual([own])
  })

  it('lets exactly one of several racing enrollments use a token', async () => {
    const { id, ott } = await withOtt('ott-race')
    const results = await Promise.all(Array.from({ length: 6 }, () => enrollOtt(ott.token, csrPem)))
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 400, 'INVALID_ENROLLMENT_TOKEN')
    const auths = await srv.mgmt.get(`/identities/${id}/authenticators`)
    expect(auths.body.data.filter((a: any) => a.method === 'cert')).toHaveLength(1)
  })

  it('answers 415 UNSUPPORTED_MEDIA to a caller that does not accept JSON', async () => {
    const { ott } = await withOtt('ott-accept')
    expectError(await enrollOtt(ott.token, csrPem, { accept: 'application/x-pem-file' }), 415, 'UNSUPPORTED_MEDIA')
    expectStatus(await enrollOtt(ott.token, csrPem, { accept: 'text/html, */*;q=0.1' }), 200)
  })

  it('keeps an enrollment across a restart', async () => {
    const { ott } = await withOtt('ott-restart')
    await srv.restart()
    expectStatus(await enrollOtt(ott.token, csrPem), 200)
  })
})

describe("POST /enroll?token=… (legacy generic form: the token's own method when none is named, a PEM CSR body)", () => {
  /** POST /enroll with `query`, the body as it is and `headers` (no content type unless given). */
  const legacy = (query: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
    srv.client('POST', `/enroll?${query}`, { rawBody: body, headers })

  /** The identity's ott enrollment is still there and it has no authenticator: the refusal wrote nothing. */
  async function expectUntouched(id: string, token: string): Promise<void> {
    const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(identity.enrollment.ott.token).toBe(token)
    expect(identity.authenticators).toEqual({})
  }

  // what older SDKs send: the C SDK text/plain, the Java/Kotlin SDK application/x-pem-file; application/pkcs7 and no
  // content type are the real controller's other legacy types
  const contentTypes = ['application/x-pem-file', 'application/pkcs7', 'text/plain', 'text/plain; charset=utf-8', undefined]
  for (const contentType of contentTypes) {
    it(`enrolls as ott without a method from a PEM body (${contentType ?? 'no content type'}), answers JSON, and the certificate logs in`, async () => {
      const { id, ott } = await withOtt(`ott-legacy-${contentType ?? 'none'}`)
      const keys = await generateKeyPair('rsa-2048')
      const res = await legacy(`token=${ott.token}`, await makeCsrPem(keys), contentType ? { 'content-type': contentType } : {})
      expectStatus(res, 200)
      expect(res.headers.get('content-type')).toBe('application/json')
      expect(res.body.data.controllers).toEqual([srv.server.advertisedUrl])
      const [leaf] = parseCertificatesPem(res.body.data.cert)
      expect(leaf.subjectCn).toBe(id)
      expect(leaf.publicKeyAlgorithm).toBe('rsa')
      const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
      expect(identity.enrollment).toEqual({})
      expect(identity.authenticators.cert.fingerprint).toBe(leaf.fingerprintSha1)

      const login = await srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, {
        tls: { cert: res.body.data.cert, key: await exportPrivateKeyPem(keys.privateKey) },
      })
      expectStatus(login, 200)
      expect(login.body.data.identity.id).toBe(id)
    })
  }

  it('takes an explicit method=ott and an empty method= as ott', async () => {
    const first = await withOtt('ott-legacy-explicit')
    expectStatus(await legacy(`method=ott&token=${first.ott.token}`, csrPem, { 'content-type': 'application/x-pem-file' }), 200)
    const second = await withOtt('ott-legacy-empty-method')
    expectStatus(await legacy(`method=&token=${second.ott.token}`, csrPem, { 'content-type': 'text/plain' }), 200)
  })

  it('takes the JSON form with clientCsr, with or without a method', async () => {
    const first = await withOtt('ott-legacy-json')
    expectStatus(await srv.client.post(`/enroll?method=ott&token=${first.ott.token}`, { clientCsr: csrPem }), 200)
    const second = await withOtt('ott-legacy-json-no-method')
    const res = await srv.client.post(`/enroll?token=${second.ott.token}`, { clientCsr: csrPem })
    expectStatus(res, 200)
    expect(parseCertificatesPem(res.body.data.cert)[0].subjectCn).toBe(second.id)
  })

  it('reads a JSON body with the JSON parser only: a PEM body sent as JSON is 400 COULD_NOT_PARSE_BODY', async () => {
    const { id, ott } = await withOtt('ott-legacy-pem-as-json')
    expectError(await legacy(`token=${ott.token}`, csrPem, { 'content-type': 'application/json' }), 400, 'COULD_NOT_PARSE_BODY')
    await expectUntouched(id, ott.token)
  })

  it('refuses a token already used, an unknown one and none with INVALID_ENROLLMENT_TOKEN', async () => {
    const { ott } = await withOtt('ott-legacy-used')
    expectStatus(await legacy(`token=${ott.token}`, csrPem, { 'content-type': 'text/plain' }), 200)
    expectError(await legacy(`token=${ott.token}`, csrPem, { 'content-type': 'text/plain' }), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectError(await legacy(`token=${crypto.randomUUID()}`, csrPem, { 'content-type': 'application/x-pem-file' }), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectError(await legacy('', csrPem, { 'content-type': 'application/x-pem-file' }), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('refuses the token of an identity deleted meanwhile with INVALID_ENROLLMENT_TOKEN', async () => {
    const { id, ott } = await withOtt('ott-legacy-deleted')
    expectStatus(await srv.mgmt.del(`/identities/${id}`), 200)
    expectError(await legacy(`token=${ott.token}`, csrPem, { 'content-type': 'text/plain' }), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  describe('a body that is not a CSR: 400 COULD_NOT_PROCESS_CSR with a cause, and nothing written', () => {
    const cases: [string, () => string | Uint8Array][] = [
      ['text that is no PEM', () => 'not a csr at all'],
      ['an empty body', () => ''],
      ['a certificate instead of a CSR', () => srv.server.pki.root.certPem],
      ['a truncated CSR', () => csrPem.slice(0, csrPem.length / 2)],
      ['bytes that are not UTF-8', () => new Uint8Array([0x30, 0x82, 0xff, 0xfe, 0x00, 0xc3, 0x28])],
      ['a JSON document under a PEM type', () => JSON.stringify({ clientCsr: csrPem })],
    ]
    for (const [what, body] of cases) {
      it(`refuses ${what}`, async () => {
        const { id, ott } = await withOtt(`ott-legacy-bad-${what.replaceAll(' ', '-')}`)
        const res = await legacy(`token=${ott.token}`, body(), { 'content-type': 'application/x-pem-file' })
        expectError(res, 400, 'COULD_NOT_PROCESS_CSR')
        expect(res.body.error.cause.message).toBeString()
        await expectUntouched(id, ott.token)
      })
    }
  })

  it('answers 415 UNSUPPORTED_MEDIA to a caller that does not accept JSON, and uses nothing', async () => {
    const { id, ott } = await withOtt('ott-legacy-accept')
    for (const accept of ['application/x-pem-file', 'application/x-x509-user-cert', 'text/plain']) {
      expectError(await legacy(`token=${ott.token}`, csrPem, { 'content-type': 'application/x-pem-file', accept }), 415, 'UNSUPPORTED_MEDIA')
    }
    await expectUntouched(id, ott.token)
    expectStatus(await legacy(`token=${ott.token}`, csrPem, { 'content-type': 'application/x-pem-file', accept: 'application/x-pem-file, */*' }), 200)
  })

  it('refuses another content type with 415 UNSUPPORTED_MEDIA and an unknown method with INVALID_ENROLL_METHOD', async () => {
    const { id, ott } = await withOtt('ott-legacy-refusals')
    expectError(await legacy(`method=ott&token=${ott.token}`, csrPem, { 'content-type': 'application/xml' }), 415, 'UNSUPPORTED_MEDIA')
    expectError(await legacy(`token=${ott.token}`, csrPem, { 'content-type': 'application/octet-stream' }), 415, 'UNSUPPORTED_MEDIA')
    expectError(await srv.client.post(`/enroll?method=nope&token=${ott.token}`, { clientCsr: csrPem }), 400, 'INVALID_ENROLL_METHOD')
    await expectUntouched(id, ott.token)
  })

  it('keeps the body limit: a PEM body over 1 MiB is 413 REQUEST_ENTITY_TOO_LARGE', async () => {
    const { id, ott } = await withOtt('ott-legacy-too-large')
    const padded = csrPem + 'x'.repeat(1024 * 1024)
    expectError(await legacy(`token=${ott.token}`, padded, { 'content-type': 'text/plain' }), 413, 'REQUEST_ENTITY_TOO_LARGE')
    await expectUntouched(id, ott.token)
  })
})

// last: moving the clock past the enrollment's lifetime also ends the admin's session
describe('an enrollment past its expiresAt', () => {
  it('is refused with ENROLLMENT_EXPIRED', async () => {
    const { ott } = await withOtt('ott-expired')
    srv.clock.advance(180 * 60_000)
    expectError(await enrollOtt(ott.token, csrPem), 400, 'ENROLLMENT_EXPIRED')
    const generic = await srv.raw('POST', `/edge/client/v1/enroll?token=${ott.token}`, { rawBody: csrPem, headers: { 'content-type': 'text/plain' } })
    expectError(generic, 400, 'ENROLLMENT_EXPIRED')
  })
})
