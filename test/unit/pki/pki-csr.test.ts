/** src/pki/pki-csr.ts: PKCS#10 parsing and self-signature check (RFC 2986); every failure is COULD_NOT_PROCESS_CSR. */
import { describe, expect, it } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../../src/errors/api-error.ts'
import { decodePem, encodePem } from '../../../src/lib/pem.ts'
import { parseCsrPem } from '../../../src/pki/pki-csr.ts'
import { exportPrivateKeyPem, exportPublicKeySpki, generateKeyPair } from '../../../src/pki/pki-keys.ts'
import { hasOpenssl, makeCsrPem, runOpenssl } from '../../support/pki.ts'

const keys = await generateKeyPair()
const csrPem = await makeCsrPem(keys, {
  commonName: 'router-1',
  dnsNames: ['router-1.example'],
  ipAddresses: ['10.0.0.1', '2001:db8::1'],
  uris: ['spiffe://t/router-1'],
})

/** The cause message of the COULD_NOT_PROCESS_CSR thrown for `pem`. */
async function causeOf(pem: string): Promise<string> {
  const err = await parseCsrPem(pem).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ApiError)
  const apiError = err as ApiError
  expect(apiError.code).toBe('COULD_NOT_PROCESS_CSR')
  expect(apiError.status).toBe(400)
  expect(apiError.apiCause?.kind).toBe('api')
  return apiError.apiCause?.kind === 'api' ? apiError.apiCause.message : ''
}

/** The CSR with one byte of its DER changed, `fromEnd` bytes before the end. */
function tamper(pem: string, fromEnd: number): string {
  const der = decodePem(pem)[0].der.slice()
  der[der.length - fromEnd] ^= 0x01
  return encodePem('CERTIFICATE REQUEST', der)
}

