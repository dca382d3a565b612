/** src/pki/pki-certs.ts: issuing root, intermediate, server and client certificates, and parsing them (RFC 5280). */
import { afterAll, describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../../src/errors/api-error.ts'
import { FakeClock } from '../../../src/lib/clock.ts'
import { decodePem, encodePem } from '../../../src/lib/pem.ts'
import {
  createIntermediateCa,
  createRootCa,
  issueClientCertificate,
  issueClientCertificateFromCsr,
  issueServerCertificate,
  parseCaCertificatePem,
  parseCertificatePem,
  parseCertificatesPem,
  randomSerialNumber,
  readCertificateDer,
  readCertificateSpki,
  readCertificateView,
  toCertificateView,
  type CaSigner,
} from '../../../src/pki/pki-certs.ts'
import { exportPrivateKeyPem, exportPublicKeySpki, generateKeyPair } from '../../../src/pki/pki-keys.ts'
import { hasOpenssl, makeCsrPem, runOpenssl } from '../../support/pki.ts'

const DAY_MS = 86_400_000
const clock = new FakeClock(Date.UTC(2030, 0, 1))
const now = clock.now()
const validity = { notBefore: now - 60_000, notAfter: now + 30 * DAY_MS }

const rootKeys = await generateKeyPair()
const rootPem = await createRootCa({ subject: { commonName: 'test root', organization: 'edgeplane' }, keyPair: rootKeys, notBefore: now, notAfter: now + 3650 * DAY_MS })
const root: CaSigner = { certPem: rootPem, privateKey: rootKeys.privateKey }
const intermediateKeys = await generateKeyPair()
const intermediatePem = await createIntermediateCa({ issuer: root, subject: { commonName: 'test intermediate' }, publicKey: intermediateKeys.publicKey, ...validity })
const intermediate: CaSigner = { certPem: intermediatePem, privateKey: intermediateKeys.privateKey }
const serverKeys = await generateKeyPair()
const serverPem = await issueServerCertificate({
  issuer: intermediate,
  publicKey: serverKeys.publicKey,
  commonName: 'ctrl.example',
  dnsNames: ['ctrl.example', 'localhost'],
  ipAddresses: ['127.0.0.1', '::1'],
  ...validity,
})
const clientKeys = await generateKeyPair()
const clientPem = await issueClientCertificate({
  issuer: intermediate,
  publicKey: clientKeys.publicKey,
  commonName: 'identity-1',
  spiffeId: 'spiffe://edgeplane/identity/identity-1',
  ...validity,
})

const dir = mkdtempSync(join(tmpdir(), 'edgeplane-pki-certs-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
function file(name: string, content: string): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

function expectApiError(fn: () => unknown, code: string): void {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError)
    expect((e as ApiError).code).toBe(code as ApiError['code'])
    return
  }
  throw new Error(`expected ApiError ${code}`)
}

describe('createRootCa', () => {
  it('makes a self-signed CA with the requested subject and exact validity', () => {
    const view = parseCertificatePem(rootPem)
    expect(view).toMatchObject({ subjectCn: 'test root', issuerCn: 'test root', isCa: true, publicKeyAlgorithm: 'ec-p256' })
    expect(view.notBefore).toBe(now)
    expect(view.notAfter).toBe(now + 3650 * DAY_MS)
    expect(view.extKeyUsages).toEqual([])
  })

  it('drops sub-second parts of the validity', async () => {
    const pem = await createRootCa({ subject: { commonName: 'ms' }, keyPair: rootKeys, notBefore: now + 999, notAfter: now + DAY_MS + 1 })
    expect(parseCertificatePem(pem)).toMatchObject({ notBefore: now, notAfter: now + DAY_MS })
  })

  it('writes GeneralizedTime for dates from 2050 on and reads them back', async () => {
    const notAfter = Date.UTC(2060, 5, 1)
    const pem = await createRootCa({ subject: { commonName: 'long' }, keyPair: rootKeys, notBefore: now, notAfter })
    expect(parseCertificatePem(pem).notAfter).toBe(notAfter)
    if (hasOpenssl) expect((await runOpenssl(['x509', '-noout', '-enddate'], pem)).stdout).toContain('2060 GMT')
  })

  it('rejects a validity that ends before it starts', async () => {
    await expect(createRootCa({ subject: { commonName: 'x' }, keyPair: rootKeys, notBefore: now, notAfter: now })).rejects.toThrow(TypeError)
  })

  it.skipIf(!hasOpenssl)('is accepted by openssl x509 as a CA with keyCertSign and cRLSign', async () => {
    const out = await runOpenssl(['x509', '-noout', '-text'], rootPem)
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('CA:TRUE')
    expect(out.stdout).toContain('Certificate Sign, CRL Sign')
    expect(out.stdout).toContain('Subject: O = edgeplane, CN = test root')
    expect(out.stdout).toContain('X509v3 Subject Key Identifier')
  })
})

describe('createIntermediateCa', () => {
  it('makes a CA issued by the root', () => {
    expect(parseCertificatePem(intermediatePem)).toMatchObject({ subjectCn: 'test intermediate', issuerCn: 'test root', isCa: true })
  })

  it.skipIf(!hasOpenssl)('has pathlen 0 and is verified by openssl against the root', async () => {
    const text = (await runOpenssl(['x509', '-noout', '-text'], intermediatePem)).stdout
    expect(text).toContain('CA:TRUE, pathlen:0')
    expect(text).toContain('Certificate Sign, CRL Sign')
    const out = await runOpenssl(['verify', '-attime', String(now / 1000 + 60), '-CAfile', file('root.pem', rootPem), file('int.pem', intermediatePem)])
    expect(out.stdout).toContain(': OK')
  })

  it('throws a TypeError when the issuer is not a CA', async () => {
    const leaf: CaSigner = { certPem: serverPem, privateKey: serverKeys.privateKey }
    await expect(createIntermediateCa({ issuer: leaf, subject: { commonName: 'x' }, publicKey: clientKeys.publicKey, ...validity })).rejects.toThrow(TypeError)
  })
})

describe('issueServerCertificate', () => {
  it('carries the CN, DNS and IP SANs and serverAuth', () => {
    expect(parseCertificatePem(serverPem)).toMatchObject({
      subjectCn: 'ctrl.example',
      issuerCn: 'test intermediate',
      isCa: false,
      dnsNames: ['ctrl.example', 'localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      uris: [],
      extKeyUsages: ['serverAuth'],
    })
  })

  it('rejects an IP SAN that is not an IP address', async () => {
    await expect(
      issueServerCertificate({ issuer: intermediate, publicKey: serverKeys.publicKey, commonName: 'x', ipAddresses: ['nope'], ...validity }),
    ).rejects.toThrow(TypeError)
  })

  it.skipIf(!hasOpenssl)('is accepted by openssl x509 -text and openssl verify with the intermediate as untrusted', async () => {
    const text = await runOpenssl(['x509', '-noout', '-text'], serverPem)
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('DNS:ctrl.example, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1')
    expect(text.stdout).toContain('TLS Web Server Authentication')
    expect(text.stdout).toContain('CA:FALSE')
    const out = await runOpenssl([
      'verify', '-attime', String(now / 1000 + 60), '-purpose', 'sslserver',
      '-CAfile', file('root.pem', rootPem), '-untrusted', file('int.pem', intermediatePem), file('server.pem', serverPem),
    ])
    expect(out.stdout + out.stderr).toContain('server.pem: OK')
  })
})

describe('issueClientCertificate', () => {
  it('carries the CN, clientAuth and the SPIFFE URI SAN', () => {
    expect(parseCertificatePem(clientPem)).toMatchObject({
      subjectCn: 'identity-1',
      isCa: false,
      uris: ['spiffe://edgeplane/identity/identity-1'],
      dnsNames: [],
      extKeyUsages: ['clientAuth'],
    })
  })

  it('has no SAN extension without a SPIFFE id', async () => {
    const pem = await issueClientCertificate({ issuer: intermediate, publicKey: clientKeys.publicKey, commonName: 'plain', ...validity })
    expect(parseCertificatePem(pem).uris).toEqual([])
  })

  it('accepts the public key as SPKI bytes', async () => {
    const spki = await exportPublicKeySpki(clientKeys.publicKey)
    const pem = await issueClientCertificate({ issuer: intermediate, publicKey: spki, commonName: 'spki', ...validity })
    expect(parseCertificatePem(pem).subjectCn).toBe('spki')
  })

  it('signs with P-384 and RSA issuers, hashing with SHA-384 and SHA-256', async () => {
    for (const [spec, algorithm] of [['ec-p384', 'ecdsa-with-SHA384'], ['rsa-2048', 'sha256WithRSAEncryption']] as const) {
      const keys = await generateKeyPair(spec)
      const caPem = await createRootCa({ subject: { commonName: spec }, keyPair: keys, ...validity })
      const pem = await issueClientCertificate({ issuer: { certPem: caPem, privateKey: keys.privateKey }, publicKey: clientKeys.publicKey, commonName: 'c', ...validity })
      expect(parseCertificatePem(pem).issuerCn).toBe(spec)
      if (hasOpenssl) {
        expect((await runOpenssl(['x509', '-noout', '-text'], pem)).stdout).toContain(`Signature Algorithm: ${algorithm}`)
        const out = await runOpenssl(['verify', '-attime', String(now / 1000 + 60), '-purpose', 'sslclient', '-CAfile', file(`${spec}.pem`, caPem), file('c.pem', pem)])
        expect(out.stdout).toContain(': OK')
      }
    }
  })

  it.skipIf(!hasOpenssl)('is verified by openssl for the sslclient purpose', async () => {
    const out = await runOpenssl([
      'verify', '-attime', String(now / 1000 + 60), '-purpose', 'sslclient',
      '-CAfile', file('root.pem', rootPem), '-untrusted', file('int.pem', intermediatePem), file('client.pem', clientPem),
    ])
    expect(out.stdout).toContain('client.pem: OK')
  })
})

describe('issueClientCertificateFromCsr', () => {
  it('issues for the CSR key with the CSR CN, or the given CN', async () => {
    const keys = await generateKeyPair()
    const csrPem = await makeCsrPem(keys, { commonName: 'from-csr', dnsNames: ['ignored.example'] })
    const own = parseCertificatePem(await issueClientCertificateFromCsr({ issuer: intermediate, csrPem, ...validity }))
    expect(own).toMatchObject({ subjectCn: 'from-csr', dnsNames: [], extKeyUsages: ['clientAuth'] })
    const named = parseCertificatePem(await issueClientCertificateFromCsr({ issuer: intermediate, csrPem, commonName: 'id-9', spiffeId: 'spiffe://t/id-9', ...validity }))
    expect(named).toMatchObject({ subjectCn: 'id-9', uris: ['spiffe://t/id-9'] })
  })

  it('rejects a bad CSR with COULD_NOT_PROCESS_CSR', async () => {
    const err = await issueClientCertificateFromCsr({ issuer: intermediate, csrPem: 'nope', ...validity }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).code).toBe('COULD_NOT_PROCESS_CSR')
  })
})

describe('randomSerialNumber', () => {
  it('gives 16 octets, positive, minimal, and different each time', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 200; i++) {
      const serial = randomSerialNumber()
      expect(serial).toHaveLength(16)
      expect(serial[0]).toBeGreaterThan(0)
      expect(serial[0]).toBeLessThan(0x80)
      seen.add(Buffer.from(serial).toString('hex'))
    }
    expect(seen.size).toBe(200)
  })

  it('is the serial of every issued certificate: 32 hex digits, unique per certificate', () => {
    const serials = [rootPem, intermediatePem, serverPem, clientPem].map((p) => parseCertificatePem(p).serialHex)
    for (const s of serials) expect(s).toMatch(/^[0-7][0-9a-f]{31}$/)
    expect(new Set(serials).size).toBe(4)
  })
})

