/**
 * Throwaway PKI for tests: CAs, client certificates (CA-signed, self-signed or from a foreign CA), CSRs, the
 * `tls` options of Bun's fetch, and an openssl runner. Everything is generated in memory; nothing is written.
 */
import * as asn1js from 'asn1js'
import {
  Attribute,
  BasicConstraints,
  Certificate,
  CertificationRequest,
  ExtKeyUsage,
  Extension,
  Extensions,
  PublicKeyInfo,
} from 'pkijs'
import { systemClock, type Clock } from '../../src/lib/clock.ts'
import { encodePem } from '../../src/lib/pem.ts'
import {
  createRootCa,
  issueClientCertificate,
  parseCertificatePem,
  randomSerialNumber,
  type CaSigner,
  type CertificateView,
} from '../../src/pki/pki-certs.ts'
import { engine } from '../../src/pki/pki-engine.ts'
import { exportPrivateKeyPem, exportPublicKeySpki, generateKeyPair, signingHashFor, type KeySpec } from '../../src/pki/pki-keys.ts'
import { toAltNameExtension, toDistinguishedName } from '../../src/pki/pki-names.ts'
import { toBasicConstraintsExtension } from '../../src/pki/pki-extensions.ts'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/** A CA made for one test: its PEMs, keys, and the signer to issue with. */
export interface TestCa {
  certPem: string
  keyPem: string
  keyPair: CryptoKeyPair
  signer: CaSigner
  view: CertificateView
}

/** A client key and certificate made for one test. */
export interface TestClientCert {
  certPem: string
  keyPem: string
  keyPair: CryptoKeyPair
  view: CertificateView
}

/** Validity around a clock: from an hour ago to `days` from now, unless given explicitly. */
function validityAround(opts: { clock?: Clock; notBefore?: number; notAfter?: number; days?: number }): { notBefore: number; notAfter: number } {
  const now = (opts.clock ?? systemClock).now()
  return { notBefore: opts.notBefore ?? now - HOUR_MS, notAfter: opts.notAfter ?? now + (opts.days ?? 30) * DAY_MS }
}

/** A self-signed root CA (ECDSA P-256 unless `keySpec` says otherwise), e.g. a foreign CA for negative tests. */
export async function makeTestCa(
  opts: { commonName?: string; keySpec?: KeySpec; clock?: Clock; notBefore?: number; notAfter?: number } = {},
): Promise<TestCa> {
  const keyPair = await generateKeyPair(opts.keySpec)
  const certPem = await createRootCa({
    subject: { commonName: opts.commonName ?? 'test CA', organization: 'edgeplane tests' },
    keyPair,
    ...validityAround({ ...opts, days: 365 }),
  })
  return {
    certPem,
    keyPem: await exportPrivateKeyPem(keyPair.privateKey),
    keyPair,
    signer: { certPem, privateKey: keyPair.privateKey },
    view: parseCertificatePem(certPem),
  }
}

/**
 * A client key and certificate: signed by `issuer` (a CaSigner, e.g. `pki.signer` of a controller), or
 * self-signed when `issuer` is 'self' (a non-CA leaf with clientAuth, signed by its own key).
 */
export async function makeClientCert(
  opts: {
    issuer: CaSigner | 'self'
    commonName?: string
    keySpec?: KeySpec
    spiffeId?: string
    /** More URI SANs, and e-mail SANs (CA-signed certificates only). */
    uris?: string[]
    emails?: string[]
    clock?: Clock
    notBefore?: number
    notAfter?: number
  },
): Promise<TestClientCert> {
  const keyPair = await generateKeyPair(opts.keySpec)
  const commonName = opts.commonName ?? 'test client'
  const validity = validityAround(opts)
  const certPem =
    opts.issuer === 'self'
      ? await selfSignedLeaf(keyPair, commonName, validity)
      : await issueClientCertificate({
          issuer: opts.issuer,
          publicKey: keyPair.publicKey,
          commonName,
          spiffeId: opts.spiffeId,
          uris: opts.uris,
          emails: opts.emails,
          ...validity,
        })
  return { certPem, keyPem: await exportPrivateKeyPem(keyPair.privateKey), keyPair, view: parseCertificatePem(certPem) }
}

