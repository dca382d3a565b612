/** src/pki/pki-chain.ts: path building and validation (RFC 5280 §6.1 subset: signatures, validity, CA, pathLen). */
import { describe, expect, it } from 'bun:test'
import { Certificate } from 'pkijs'
import { decodePem, encodePem } from '../../../src/lib/pem.ts'
import { createIntermediateCa, createRootCa, issueClientCertificate, issueServerCertificate, readCertificates, type CaSigner } from '../../../src/pki/pki-certs.ts'
import { isIssuedByTrustAnchor, verifyCertificateChain, type VerifyChainOptions } from '../../../src/pki/pki-chain.ts'
import { engine } from '../../../src/pki/pki-engine.ts'
import { generateKeyPair } from '../../../src/pki/pki-keys.ts'
import { makeClientCert, makeForeignClientCert, makeTestCa } from '../../support/pki.ts'

const DAY_MS = 86_400_000
const now = Date.UTC(2031, 2, 1)
const at = now + DAY_MS

const rootKeys = await generateKeyPair()
const rootPem = await createRootCa({ subject: { commonName: 'chain root', organization: 'edgeplane' }, keyPair: rootKeys, notBefore: now, notAfter: now + 3650 * DAY_MS })
const root: CaSigner = { certPem: rootPem, privateKey: rootKeys.privateKey }
const intKeys = await generateKeyPair()
const intPem = await createIntermediateCa({ issuer: root, subject: { commonName: 'chain intermediate' }, publicKey: intKeys.publicKey, notBefore: now, notAfter: now + 365 * DAY_MS })
const intermediate: CaSigner = { certPem: intPem, privateKey: intKeys.privateKey }
const leafKeys = await generateKeyPair()
const leafPem = await issueClientCertificate({ issuer: intermediate, publicKey: leafKeys.publicKey, commonName: 'leaf', notBefore: now, notAfter: now + 30 * DAY_MS })
const otherCa = await makeTestCa({ commonName: 'unrelated CA', notBefore: now, notAfter: now + 365 * DAY_MS })