describe('parseCertificatePem', () => {
  it('gives the SHA-1 fingerprint of the DER in lowercase hex without colons', () => {
    const der = decodePem(serverPem)[0].der
    expect(parseCertificatePem(serverPem).fingerprintSha1).toBe(createHash('sha1').update(der).digest('hex'))
  })

  it.skipIf(!hasOpenssl)('agrees with openssl on fingerprint, serial and dates', async () => {
    const view = parseCertificatePem(clientPem)
    const out = (await runOpenssl(['x509', '-noout', '-fingerprint', '-sha1', '-serial', '-enddate'], clientPem)).stdout
    expect(out).toContain(view.fingerprintSha1.toUpperCase().match(/../g)!.join(':'))
    expect(out).toContain(`serial=${view.serialHex.toUpperCase()}`)
    expect(out).toContain(new Date(view.notAfter).toUTCString().slice(8, 11))
  })

  it('reads the first certificate of a bundle, and parseCertificatesPem reads them all', () => {
    expect(parseCertificatePem(serverPem + intermediatePem).subjectCn).toBe('ctrl.example')
    expect(parseCertificatesPem(serverPem + intermediatePem + rootPem).map((v) => v.subjectCn)).toEqual([
      'ctrl.example',
      'test intermediate',
      'test root',
    ])
  })

  it('rejects text without a PEM block with COULD_NOT_PARSE_PEM_BLOCK', () => {
    expectApiError(() => parseCertificatePem('hello'), 'COULD_NOT_PARSE_PEM_BLOCK')
    expectApiError(() => parseCertificatePem('-----BEGIN CERTIFICATE-----\nAAAA\n'), 'COULD_NOT_PARSE_PEM_BLOCK')
  })

  it('rejects a block of another type with EXPECTED_PEM_CERTIFICATE', async () => {
    expectApiError(() => parseCertificatePem(encodePem('PRIVATE KEY', new Uint8Array([48, 0]))), 'EXPECTED_PEM_CERTIFICATE')
    const keyPem = await exportPrivateKeyPem(serverKeys.privateKey)
    expectApiError(() => parseCertificatePem(serverPem + keyPem), 'EXPECTED_PEM_CERTIFICATE')
  })

  it('rejects a CERTIFICATE block whose DER is not a certificate with COULD_NOT_PARSE_DER_BLOCK', () => {
    expectApiError(() => parseCertificatePem(encodePem('CERTIFICATE', new Uint8Array([1, 2, 3, 4]))), 'COULD_NOT_PARSE_DER_BLOCK')
    const der = decodePem(serverPem)[0].der
    expectApiError(() => parseCertificatePem(encodePem('CERTIFICATE', der.slice(0, der.length - 10))), 'COULD_NOT_PARSE_DER_BLOCK')
  })
})

