// The keys that sign enrollment JWTs and the proof that the controller holds one (edge-api client.yml
// GET /enroll/jwks, POST /enroll/challenge; jwks, nonceChallenge, nonceSignature). The real controller declares both
// operations without serving them (docs/differences.md): these tests check what a client that reads the spec would
// rely on: an enrollment JWT verifies with the JWKS, and a challenge's signature verifies with the key its kid names.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createLocalJWKSet, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose'
import { X509Certificate } from 'node:crypto'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const jwks = async (): Promise<{ keys: (JWK & { kid: string; x5c: string[] })[] }> => {
  const res = await srv.raw.get('/edge/client/v1/enroll/jwks')
  expectStatus(res, 200)
  return res.body
}
const challenge = (body: unknown) => srv.raw.post('/edge/client/v1/enroll/challenge', body)

describe('GET /enroll/jwks', () => {
  it('lists the key enrollment JWTs are signed with, with its certificate chain; an enrollment JWT verifies with it', async () => {
    const set = await jwks()
    expect(set.keys).toHaveLength(1)
    const [key] = set.keys
    expect(key).toMatchObject({ kty: 'EC', use: 'sig', alg: 'ES256' })
    expect(key.d).toBeUndefined()
    // x5c: the server certificate, then the intermediate that issued it (standard base64 DER); kid = SHA-1 of the first
    const [server, intermediate] = key.x5c.map((b64) => new X509Certificate(Buffer.from(b64, 'base64')))
    expect(server.fingerprint.replaceAll(':', '').toLowerCase()).toBe(key.kid)
    expect(server.checkIssued(intermediate)).toBe(true)
    expect(intermediate.checkIssued(new X509Certificate(srv.caPem))).toBe(true)

    const id = await srv.create('/identities', { name: 'jwks-enrollee', type: 'Device', isAdmin: false, enrollment: { ott: true } })
    const jwt = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ott.jwt as string
    expect(decodeProtectedHeader(jwt).kid).toBe(key.kid)
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(set), { currentDate: new Date(srv.clock.now()) })
    expect(payload.sub).toBe(id)
  })

  it('needs no session, and is not enveloped', async () => {
    const res = await srv.raw.get('/edge/client/v1/enroll/jwks', { session: null })
    expectStatus(res, 200)
    expect(Object.keys(res.body)).toEqual(['keys'])
  })
})

describe('POST /enroll/challenge', () => {
  it('signs the nonce with the key its kid names; the signature verifies with the JWKS key', async () => {
    const [key] = (await jwks()).keys
    const nonce = crypto.randomUUID()
    const res = await challenge({ nonce, keyId: key.kid })
    expectStatus(res, 200)
    expect(res.body).toMatchObject({ algorithm: 'ES256', kid: key.kid })
    // caPool: the controller's CA bundle, the intermediate of the key's chain and the root
    const pool = parseCertificatesPem(res.body.caPool).map((c) => c.fingerprintSha1)
    expect(pool).toContain(parseCertificatesPem(srv.caPem)[0].fingerprintSha1)
    expect(pool).toContain(new X509Certificate(Buffer.from(key.x5c[1], 'base64')).fingerprint.replaceAll(':', '').toLowerCase())
    const publicKey = (await importJWK(key, 'ES256')) as CryptoKey
    const signature = Buffer.from(res.body.signature, 'base64url')
    const ok = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, publicKey, signature, new TextEncoder().encode(nonce))
    expect(ok).toBe(true)
    // another nonce does not verify with that signature
    const other = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, publicKey, signature, new TextEncoder().encode(crypto.randomUUID()))
    expect(other).toBe(false)
  })

  it('400 COULD_NOT_VALIDATE for a nonce that is not a UUID, an unknown keyId, or a body not the spec\'s', async () => {
    const [key] = (await jwks()).keys
    for (const nonce of ['', 'not-a-uuid', `${crypto.randomUUID()}x`, 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0']) {
      const res = await challenge({ nonce, keyId: key.kid })
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe('nonce')
    }
    const unknown = await challenge({ nonce: crypto.randomUUID(), keyId: 'no-such-kid' })
    expectError(unknown, 400, 'COULD_NOT_VALIDATE')
    expect(unknown.body.error.cause.field).toBe('keyId')
    expectError(await challenge({ nonce: crypto.randomUUID() }), 400, 'COULD_NOT_VALIDATE')
    expectError(await challenge({ keyId: key.kid }), 400, 'COULD_NOT_VALIDATE')
    expectError(await challenge({ nonce: 5, keyId: key.kid }), 400, 'COULD_NOT_VALIDATE')
  })
})