describe('verifyCertificateChain', () => {
  it('verifies leaf → intermediate → root and returns the chain leaf first', async () => {
    const result = await verifyCertificateChain({ leaf: leafPem, intermediates: [intPem], trusted: [rootPem], at })
    expect(result.ok).toBe(true)
    if (!result.ok) return
    expect(result.chain.map((v) => v.subjectCn)).toEqual(['leaf', 'chain intermediate', 'chain root'])
    expect(result.chainPem).toEqual([leafPem, intPem, rootPem])
  })

  it('finds the intermediate among unrelated certificates given in any order', async () => {
    const result = await verifyCertificateChain({ leaf: leafPem, intermediates: [otherCa.certPem, rootPem, intPem], trusted: [otherCa.certPem, rootPem], at })
    expect(result.ok).toBe(true)
  })

  it('takes intermediates that follow the leaf in the same PEM, and DER input', async () => {
    expect((await verifyCertificateChain({ leaf: leafPem + intPem, trusted: [rootPem], at })).ok).toBe(true)
    const der = (pem: string) => decodePem(pem)[0].der
    expect((await verifyCertificateChain({ leaf: der(leafPem), intermediates: [der(intPem)], trusted: [der(rootPem)], at })).ok).toBe(true)
  })

  it('takes certificates already parsed, and still rejects a wrong root given that way', async () => {
    const [leaf, int, rootCert, other] = [leafPem, intPem, rootPem, otherCa.certPem].map((pem) => readCertificates(pem)[0])
    const result = await verifyCertificateChain({ leaf, intermediates: [int], trusted: [rootCert], at })
    expect(result.ok && result.chainPem).toEqual([leafPem, intPem, rootPem])
    expect(await verifyCertificateChain({ leaf, intermediates: [int], trusted: [other], at })).toMatchObject({ ok: false, reason: 'UNKNOWN_ISSUER' })
  })

  it('stops at a trusted intermediate without needing the root', async () => {
    const result = await verifyCertificateChain({ leaf: leafPem, trusted: [intPem], at })
    expect(result.ok && result.chain.map((v) => v.subjectCn)).toEqual(['leaf', 'chain intermediate'])
  })

  it('fails with UNKNOWN_ISSUER against the wrong root', async () => {
    const result = await verifyCertificateChain({ leaf: leafPem, intermediates: [intPem], trusted: [otherCa.certPem], at })
    expect(result).toMatchObject({ ok: false, reason: 'UNKNOWN_ISSUER' })
  })

  it('fails with UNKNOWN_ISSUER when the intermediate is missing', async () => {
    const result = await verifyCertificateChain({ leaf: leafPem, trusted: [rootPem], at })
    expect(result).toMatchObject({ ok: false, reason: 'UNKNOWN_ISSUER' })
  })

  it('fails with UNKNOWN_ISSUER for a CA that copies the root name but has another key', async () => {
    const impostorKeys = await generateKeyPair()
    const impostor = await createRootCa({ subject: { commonName: 'chain root', organization: 'edgeplane' }, keyPair: impostorKeys, notBefore: now, notAfter: now + DAY_MS * 10 })
    const result = await verifyCertificateChain({ leaf: leafPem, intermediates: [intPem], trusted: [impostor], at })
    expect(result).toMatchObject({ ok: false, reason: 'UNKNOWN_ISSUER' })
  })

  it('fails with EXPIRED for an expired leaf, and passes with allowExpired', async () => {
    const later = now + 31 * DAY_MS
    expect(await verifyCertificateChain({ leaf: leafPem, intermediates: [intPem], trusted: [rootPem], at: later })).toMatchObject({
      ok: false,
      reason: 'EXPIRED',
    })
    expect((await verifyCertificateChain({ leaf: leafPem, intermediates: [intPem], trusted: [rootPem], at: later, allowExpired: true })).ok).toBe(true)
  })

  it('fails with EXPIRED for an expired intermediate, and passes with allowExpired', async () => {
    const longLeaf = await issueClientCertificate({ issuer: intermediate, publicKey: leafKeys.publicKey, commonName: 'long', notBefore: now, notAfter: now + 900 * DAY_MS })
    const later = now + 400 * DAY_MS
    const result = await verifyCertificateChain({ leaf: longLeaf, intermediates: [intPem], trusted: [rootPem], at: later })
    expect(result).toMatchObject({ ok: false, reason: 'EXPIRED' })
    expect(!result.ok && result.message).toContain('chain intermediate')
    expect((await verifyCertificateChain({ leaf: longLeaf, intermediates: [intPem], trusted: [rootPem], at: later, allowExpired: true })).ok).toBe(true)
  })

  it('fails with NOT_YET_VALID before notBefore, even with allowExpired', async () => {
    const result = await verifyCertificateChain({ leaf: leafPem, intermediates: [intPem], trusted: [rootPem], at: now - DAY_MS, allowExpired: true })
    expect(result).toMatchObject({ ok: false, reason: 'NOT_YET_VALID' })
  })

  it('fails with BAD_SIGNATURE when the leaf signature was tampered with', async () => {
    const der = decodePem(leafPem)[0].der.slice()
    der[der.length - 2] ^= 0x01
    const result = await verifyCertificateChain({ leaf: encodePem('CERTIFICATE', der), intermediates: [intPem], trusted: [rootPem], at })
    expect(result).toMatchObject({ ok: false, reason: 'BAD_SIGNATURE' })
  })

  it('fails with BAD_SIGNATURE when a signed field of the leaf was changed', async () => {
    const der = decodePem(leafPem)[0].der.slice()
    const cn = Buffer.from(der).lastIndexOf(Buffer.from('leaf'))
    der[cn] = 'L'.charCodeAt(0)
    const result = await verifyCertificateChain({ leaf: encodePem('CERTIFICATE', der), intermediates: [intPem], trusted: [rootPem], at })
    expect(result).toMatchObject({ ok: false, reason: 'BAD_SIGNATURE' })
  })

  it('verifies an RSA leaf under an RSA foreign CA, and rejects it against our root', async () => {
    const foreign = await makeForeignClientCert({ keySpec: 'rsa-2048', clock: { now: () => now } })
    expect(foreign.view.publicKeyAlgorithm).toBe('rsa')
    const own = await verifyCertificateChain({ leaf: foreign.certPem, trusted: [foreign.ca.certPem], at })
    expect(own.ok && own.chain.map((v) => v.publicKeyAlgorithm)).toEqual(['rsa', 'rsa'])
    const ours = await verifyCertificateChain({ leaf: foreign.certPem, intermediates: [intPem], trusted: [rootPem], at })
    expect(ours).toMatchObject({ ok: false, reason: 'UNKNOWN_ISSUER' })
  })

  it('verifies a P-384 chain', async () => {
    const keys = await generateKeyPair('ec-p384')
    const caPem = await createRootCa({ subject: { commonName: 'p384 root' }, keyPair: keys, notBefore: now, notAfter: now + 10 * DAY_MS })
    const leaf = await issueServerCertificate({ issuer: { certPem: caPem, privateKey: keys.privateKey }, publicKey: leafKeys.publicKey, commonName: 'p384 leaf', dnsNames: ['x'], notBefore: now, notAfter: now + 10 * DAY_MS })
    expect((await verifyCertificateChain({ leaf, trusted: [caPem], at })).ok).toBe(true)
  })

  it('fails with PATH_LENGTH_EXCEEDED when a pathLen 0 intermediate has a CA below it', async () => {
    const subKeys = await generateKeyPair()
    const subPem = await createIntermediateCa({ issuer: intermediate, subject: { commonName: 'sub' }, publicKey: subKeys.publicKey, notBefore: now, notAfter: now + 30 * DAY_MS })
    const leaf = await issueClientCertificate({ issuer: { certPem: subPem, privateKey: subKeys.privateKey }, publicKey: leafKeys.publicKey, commonName: 'deep', notBefore: now, notAfter: now + 30 * DAY_MS })
    const result = await verifyCertificateChain({ leaf, intermediates: [subPem, intPem], trusted: [rootPem], at })
    expect(result).toMatchObject({ ok: false, reason: 'PATH_LENGTH_EXCEEDED' })
  })

  it('fails with ISSUER_NOT_CA when a leaf signed another certificate', async () => {
    const issuerLeaf = await makeClientCert({ issuer: intermediate, commonName: 'not a ca', clock: { now: () => now } })
    const issuerCert = Certificate.fromBER(decodePem(issuerLeaf.certPem)[0].der)
    const child = Certificate.fromBER(decodePem(leafPem)[0].der)
    child.issuer = issuerCert.subject
    child.extensions = child.extensions?.filter((e) => e.extnID !== '2.5.29.35')
    await child.sign(issuerLeaf.keyPair.privateKey, 'SHA-256', engine)
    const childPem = encodePem('CERTIFICATE', new Uint8Array(child.toSchema(true).toBER(false)))
    const result = await verifyCertificateChain({ leaf: childPem, intermediates: [issuerLeaf.certPem, intPem], trusted: [rootPem], at })
    expect(result).toMatchObject({ ok: false, reason: 'ISSUER_NOT_CA' })
  })

  it('rejects a self-signed leaf that is not trusted', async () => {
    const self = await makeClientCert({ issuer: 'self', clock: { now: () => now } })
    expect(await verifyCertificateChain({ leaf: self.certPem, trusted: [rootPem], at })).toMatchObject({ ok: false, reason: 'UNKNOWN_ISSUER' })
  })

  it('reports MALFORMED for input that is not a certificate, without throwing', async () => {
    expect(await verifyCertificateChain({ leaf: 'garbage', trusted: [rootPem], at })).toMatchObject({ ok: false, reason: 'MALFORMED' })
    expect(await verifyCertificateChain({ leaf: leafPem, trusted: [new Uint8Array([1, 2])], at })).toMatchObject({ ok: false, reason: 'MALFORMED' })
  })
})

