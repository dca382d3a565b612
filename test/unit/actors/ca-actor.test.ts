// The CA actor (src/actors/ca): sole holder of the controller's private keys; signs JWTs and issues certificates from
// verified CSRs (RFC 5280 §4.1.2.5 validity within the issuer's, §4.2.1.12 extended key usage), shows only public parts.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps } from '../../../src/actors/runtime/actor-runtime.ts'
import { startCaActor, type CaActor } from '../../../src/actors/ca/ca-actor.ts'
import { decideValidity } from '../../../src/domain/ca/ca-decide.ts'
import { parseCsrPem } from '../../../src/pki/pki-csr.ts'
import { parseCertificatePem } from '../../../src/pki/pki-certs.ts'
import { verifyCertificateChain } from '../../../src/pki/pki-chain.ts'
import { generateKeyPair, isKeyPairOf, importPrivateKeyPem } from '../../../src/pki/pki-keys.ts'
import { BACKDATE_MS } from '../../../src/pki/pki-bootstrap.ts'
import { makeCsrPem } from '../../support/pki.ts'
import { codeOfAsync as codeOf } from '../../support/api-error-code.ts'

const DAY_MS = 24 * 3600_000
let dir: string
let store: Store
let deps: ActorSystemDeps
let ca: CaActor
const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'))
const pkiOpts = { hostname: 'ctrl.test', extraSans: [], clock }

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-ca-'))
  store = await openStore(join(dir, 'db'))
  deps = { store, clock, bus: new EventBus(), cloneMessages: true, failStop: (e) => { throw e } }
  ca = await startCaActor(join(dir, 'pki'), pkiOpts, deps)
})
afterAll(async () => {
  await ca.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

async function csrFor(opts: Parameters<typeof makeCsrPem>[1] = {}) {
  return parseCsrPem(await makeCsrPem(await generateKeyPair(), opts))
}

/** Every value reachable from `root`, objects and arrays walked (CryptoKeys are leaves). */
function* reachable(root: unknown, seen = new Set<unknown>()): Generator<unknown> {
  if (root === null || typeof root !== 'object' || seen.has(root)) return yield root
  seen.add(root)
  yield root
  if (root instanceof CryptoKey) return
  for (const v of Object.values(root)) yield* reachable(v, seen)
}

describe('the CA actor', () => {
  it('shows no private key in its snapshot', () => {
    const values = [...reachable(ca.snapshot())]
    expect(values.some((v) => v instanceof CryptoKey && v.type === 'private')).toBe(false)
    expect(values.some((v) => typeof v === 'string' && v.includes('PRIVATE KEY'))).toBe(false)
    expect(values.filter((v) => v instanceof CryptoKey)).toHaveLength(2)
  })

  it('signs JWTs with the intermediate CA key (no kid) and with the server key (kid = its certificate\'s SHA-1)', async () => {
    const s = ca.snapshot()
    const claims = { sub: 'svc', aud: ['openziti'], jti: 'j1', z_t: 's' }
    const viaCa = await ca.ask({ type: 'ca.signJwt', key: 'signing-ca', claims })
    expect(decodeProtectedHeader(viaCa)).toEqual({ alg: 'ES256', typ: 'JWT' })
    const intermediateKey = await importX509(s.pki.intermediate.certPem, 'ES256')
    expect((await jwtVerify(viaCa, intermediateKey)).payload).toEqual(claims)

    const viaServer = await ca.ask({ type: 'ca.signJwt', key: 'server', claims: { em: 'ott', jti: 'tok' } })
    expect(decodeProtectedHeader(viaServer)).toEqual({ alg: 'ES256', typ: 'JWT', kid: s.pki.server.view.fingerprintSha1 })
    const serverKey = await importX509(s.pki.server.certPem, 'ES256')
    expect((await jwtVerify(viaServer, serverKey)).payload).toEqual({ em: 'ott', jti: 'tok' })
    // and the verifiers it shows are the matching public keys
    expect((await jwtVerify(viaServer, s.jwtVerifiers.server.publicKey)).payload.jti).toBe('tok')
    await expect(jwtVerify(viaCa, s.jwtVerifiers.server.publicKey)).rejects.toThrow()
  })

  it('issues a client certificate from a verified CSR, chained to the controller root', async () => {
    const csr = await csrFor({ commonName: 'ignored', dnsNames: ['not.granted'] })
    const spiffeId = 'spiffe://ctrl.test/identity/id-1'
    const issued = await ca.ask({ type: 'ca.issueCertificate', request: { purpose: 'client', csr, commonName: 'id-1', spiffeId, ttlMs: 365 * DAY_MS } })
    const view = parseCertificatePem(issued.certPem)
    expect(view).toMatchObject({ subjectCn: 'id-1', isCa: false, extKeyUsages: ['clientAuth'], uris: [spiffeId], dnsNames: [] })
    expect(view.issuerCn).toBe(ca.snapshot().pki.intermediate.view.subjectCn)
    expect(issued.fingerprint).toBe(view.fingerprintSha1)
    expect(view.notBefore).toBe(clock.now() - BACKDATE_MS)
    expect(issued.notAfter).toBe(clock.now() + 365 * DAY_MS)
    expect(issued.chainPem).toBe(issued.certPem + ca.snapshot().pki.intermediate.certPem)
    const chain = await verifyCertificateChain({ leaf: issued.chainPem, trusted: [ca.snapshot().pki.root.certPem], at: clock.now() })
    expect(chain.ok).toBe(true)
  })

  it('issues a server certificate for the SANs it is given, never past the intermediate\'s notAfter', async () => {
    const csr = await csrFor({ dnsNames: ['router.example'] })
    const issued = await ca.ask({
      type: 'ca.issueCertificate',
      request: { purpose: 'server', csr, commonName: 'router-1', dnsNames: ['router.example'], ipAddresses: ['10.0.0.1'], ttlMs: 100 * 365 * DAY_MS },
    })
    const view = parseCertificatePem(issued.certPem)
    expect(view).toMatchObject({ subjectCn: 'router-1', extKeyUsages: ['serverAuth'], dnsNames: ['router.example'], ipAddresses: ['10.0.0.1'] })
    expect(view.notAfter).toBe(ca.snapshot().pki.intermediate.view.notAfter)
  })

  it('refuses a server certificate without SANs and a subject without CN with COULD_NOT_PROCESS_CSR', async () => {
    const csr = await csrFor()
    const ask = (purpose: 'client' | 'server', commonName: string) =>
      ca.ask({ type: 'ca.issueCertificate', request: { purpose, csr, commonName, ttlMs: DAY_MS } })
    expect(await codeOf(ask('server', 'r'))).toBe('400 COULD_NOT_PROCESS_CSR')
    expect(await codeOf(ask('client', ' '))).toBe('400 COULD_NOT_PROCESS_CSR')
  })

  it('hands out the listener\'s TLS key and chain (leaf + intermediate)', async () => {
    const tls = await ca.ask({ type: 'ca.tlsCredentials' })
    const s = ca.snapshot().pki
    expect(tls.cert).toBe(s.server.certPem + s.intermediate.certPem)
    const spki = (await crypto.subtle.exportKey('spki', await importX509(s.server.certPem, 'ES256', { extractable: true }))) as ArrayBuffer
    expect(await isKeyPairOf(await importPrivateKeyPem(tls.key), new Uint8Array(spki))).toBe(true)
  })

  it('reuses the same PKI on the next start', async () => {
    const again = await startCaActor(join(dir, 'pki'), pkiOpts, deps)
    expect(again.snapshot().pki.root.certPem).toBe(ca.snapshot().pki.root.certPem)
    expect(again.snapshot().pki.created).toEqual([])
    await again.stop()
  })
})

describe('decideValidity', () => {
  it('backdates, clamps to the issuer, and refuses a non-positive time to live or an expired issuer', () => {
    expect(decideValidity(10_000, 5_000, 1_000, 100_000)).toEqual({ notBefore: 9_000, notAfter: 15_000 })
    expect(decideValidity(10_000, 500_000, 1_000, 100_000)).toEqual({ notBefore: 9_000, notAfter: 100_000 })
    expect(() => decideValidity(10_000, 0, 1_000, 100_000)).toThrow(TypeError)
    expect(() => decideValidity(10_000, Number.POSITIVE_INFINITY, 1_000, 100_000)).toThrow(TypeError)
    expect(() => decideValidity(10_000, 5_000, 1_000, 10_000)).toThrow(/expired/)
  })
})