describe('parseCaCertificatePem', () => {
  it('accepts exactly one CA certificate', () => {
    expect(parseCaCertificatePem(intermediatePem).subjectCn).toBe('test intermediate')
  })

  it('rejects a leaf with CERTIFICATE_IS_NOT_CA', () => {
    expectApiError(() => parseCaCertificatePem(serverPem), 'CERTIFICATE_IS_NOT_CA')
  })

  it('rejects zero or several certificates with INVALID_CERT_PEM', () => {
    expectApiError(() => parseCaCertificatePem(intermediatePem + rootPem), 'INVALID_CERT_PEM')
    expectApiError(() => parseCaCertificatePem(''), 'INVALID_CERT_PEM')
  })
})

describe('readCertificateView (OpenSSL)', () => {
  it('reads the same view as pkijs for CAs, servers, clients, every key kind and SAN kind', async () => {
    const p384 = await generateKeyPair('ec-p384')
    const rsa = await generateKeyPair('rsa-2048')
    const more = [
      await issueServerCertificate({ issuer: intermediate, publicKey: p384.publicKey, commonName: 'Acme, Inc. \\ "edge"', dnsNames: ['*.w.example.com'], ipAddresses: ['2001:db8::5', '10.0.0.1'], ...validity }),
      await issueClientCertificate({ issuer: root, publicKey: rsa.publicKey, commonName: 'rsa client', uris: ['spiffe://x/y', 'urn:a,b'], emails: ['a@b.example'], ...validity }),
      await issueClientCertificate({ issuer: root, publicKey: clientKeys.publicKey, commonName: 'no sans', ...validity }),
    ]
    for (const pem of [rootPem, intermediatePem, serverPem, clientPem, ...more]) {
      const der = decodePem(pem)[0].der
      expect(readCertificateView(der)).toEqual(toCertificateView(readCertificateDer(der)))
      expect(readCertificateSpki(der)).toEqual(new Uint8Array(readCertificateDer(der).cert.subjectPublicKeyInfo.toSchema().toBER(false)))
    }
  })

  it('rejects DER that is not a certificate with COULD_NOT_PARSE_DER_BLOCK', () => {
    expectApiError(() => readCertificateView(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01])), 'COULD_NOT_PARSE_DER_BLOCK')
  })
})