/** A client certificate from a CA nobody trusts: a fresh root (RSA by default, to cover RSA signers) signs it. */
export async function makeForeignClientCert(
  opts: { commonName?: string; caKeySpec?: KeySpec; keySpec?: KeySpec; clock?: Clock } = {},
): Promise<TestClientCert & { ca: TestCa }> {
  const ca = await makeTestCa({ commonName: 'foreign CA', keySpec: opts.caKeySpec ?? 'rsa-2048', clock: opts.clock })
  const client = await makeClientCert({ issuer: ca.signer, commonName: opts.commonName, keySpec: opts.keySpec, clock: opts.clock })
  return { ...client, ca }
}

/** A non-CA, self-signed clientAuth certificate: what a client without an enrollment might present. */
async function selfSignedLeaf(keyPair: CryptoKeyPair, commonName: string, validity: { notBefore: number; notAfter: number }): Promise<string> {
  const cert = new Certificate()
  cert.version = 2
  cert.serialNumber = new asn1js.Integer({ valueHex: randomSerialNumber() })
  cert.subject = toDistinguishedName({ commonName })
  cert.issuer = cert.subject
  cert.notBefore.value = new Date(Math.floor(validity.notBefore / 1000) * 1000)
  cert.notAfter.value = new Date(Math.floor(validity.notAfter / 1000) * 1000)
  cert.subjectPublicKeyInfo = PublicKeyInfo.fromBER(await exportPublicKeySpki(keyPair.publicKey))
  const basic = new BasicConstraints({ cA: false })
  const eku = new ExtKeyUsage({ keyPurposes: ['1.3.6.1.5.5.7.3.2'] })
  cert.extensions = [
    new Extension({ extnID: '2.5.29.19', critical: true, extnValue: basic.toSchema().toBER(false), parsedValue: basic }),
    new Extension({ extnID: '2.5.29.37', critical: false, extnValue: eku.toSchema().toBER(false), parsedValue: eku }),
  ]
  await cert.sign(keyPair.privateKey, signingHashFor(keyPair.privateKey), engine)
  return encodePem('CERTIFICATE', new Uint8Array(cert.toSchema(true).toBER(false)))
}

/** A PEM PKCS#10 CSR for `keyPair`, with CN `commonName` and, when given, requested SANs. */
export async function makeCsrPem(
  keyPair: CryptoKeyPair,
  opts: { commonName?: string; dnsNames?: string[]; ipAddresses?: string[]; uris?: string[]; askCa?: boolean } = {},
): Promise<string> {
  const csr = new CertificationRequest()
  csr.version = 0
  csr.subject = toDistinguishedName({ commonName: opts.commonName ?? 'test csr' })
  csr.subjectPublicKeyInfo = PublicKeyInfo.fromBER(await exportPublicKeySpki(keyPair.publicKey))
  const san = toAltNameExtension({ dnsNames: opts.dnsNames, ipAddresses: opts.ipAddresses, uris: opts.uris })
  const requested = [...(san ? [san] : []), ...(opts.askCa ? [toBasicConstraintsExtension({})] : [])]
  if (requested.length > 0) {
    csr.attributes = [
      new Attribute({ type: '1.2.840.113549.1.9.14', values: [new Extensions({ extensions: requested }).toSchema()] }),
    ]
  }
  await csr.sign(keyPair.privateKey, signingHashFor(keyPair.privateKey), engine)
  return encodePem('CERTIFICATE REQUEST', new Uint8Array(csr.toSchema(true).toBER(false)))
}

/**
 * The `tls` option of Bun's `fetch(url, { tls })`: trust `caPem` and, when `client` is given, present its
 * certificate (plus `chainPem`, e.g. an intermediate, after it) and key.
 */
export function fetchTls(caPem: string, client?: { certPem: string; keyPem: string; chainPem?: string }): {
  ca: string
  cert?: string
  key?: string
} {
  if (!client) return { ca: caPem }
  return { ca: caPem, cert: client.certPem + (client.chainPem ?? ''), key: client.keyPem }
}

/** Whether the openssl binary is on PATH; tests that shell out to it skip their assertions without it. */
export const hasOpenssl: boolean = Bun.which('openssl') !== null

/** Runs `openssl …args` with optional stdin; never throws on a non-zero exit. */
export async function runOpenssl(args: string[], stdin?: string | Uint8Array): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(['openssl', ...args], { stdin: stdin === undefined ? 'ignore' : 'pipe', stdout: 'pipe', stderr: 'pipe' })
  if (stdin !== undefined && proc.stdin) {
    proc.stdin.write(stdin)
    await proc.stdin.end()
  }
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}