// the fast path of certificate login, pinned to the full path search it stands in for
describe('isIssuedByTrustAnchor', () => {
  const der = (pem: string) => decodePem(pem)[0].der

  it('is taken for a leaf an anchor signed directly (PEM leaves go the full way)', () => {
    expect(isIssuedByTrustAnchor({ leaf: der(leafPem), trusted: [intPem], at })).toBe(true)
    expect(isIssuedByTrustAnchor({ leaf: der(leafPem), trusted: [otherCa.certPem, rootPem, intPem], at })).toBe(true)
    expect(isIssuedByTrustAnchor({ leaf: leafPem, trusted: [intPem], at })).toBe(false)
  })

  it('says true exactly when verifyCertificateChain verifies, on hostile inputs, with and without intermediates', async () => {
    const tampered = der(leafPem).slice()
    tampered[tampered.length - 2] ^= 0x01
    const renamed = der(leafPem).slice()
    renamed[Buffer.from(renamed).lastIndexOf(Buffer.from('leaf'))] = 'L'.charCodeAt(0)
    const impostorKeys = await generateKeyPair()
    const impostor = await createIntermediateCa({ issuer: root, subject: { commonName: 'chain intermediate' }, publicKey: impostorKeys.publicKey, notBefore: now, notAfter: now + 365 * DAY_MS })
    const notCa = await makeClientCert({ issuer: intermediate, commonName: 'not a ca', clock: { now: () => now } })
    const child = Certificate.fromBER(der(leafPem))
    child.issuer = Certificate.fromBER(der(notCa.certPem)).subject
    child.extensions = child.extensions?.filter((e) => e.extnID !== '2.5.29.35')
    await child.sign(notCa.keyPair.privateKey, 'SHA-256', engine)
    const longLeaf = await issueClientCertificate({ issuer: intermediate, publicKey: leafKeys.publicKey, commonName: 'long', notBefore: now, notAfter: now + 900 * DAY_MS })
    const foreign = await makeForeignClientCert({ keySpec: 'rsa-2048', clock: { now: () => now } })
    const subKeys = await generateKeyPair()
    const subPem = await createIntermediateCa({ issuer: intermediate, subject: { commonName: 'sub' }, publicKey: subKeys.publicKey, notBefore: now, notAfter: now + 30 * DAY_MS })
    const deep = await issueClientCertificate({ issuer: { certPem: subPem, privateKey: subKeys.privateKey }, publicKey: leafKeys.publicKey, commonName: 'deep', notBefore: now, notAfter: now + 30 * DAY_MS })
    const parsed = (pem: string) => readCertificates(pem)[0]
    const cases: [string, VerifyChainOptions][] = [
      ['direct', { leaf: der(leafPem), trusted: [intPem], at }],
      ['needs an intermediate', { leaf: der(leafPem), trusted: [rootPem], at }],
      ['unrelated anchor', { leaf: der(leafPem), trusted: [otherCa.certPem], at }],
      ['expired leaf', { leaf: der(leafPem), trusted: [intPem], at: now + 31 * DAY_MS }],
      ['expired leaf, allowed', { leaf: der(leafPem), trusted: [intPem], at: now + 31 * DAY_MS, allowExpired: true }],
      ['not yet valid', { leaf: der(leafPem), trusted: [intPem], at: now - DAY_MS, allowExpired: true }],
      ['expired anchor', { leaf: der(longLeaf), trusted: [intPem], at: now + 400 * DAY_MS }],
      ['expired anchor, allowed', { leaf: der(longLeaf), trusted: [intPem], at: now + 400 * DAY_MS, allowExpired: true }],
      ['tampered signature', { leaf: tampered, trusted: [intPem], at }],
      ['changed field', { leaf: renamed, trusted: [intPem], at }],
      ['same name, other key', { leaf: der(leafPem), trusted: [impostor], at }],
      ['issuer not a CA', { leaf: new Uint8Array(child.toSchema(true).toBER(false)), trusted: [notCa.certPem], at }],
      ['RSA under a foreign CA', { leaf: der(foreign.certPem), trusted: [foreign.ca.certPem], at }],
      ['garbage', { leaf: new Uint8Array([48, 3, 1, 1, 0]), trusted: [intPem], at }],
      ['through an intermediate', { leaf: der(leafPem), intermediates: [parsed(intPem)], trusted: [rootPem], at }],
      ['intermediate among others', { leaf: der(leafPem), intermediates: [parsed(otherCa.certPem), parsed(rootPem), parsed(intPem)], trusted: [otherCa.certPem, rootPem], at }],
      ['expired intermediate', { leaf: der(longLeaf), intermediates: [parsed(intPem)], trusted: [rootPem], at: now + 400 * DAY_MS }],
      ['impostor intermediate', { leaf: der(leafPem), intermediates: [parsed(impostor)], trusted: [rootPem], at }],
      ['pathLen exceeded', { leaf: der(deep), intermediates: [parsed(subPem), parsed(intPem)], trusted: [rootPem], at }],
      ['pathLen of the anchor itself exceeded', { leaf: der(deep), intermediates: [parsed(subPem)], trusted: [intPem], at }],
    ]
    const seen: Record<string, [boolean, boolean]> = {}
    for (const [name, opts] of cases) seen[name] = [isIssuedByTrustAnchor(opts), (await verifyCertificateChain(opts)).ok]
    for (const [name, [fast, full]] of Object.entries(seen)) expect([name, fast]).toEqual([name, full])
    expect(Object.values(seen).filter(([fast]) => fast)).toHaveLength(6)
  })
})