describe('parseCsrPem', () => {
  it('returns the subject CN, requested SANs and the public key', async () => {
    const csr = await parseCsrPem(csrPem)
    expect(csr).toMatchObject({
      subjectCn: 'router-1',
      dnsNames: ['router-1.example'],
      ipAddresses: ['10.0.0.1', '2001:db8::1'],
      uris: ['spiffe://t/router-1'],
      publicKeyAlgorithm: 'ec-p256',
    })
    expect(csr.publicKeySpki).toEqual(await exportPublicKeySpki(keys.publicKey))
  })

  it('returns empty SAN lists when the CSR requests none', async () => {
    const csr = await parseCsrPem(await makeCsrPem(keys, { commonName: 'plain' }))
    expect(csr).toMatchObject({ subjectCn: 'plain', dnsNames: [], ipAddresses: [], uris: [] })
  })

  it('tells whether the CSR asks for CA rights', async () => {
    expect((await parseCsrPem(csrPem)).requestsCa).toBe(false)
    expect((await parseCsrPem(await makeCsrPem(keys, { askCa: true }))).requestsCa).toBe(true)
  })

  it.skipIf(!hasOpenssl)('sees CA rights asked for by openssl req as keyCertSign alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgeplane-csr-'))
    try {
      const keyPath = `${dir}/key.pem`
      await Bun.write(keyPath, await exportPrivateKeyPem(keys.privateKey))
      const ask = async (ext: string) => {
        const out = await runOpenssl(['req', '-new', '-key', keyPath, '-subj', '/CN=x', '-addext', ext])
        expect(out.code).toBe(0)
        return (await parseCsrPem(out.stdout)).requestsCa
      }
      expect(await ask('keyUsage=critical,keyCertSign')).toBe(true)
      expect(await ask('keyUsage=critical,digitalSignature')).toBe(false)
      expect(await ask('basicConstraints=critical,CA:TRUE')).toBe(true)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('returns plain data that survives structuredClone', async () => {
    const csr = await parseCsrPem(csrPem)
    expect(structuredClone(csr)).toEqual(csr)
  })

  it('accepts P-384 and RSA keys', async () => {
    for (const [spec, algorithm] of [['ec-p384', 'ec-p384'], ['rsa-2048', 'rsa']] as const) {
      const pair = await generateKeyPair(spec)
      expect((await parseCsrPem(await makeCsrPem(pair, { commonName: spec }))).publicKeyAlgorithm).toBe(algorithm)
    }
  })

  it('accepts the NEW CERTIFICATE REQUEST label', async () => {
    const der = decodePem(csrPem)[0].der
    expect((await parseCsrPem(encodePem('NEW CERTIFICATE REQUEST', der))).subjectCn).toBe('router-1')
  })

  it.skipIf(!hasOpenssl)('reads a CSR made by openssl req', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgeplane-csr-'))
    try {
      const keyPath = `${dir}/key.pem`
      await Bun.write(keyPath, await exportPrivateKeyPem(keys.privateKey))
      const out = await runOpenssl(['req', '-new', '-key', keyPath, '-subj', '/O=acme/CN=from-openssl', '-addext', 'subjectAltName=DNS:a.example,IP:192.0.2.7'])
      expect(out.code).toBe(0)
      expect(await parseCsrPem(out.stdout)).toMatchObject({ subjectCn: 'from-openssl', dnsNames: ['a.example'], ipAddresses: ['192.0.2.7'] })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it.skipIf(!hasOpenssl)('writes CSRs that openssl req -verify accepts', async () => {
    const out = await runOpenssl(['req', '-noout', '-verify'], csrPem)
    expect(out.stderr + out.stdout).toMatch(/verify OK/i)
  })

  it('rejects an empty CSR', async () => {
    expect(await causeOf('')).toContain('empty')
    expect(await causeOf('   \n')).toContain('empty')
  })

  it('rejects text without a PEM block', async () => {
    expect(await causeOf('MIIBszCCAVkCAQAw')).toContain('no CERTIFICATE REQUEST PEM block')
  })

  it('rejects broken PEM armour', async () => {
    expect(await causeOf('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n')).toContain('PEM is malformed')
  })

  it('rejects a PEM block of another type', async () => {
    expect(await causeOf(encodePem('CERTIFICATE', decodePem(csrPem)[0].der))).toContain('expected CERTIFICATE REQUEST')
  })

  it('rejects more than one PEM block', async () => {
    expect(await causeOf(csrPem + csrPem)).toContain('expected one PEM block')
  })

  it('rejects DER that is not a CSR', async () => {
    expect(await causeOf(encodePem('CERTIFICATE REQUEST', new Uint8Array([48, 3, 2, 1, 0])))).toContain('DER could not be parsed')
    const der = decodePem(csrPem)[0].der
    expect(await causeOf(encodePem('CERTIFICATE REQUEST', der.slice(0, der.length - 5)))).toContain('DER could not be parsed')
  })

  it('rejects a CSR whose signature was tampered with', async () => {
    expect(await causeOf(tamper(csrPem, 3))).toMatch(/signature (does not verify|could not be checked)/)
  })

  it('rejects a CSR whose subject was changed after signing', async () => {
    const der = decodePem(csrPem)[0].der.slice()
    const at = Buffer.from(der).indexOf(Buffer.from('router-1'))
    der[at] = 'R'.charCodeAt(0)
    expect(await causeOf(encodePem('CERTIFICATE REQUEST', der))).toContain('signature does not verify')
  })

  it.skipIf(!hasOpenssl)('rejects a key algorithm we do not issue for (Ed25519)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgeplane-csr-'))
    try {
      const key = await runOpenssl(['genpkey', '-algorithm', 'ed25519'])
      await Bun.write(`${dir}/ed.pem`, key.stdout)
      const csr = await runOpenssl(['req', '-new', '-key', `${dir}/ed.pem`, '-subj', '/CN=ed'])
      expect(await causeOf(csr.stdout)).toContain('unsupported CSR public key algorithm (ed25519)')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
