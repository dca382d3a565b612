// The cert primary method (src/flows/authenticate/auth-cert.ts) against a real identity actor: the chain must end at
// a trust anchor, the leaf must be for client authentication and belong to a cert authenticator, and every failure is
// the same 401 INVALID_AUTH with its reason in the log only (controller-behaviour.md §4 "cert").
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ApiError } from '../../../src/errors/api-error.ts'
import { decodePem } from '../../../src/lib/pem.ts'
import { generateKeyPair } from '../../../src/pki/pki-keys.ts'
import { issueServerCertificate, parseCertificatePem } from '../../../src/pki/pki-certs.ts'
import { createCertAuthMethod, trustAnchorsOf } from '../../../src/flows/authenticate/auth-cert.ts'
import { makeClientCert, makeTestCa, type TestCa } from '../../support/pki.ts'
import { change, openCore, type Core } from './flows-support.ts'

let core: Core
let ca: TestCa
let other: TestCa
const logged: string[] = []
let anchors: string[] = []

beforeAll(async () => {
  core = await openCore()
  ca = await makeTestCa({ commonName: 'anchor CA', clock: core.clock })
  other = await makeTestCa({ commonName: 'other CA', clock: core.clock })
  anchors = [ca.certPem]
})
afterAll(async () => {
  await core.close()
})

const method = () => createCertAuthMethod({ identities: core.identities, clock: core.clock, trustAnchors: () => anchors, log: (l) => logged.push(l) })

/** An identity whose cert authenticator holds `certPem` (made through an ott enrollment, as in production). */
async function holderOf(name: string, certPem: string): Promise<string> {
  const token = crypto.randomUUID()
  const { id } = await core.identities.ask({
    type: 'identity.create',
    input: { name },
    enrollments: [{ method: 'ott', token, jwt: 'jwt', expiresAt: core.clock.now() + 60_000, caId: null, username: null }],
    change,
  })
  const fingerprint = parseCertificatePem(certPem).fingerprintSha1
  await core.identities.ask({ type: 'enrollment.redeemWithCertificate', token, method: 'ott', certPem, fingerprint, isIssuedByNetwork: false, change })
  return id
}

const peerOf = (...pems: string[]) => ({ certChainDer: pems.map((p) => decodePem(p)[0].der), remoteAddress: '192.0.2.1' })
const input = { header: () => null }

async function refusal(peer: ReturnType<typeof peerOf>): Promise<string> {
  logged.length = 0
  const e = await method().authenticate(input, peer).then(() => null, (err: unknown) => err)
  expect(e).toBeInstanceOf(ApiError)
  expect([(e as ApiError).status, (e as ApiError).code]).toEqual([401, 'INVALID_AUTH'])
  expect(logged).toHaveLength(1)
  return logged[0]
}

describe('createCertAuthMethod', () => {
  it('answers the identity and authenticator of a trusted client certificate', async () => {
    const cert = await makeClientCert({ issuer: ca.signer, clock: core.clock })
    const id = await holderOf('cert-ok', cert.certPem)
    const auth = await method().authenticate(input, peerOf(cert.certPem))
    expect(auth.identity.id).toBe(id)
    expect(auth.authenticator.method).toBe('cert')
  })

  it('refuses an enrolled certificate whose chain does not end at a trust anchor, and says why in the log', async () => {
    const cert = await makeClientCert({ issuer: other.signer, clock: core.clock })
    await holderOf('cert-untrusted', cert.certPem)
    expect(await refusal(peerOf(cert.certPem))).toContain('UNKNOWN_ISSUER')
  })

  it('trusts a CA as soon as the trust anchors name it (no restart)', async () => {
    const cert = await makeClientCert({ issuer: other.signer, clock: core.clock })
    await holderOf('cert-later-trusted', cert.certPem)
    anchors = [ca.certPem, other.certPem]
    try {
      expect((await method().authenticate(input, peerOf(cert.certPem))).authenticator.method).toBe('cert')
    } finally {
      anchors = [ca.certPem]
    }
  })

  it('refuses a certificate whose extendedKeyUsage lacks clientAuth', async () => {
    const keys = await generateKeyPair()
    const now = core.clock.now()
    const serverPem = await issueServerCertificate({ issuer: ca.signer, publicKey: keys.publicKey, commonName: 'srv', dnsNames: ['srv.example'], notBefore: now - 1000, notAfter: now + 3_600_000 })
    await holderOf('cert-server-only', serverPem)
    expect(await refusal(peerOf(serverPem))).toContain('not for client authentication')
  })

  it('refuses a trusted certificate no authenticator holds, and a caller without one', async () => {
    const cert = await makeClientCert({ issuer: ca.signer, clock: core.clock })
    expect(await refusal(peerOf(cert.certPem))).toContain('no cert authenticator')
    expect(await refusal(peerOf())).toContain('no client certificate')
  })
})

describe('trustAnchorsOf', () => {
  const ca = (id: string) => ({ certPem: `pem-${id}` }) as never
  it('answers the own CAs, then the auth-enabled third-party CAs, rebuilt only when trustVersion moves', () => {
    let reads = { trustVersion: 0, authTrustAnchors: () => [] as never[], calls: 0 }
    const anchors = trustAnchorsOf(['own-1', 'own-2'], () => reads)
    expect(anchors()).toEqual(['own-1', 'own-2'])
    let built = 0
    reads = { trustVersion: 1, authTrustAnchors: () => (built++, [ca('a'), ca('b')]), calls: 0 }
    const first = anchors()
    expect(first).toEqual(['own-1', 'own-2', 'pem-a', 'pem-b'])
    expect(anchors()).toBe(first)
    expect(built).toBe(1)
    reads = { trustVersion: 2, authTrustAnchors: () => [ca('b')], calls: 0 }
    expect(anchors()).toEqual(['own-1', 'own-2', 'pem-b'])
  })
})
