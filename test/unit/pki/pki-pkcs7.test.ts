/** src/pki/pki-pkcs7.ts: certs-only SignedData, the body of GET /.well-known/est/cacerts (RFC 7030 §4.1.3). */
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../../src/errors/api-error.ts'
import { decodePem, encodePem, fromBase64 } from '../../../src/lib/pem.ts'
import { createIntermediateCa, parseCertificatePem } from '../../../src/pki/pki-certs.ts'
import { buildCertsOnlyPkcs7, buildCertsOnlyPkcs7Der, parseCertsOnlyPkcs7 } from '../../../src/pki/pki-pkcs7.ts'
import { generateKeyPair } from '../../../src/pki/pki-keys.ts'
import { hasOpenssl, makeTestCa, runOpenssl } from '../../support/pki.ts'

const root = await makeTestCa({ commonName: 'p7 root' })
const intermediatePem = await createIntermediateCa({
  issuer: root.signer,
  subject: { commonName: 'p7 intermediate' },
  publicKey: (await generateKeyPair()).publicKey,
  notBefore: root.view.notBefore,
  notAfter: root.view.notAfter,
})
const body = buildCertsOnlyPkcs7([intermediatePem, root.certPem])

const dir = mkdtempSync(join(tmpdir(), 'edgeplane-p7-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('buildCertsOnlyPkcs7', () => {
  it('renders base64 in 64-character lines joined by \\n with no trailing newline and no armour', () => {
    const lines = body.split('\n')
    expect(lines.length).toBeGreaterThan(2)
    expect(lines.slice(0, -1).every((l) => l.length === 64)).toBe(true)
    expect(lines.at(-1)!.length).toBeGreaterThan(0)
    expect(lines.at(-1)!.length).toBeLessThanOrEqual(64)
    expect(body.endsWith('\n')).toBe(false)
    expect(body).not.toContain('\r')
    expect(body).not.toContain('-----')
    expect(fromBase64(body)).toEqual(buildCertsOnlyPkcs7Der([intermediatePem, root.certPem]))
  })

  it('accepts bundles and DER as input', () => {
    const der = decodePem(root.certPem)[0].der
    expect(buildCertsOnlyPkcs7([intermediatePem + root.certPem])).toBe(body)
    expect(parseCertsOnlyPkcs7(buildCertsOnlyPkcs7([der]))).toEqual([root.certPem])
  })

  it('throws the certificate parse error for input that is not a certificate', () => {
    expect(() => buildCertsOnlyPkcs7(['nope'])).toThrow(ApiError)
  })
})

describe('parseCertsOnlyPkcs7', () => {
  it('round-trips the certificates byte for byte and in order', () => {
    expect(parseCertsOnlyPkcs7(body)).toEqual([intermediatePem, root.certPem])
  })

  it('reads DER, base64 on one line, and a PKCS7 PEM block', () => {
    const der = fromBase64(body)
    expect(parseCertsOnlyPkcs7(der)).toHaveLength(2)
    expect(parseCertsOnlyPkcs7(body.replace(/\n/g, ''))).toHaveLength(2)
    expect(parseCertsOnlyPkcs7(encodePem('PKCS7', der))).toHaveLength(2)
  })

  it('reads an empty bag', () => {
    expect(parseCertsOnlyPkcs7(buildCertsOnlyPkcs7([]))).toEqual([])
  })

  it('rejects bytes that are not a SignedData ContentInfo', () => {
    expect(() => parseCertsOnlyPkcs7(new Uint8Array([1, 2, 3]))).toThrow()
    expect(() => parseCertsOnlyPkcs7('!!!')).toThrow()
    expect(() => parseCertsOnlyPkcs7(decodePem(root.certPem)[0].der)).toThrow()
  })

  it.skipIf(!hasOpenssl)('is readable by openssl pkcs7 -print_certs, as DER and as PEM', async () => {
    const derPath = join(dir, 'cacerts.p7b')
    writeFileSync(derPath, fromBase64(body))
    const fromDer = await runOpenssl(['pkcs7', '-inform', 'DER', '-in', derPath, '-print_certs'])
    expect(fromDer.code).toBe(0)
    expect(fromDer.stdout).toContain('subject=CN = p7 intermediate')
    expect(fromDer.stdout).toContain('subject=O = edgeplane tests, CN = p7 root')
    const pemPath = join(dir, 'cacerts.pem')
    writeFileSync(pemPath, `-----BEGIN PKCS7-----\n${body}\n-----END PKCS7-----\n`)
    const fromPem = await runOpenssl(['pkcs7', '-in', pemPath, '-print_certs'])
    expect(fromPem.code).toBe(0)
    const printed = decodePem(fromPem.stdout).map((b) => encodePem(b.type, b.der))
    expect(printed.map((p) => parseCertificatePem(p).subjectCn)).toEqual(['p7 intermediate', 'p7 root'])
    expect(printed).toEqual([intermediatePem, root.certPem])
  })

  it.skipIf(!hasOpenssl)('reads what openssl crl2pkcs7 -nocrl writes', async () => {
    const certsPath = join(dir, 'certs.pem')
    writeFileSync(certsPath, intermediatePem + root.certPem)
    const out = await runOpenssl(['crl2pkcs7', '-nocrl', '-certfile', certsPath])
    expect(out.code).toBe(0)
    expect(parseCertsOnlyPkcs7(out.stdout)).toEqual([intermediatePem, root.certPem])
  })
})
