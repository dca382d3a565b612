/**
 * X.509 certificates: issue a root CA, an intermediate CA, TLS server and client certificates, and parse any
 * certificate PEM into a small plain view. Stateless; times are explicit epoch ms that callers take from their Clock.
 * @see RFC 5280 §4.1 (certificate), §4.2.1 (the extensions written here)
 */
import * as asn1js from 'asn1js'
import { createHash, type KeyObject, X509Certificate } from 'node:crypto'
import { Certificate, type Extension, PublicKeyInfo, type RelativeDistinguishedNames, Time, TimeType } from 'pkijs'
import { ApiError } from '../errors/api-error.ts'
import { decodePem, encodePem, PemFormatError } from '../lib/pem.ts'
import { parseCsrPem } from './pki-csr.ts'
import { engine } from './pki-engine.ts'
import {
  EKU,
  extKeyUsagesOf,
  isCaCertificate,
  KEY_USAGE,
  keyIdOf,
  subjectKeyIdOf,
  toAuthorityKeyIdExtension,
  toBasicConstraintsExtension,
  toExtKeyUsageExtension,
  toKeyUsageExtension,
  toExtKeyUsageNames,
  toSubjectKeyIdExtension,
} from './pki-extensions.ts'
import { exportPublicKeySpki, signingHashFor, toPublicKeyAlgorithm, type PublicKeyAlgorithm } from './pki-keys.ts'
import { altNamesOf, canonicalIp, commonNameOf, toAltNameExtension, toDistinguishedName, type SubjectName } from './pki-names.ts'

/** The plain view of one certificate: enough for the API, logs and tests, with no pkijs objects inside. */
export interface CertificateView {
  subjectCn: string
  issuerCn: string
  /** The serial number in lowercase hex, without leading zero octets. */
  serialHex: string
  /** Epoch ms. */
  notBefore: number
  /** Epoch ms. */
  notAfter: number
  /** basicConstraints cA. */
  isCa: boolean
  /** SHA-1 of the DER, lowercase hex without colons: the fingerprint ziti stores on cert authenticators. */
  fingerprintSha1: string
  dnsNames: string[]
  /** Canonical text (IPv6 compressed). */
  ipAddresses: string[]
  uris: string[]
  /** subjectAltName e-mail addresses (rfc822Name). */
  emails: string[]
  publicKeyAlgorithm: PublicKeyAlgorithm
  /** extendedKeyUsage purposes: `serverAuth`, `clientAuth`, or the OID of anything else. Empty when absent. */
  extKeyUsages: string[]
}

/** A CA that can sign: its certificate PEM (the first block is used) and its private key. */
export interface CaSigner {
  certPem: string
  privateKey: CryptoKey
}

/** A subject public key: a WebCrypto key or DER SubjectPublicKeyInfo bytes (as a CSR carries them). */
export type PublicKeyInput = CryptoKey | Uint8Array

/** The validity window of a certificate to issue, in epoch ms. Sub-second parts are dropped. */
export interface Validity {
  notBefore: number
  notAfter: number
}

/**
 * A self-signed root CA certificate (PEM): basicConstraints cA (critical, no path length limit),
 * keyUsage keyCertSign + cRLSign (critical), subject and authority key identifiers.
 */
export async function createRootCa(opts: { subject: SubjectName; keyPair: CryptoKeyPair } & Validity): Promise<string> {
  const spki = await exportPublicKeySpki(opts.keyPair.publicKey)
  const subject = toDistinguishedName(opts.subject)
  return signCertificate({
    issuer: null,
    signingKey: opts.keyPair.privateKey,
    subject,
    spki,
    validity: opts,
    ca: {},
  })
}

/**
 * An intermediate CA certificate (PEM) signed by `issuer`: basicConstraints cA with pathLen 0 by default
 * (it may sign only leaves), keyUsage keyCertSign + cRLSign.
 */
export async function createIntermediateCa(
  opts: { issuer: CaSigner; subject: SubjectName; publicKey: PublicKeyInput; pathLen?: number } & Validity,
): Promise<string> {
  return signCertificate({
    issuer: opts.issuer,
    subject: toDistinguishedName(opts.subject),
    spki: await toSpki(opts.publicKey),
    validity: opts,
    ca: { pathLen: opts.pathLen ?? 0 },
  })
}

/**
 * A TLS server certificate (PEM, leaf only) signed by `issuer`: extendedKeyUsage serverAuth, SANs of DNS names and
 * IP addresses (v4 or v6), CN `commonName`, keyUsage digitalSignature (+ keyEncipherment for an RSA key).
 * @throws TypeError on an entry of `ipAddresses` that is not an IP address.
 */
export async function issueServerCertificate(
  opts: { issuer: CaSigner; publicKey: PublicKeyInput; commonName: string; dnsNames?: string[]; ipAddresses?: string[] } & Validity,
): Promise<string> {
  return signCertificate({
    issuer: opts.issuer,
    subject: toDistinguishedName({ commonName: opts.commonName }),
    spki: await toSpki(opts.publicKey),
    validity: opts,
    extKeyUsages: [EKU.serverAuth],
    sans: { dnsNames: opts.dnsNames ?? [], ipAddresses: opts.ipAddresses ?? [] },
  })
}

/**
 * A TLS client certificate (PEM, leaf only) signed by `issuer`: extendedKeyUsage clientAuth, CN `commonName`,
 * and a URI SAN when `spiffeId` is given (e.g. `spiffe://trust.domain/identity/<id>`).
 */
export async function issueClientCertificate(
  opts: { issuer: CaSigner; publicKey: PublicKeyInput; commonName: string; spiffeId?: string; uris?: string[]; emails?: string[] } & Validity,
): Promise<string> {
  return signCertificate({
    issuer: opts.issuer,
    subject: toDistinguishedName({ commonName: opts.commonName }),
    spki: await toSpki(opts.publicKey),
    validity: opts,
    extKeyUsages: [EKU.clientAuth],
    sans: { uris: [...(opts.spiffeId ? [opts.spiffeId] : []), ...(opts.uris ?? [])], emails: opts.emails ?? [] },
  })
}

/**
 * 16 random octets as a positive DER INTEGER value: the top bit is cleared so it stays positive, and the first octet
 * is never zero so the encoding stays minimal (strict parsers such as Go's reject a padded serial).
 * @see RFC 5280 §4.1.2.2 (at most 20 octets, positive)
 */
export function randomSerialNumber(): Uint8Array {
  const serial = crypto.getRandomValues(new Uint8Array(16))
  serial[0] &= 0x7f
  if (serial[0] === 0) serial[0] = 0x01
  return serial
}

interface SignSpec {
  /** null: self-signed with `signingKey`. */
  issuer: CaSigner | null
  signingKey?: CryptoKey
  subject: RelativeDistinguishedNames
  spki: Uint8Array
  validity: Validity
  ca?: { pathLen?: number }
  extKeyUsages?: string[]
  sans?: Parameters<typeof toAltNameExtension>[0]
}

/** Builds, signs and PEM-encodes one certificate. */
async function signCertificate(spec: SignSpec): Promise<string> {
  const notBefore = Math.floor(spec.validity.notBefore / 1000) * 1000
  const notAfter = Math.floor(spec.validity.notAfter / 1000) * 1000
  if (!(notAfter > notBefore)) throw new TypeError('notAfter must be later than notBefore')

  const cert = new Certificate()
  cert.version = 2
  cert.serialNumber = new asn1js.Integer({ valueHex: randomSerialNumber() })
  cert.subject = spec.subject
  cert.subjectPublicKeyInfo = PublicKeyInfo.fromBER(spec.spki)
  cert.notBefore = toTime(notBefore)
  cert.notAfter = toTime(notAfter)

  let signingKey: CryptoKey
  let authorityKeyId: Uint8Array
  if (spec.issuer) {
    const issuerCert = readCertificates(spec.issuer.certPem)[0].cert
    if (!isCaCertificate(issuerCert)) throw new TypeError(`issuer ${commonNameOf(issuerCert.subject)} is not a CA`)
    cert.issuer = issuerCert.subject
    signingKey = spec.issuer.privateKey
    authorityKeyId = subjectKeyIdOf(issuerCert) ?? keyIdOf(issuerCert.subjectPublicKeyInfo)
  } else {
    if (!spec.signingKey) throw new TypeError('a self-signed certificate needs its signing key')
    cert.issuer = spec.subject
    signingKey = spec.signingKey
    authorityKeyId = keyIdOf(cert.subjectPublicKeyInfo)
  }

  const isRsa = toPublicKeyAlgorithm(spec.spki) === 'rsa'
  const { digitalSignature, keyEncipherment, keyCertSign, cRLSign } = KEY_USAGE
  const usage = spec.ca ? [keyCertSign, cRLSign] : isRsa ? [digitalSignature, keyEncipherment] : [digitalSignature]
  const extensions: Extension[] = [toBasicConstraintsExtension(spec.ca ?? null), toKeyUsageExtension(usage)]
  if (spec.extKeyUsages?.length) extensions.push(toExtKeyUsageExtension(spec.extKeyUsages))
  extensions.push(toSubjectKeyIdExtension(keyIdOf(cert.subjectPublicKeyInfo)), toAuthorityKeyIdExtension(authorityKeyId))
  const san = spec.sans ? toAltNameExtension(spec.sans) : undefined
  if (san) extensions.push(san)
  cert.extensions = extensions

  await cert.sign(signingKey, signingHashFor(signingKey), engine)
  return encodePem('CERTIFICATE', new Uint8Array(cert.toSchema(true).toBER(false)))
}

/** UTCTime through 2049, GeneralizedTime from 2050, as RFC 5280 §4.1.2.5 requires. */
function toTime(ms: number): Time {
  const value = new Date(ms)
  return new Time({ type: value.getUTCFullYear() < 2050 ? TimeType.UTCTime : TimeType.GeneralizedTime, value })
}

async function toSpki(key: PublicKeyInput): Promise<Uint8Array> {
  return key instanceof Uint8Array ? key : exportPublicKeySpki(key)
}

/** One certificate read from PEM or DER: the pkijs object and its exact DER. */
export interface ParsedCertificate {
  cert: Certificate
  der: Uint8Array
}

/**
 * Every certificate in a PEM text (a single certificate or a bundle), in order.
 * @throws ApiError as {@link certificateDersOf}, and COULD_NOT_PARSE_DER_BLOCK when a block's DER does not parse.
 */
export function readCertificates(pem: string): ParsedCertificate[] {
  return certificateDersOf(pem).map((der, i) => readCertificateDer(der, i))
}

/**
 * The DER of every certificate block of a PEM text, in order, without parsing them.
 * @throws ApiError COULD_NOT_PARSE_PEM_BLOCK when there is no PEM block or the armour is broken,
 *   EXPECTED_PEM_CERTIFICATE when a block is not a CERTIFICATE.
 */
export function certificateDersOf(pem: string): Uint8Array[] {
  let blocks
  try {
    blocks = decodePem(pem)
  } catch (e) {
    const message = e instanceof PemFormatError ? e.message : 'malformed PEM'
    throw ApiError.withMessage('COULD_NOT_PARSE_PEM_BLOCK', message)
  }
  if (blocks.length === 0) throw ApiError.withMessage('COULD_NOT_PARSE_PEM_BLOCK', 'no PEM block found')
  return blocks.map((block, i) => {
    if (block.type !== 'CERTIFICATE') {
      throw ApiError.withMessage('EXPECTED_PEM_CERTIFICATE', `PEM block ${i} is ${block.type}, expected CERTIFICATE`)
    }
    return block.der
  })
}

/**
 * One certificate from DER bytes.
 * @throws ApiError COULD_NOT_PARSE_DER_BLOCK when the bytes are not an X.509 certificate.
 */
export function readCertificateDer(der: Uint8Array, index = 0): ParsedCertificate {
  try {
    const asn = asn1js.fromBER(der)
    if (asn.offset === -1 || asn.offset !== der.byteLength) throw new Error('not a single DER value')
    return { cert: new Certificate({ schema: asn.result }), der }
  } catch (e) {
    throw ApiError.withMessage('COULD_NOT_PARSE_DER_BLOCK', `certificate ${index}: ${(e as Error).message}`)
  }
}

/** OpenSSL's reading of DER; COULD_NOT_PARSE_DER_BLOCK when it is not an X.509 certificate. */
function opensslRead(der: Uint8Array, index: number): X509Certificate {
  try {
    return new X509Certificate(der)
  } catch (e) {
    throw ApiError.withMessage('COULD_NOT_PARSE_DER_BLOCK', `certificate ${index}: ${(e as Error).message}`)
  }
}

/**
 * What certificate login reads of a presented leaf, from OpenSSL (node:crypto) rather than asn1js, which takes about
 * 5 ms per certificate on Bun: the SHA-1 fingerprint of the DER (lowercase hex), the extendedKeyUsage names (empty
 * without the extension) and the validity window. Also what the CA reads back from a certificate it just issued.
 * @throws ApiError COULD_NOT_PARSE_DER_BLOCK when the bytes are not an X.509 certificate.
 */
export function readLeafFacts(der: Uint8Array): Pick<CertificateView, 'fingerprintSha1' | 'extKeyUsages' | 'notBefore' | 'notAfter'> {
  return leafFactsOf(opensslRead(der, 0), der)
}

function leafFactsOf(x: X509Certificate, der: Uint8Array): Pick<CertificateView, 'fingerprintSha1' | 'extKeyUsages' | 'notBefore' | 'notAfter'> {
  return {
    fingerprintSha1: createHash('sha1').update(der).digest('hex'),
    extKeyUsages: toExtKeyUsageNames(x.keyUsage ?? []),
    notBefore: x.validFromDate.getTime(),
    notAfter: x.validToDate.getTime(),
  }
}

/**
 * The whole {@link CertificateView} of DER as OpenSSL (node:crypto) reads it: the same facts as
 * {@link toCertificateView} (a unit test compares the two) for about a hundredth of asn1js's cost, for checks that read
 * many certificates once (validate-router-config --check-files).
 * @throws ApiError COULD_NOT_PARSE_DER_BLOCK when the bytes are not an X.509 certificate.
 */
export function readCertificateView(der: Uint8Array, index = 0): CertificateView {
  const x = opensslRead(der, index)
  const sans = sansOfOpenssl(x.subjectAltName)
  return {
    ...leafFactsOf(x, der),
    subjectCn: commonNameOfOpenssl(x.subject),
    issuerCn: commonNameOfOpenssl(x.issuer),
    serialHex: serialHexOfOpenssl(x.serialNumber),
    isCa: x.ca,
    ...sans,
    publicKeyAlgorithm: publicKeyAlgorithmOf(x.publicKey),
  }
}

/** The SubjectPublicKeyInfo DER of a certificate, read by OpenSSL. @throws ApiError COULD_NOT_PARSE_DER_BLOCK */
export function readCertificateSpki(der: Uint8Array): Uint8Array {
  return new Uint8Array(opensslRead(der, 0).publicKey.export({ type: 'spki', format: 'der' }))
}

/** The first CN of OpenSSL's one-attribute-per-line name, its backslash escapes undone; '' when there is none. */
function commonNameOfOpenssl(name: string): string {
  const line = name.split('\n').find((l) => l.startsWith('CN='))
  return line === undefined ? '' : line.slice(3).replace(/\\(.)/g, '$1')
}

/** OpenSSL prints the serial as uppercase hex; the view wants lowercase whole octets without leading zero octets. */
function serialHexOfOpenssl(serial: string): string {
  let hex = serial.toLowerCase()
  if (hex.length % 2 === 1) hex = `0${hex}`
  while (hex.length > 2 && hex.startsWith('00')) hex = hex.slice(2)
  return hex
}

/** Entries of OpenSSL's subjectAltName text ("DNS:a, IP Address:1.2.3.4, URI:…, email:…"); commas inside values come escaped. */
function sansOfOpenssl(text: string | undefined): Pick<CertificateView, 'dnsNames' | 'ipAddresses' | 'uris' | 'emails'> {
  const out: Pick<CertificateView, 'dnsNames' | 'ipAddresses' | 'uris' | 'emails'> = { dnsNames: [], ipAddresses: [], uris: [], emails: [] }
  if (!text) return out
  for (const entry of text.split(/, (?=(?:DNS|IP Address|URI|email|othername|DirName|Registered ID|EdiPartyName|X400Name):)/)) {
    const colon = entry.indexOf(':')
    const tag = entry.slice(0, colon)
    // a value with a comma, quote or control character comes as a JSON string (node:crypto, as Bun prints it)
    const raw = entry.slice(colon + 1)
    const value = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw
    if (tag === 'DNS') out.dnsNames.push(value)
    else if (tag === 'URI') out.uris.push(value)
    else if (tag === 'email') out.emails.push(value)
    else if (tag === 'IP Address') {
      const ip = canonicalIp(value.toLowerCase())
      if (ip) out.ipAddresses.push(ip)
    }
  }
  return out
}

const CURVE_NAMES: Record<string, PublicKeyAlgorithm> = { prime256v1: 'ec-p256', secp384r1: 'ec-p384', secp521r1: 'ec-p521' }

function publicKeyAlgorithmOf(key: KeyObject): PublicKeyAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'rsa'
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519'
  if (key.asymmetricKeyType === 'ec') return CURVE_NAMES[key.asymmetricKeyDetails?.namedCurve ?? ''] ?? 'unknown'
  return 'unknown'
}

/** The view of a parsed certificate; see {@link CertificateView}. */
export function toCertificateView({ cert, der }: ParsedCertificate): CertificateView {
  const sans = altNamesOf(cert.extensions)
  return {
    subjectCn: commonNameOf(cert.subject),
    issuerCn: commonNameOf(cert.issuer),
    serialHex: serialHexOf(cert),
    notBefore: cert.notBefore.value.getTime(),
    notAfter: cert.notAfter.value.getTime(),
    isCa: isCaCertificate(cert),
    fingerprintSha1: createHash('sha1').update(der).digest('hex'),
    dnsNames: sans.dnsNames,
    ipAddresses: sans.ipAddresses,
    uris: sans.uris,
    emails: sans.emails,
    publicKeyAlgorithm: toPublicKeyAlgorithm(new Uint8Array(cert.subjectPublicKeyInfo.toSchema().toBER(false))),
    extKeyUsages: extKeyUsagesOf(cert),
  }
}

function serialHexOf(cert: Certificate): string {
  const bytes = cert.serialNumber.valueBlock.valueHexView
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  return Buffer.from(bytes.subarray(start)).toString('hex')
}

/**
 * The view of the first certificate in `pem` (for a chain file, the leaf).
 * @throws ApiError as {@link readCertificates}.
 */
export function parseCertificatePem(pem: string): CertificateView {
  return toCertificateView(readCertificates(pem)[0])
}

/**
 * The views of every certificate in a PEM bundle, in order.
 * @throws ApiError as {@link readCertificates}.
 */
export function parseCertificatesPem(pem: string): CertificateView[] {
  return readCertificates(pem).map(toCertificateView)
}

/**
 * The view of a CA certificate supplied by a client (POST /cas): exactly one certificate, and a CA.
 * @throws ApiError INVALID_CERT_PEM when the PEM does not hold exactly one certificate, CERTIFICATE_IS_NOT_CA when
 *   it is not a CA, or the codes of {@link readCertificates}.
 */
export function parseCaCertificatePem(pem: string): CertificateView {
  let certs: ParsedCertificate[]
  try {
    certs = readCertificates(pem)
  } catch (e) {
    if (e instanceof ApiError && e.code === 'COULD_NOT_PARSE_PEM_BLOCK') {
      throw ApiError.withMessage('INVALID_CERT_PEM', e.apiCause?.kind === 'api' ? e.apiCause.message : e.message)
    }
    throw e
  }
  if (certs.length !== 1) throw ApiError.withMessage('INVALID_CERT_PEM', `expected 1 certificate, found ${certs.length}`)
  if (!isCaCertificate(certs[0].cert)) throw new ApiError('CERTIFICATE_IS_NOT_CA')
  return toCertificateView(certs[0])
}

/** The PEM of one parsed certificate, re-armoured from its exact DER. */
export function toCertificatePem(parsed: ParsedCertificate): string {
  return encodePem('CERTIFICATE', parsed.der)
}

/**
 * A client certificate for the key in a PEM CSR, after verifying the CSR's signature. The CN is `commonName` when
 * given (ziti sets it to the identity id), else the CSR's own CN; SANs requested in the CSR are not copied.
 * @throws ApiError COULD_NOT_PROCESS_CSR as {@link parseCsrPem}, or when neither the CSR nor `commonName` gives a CN.
 */
export async function issueClientCertificateFromCsr(
  opts: { issuer: CaSigner; csrPem: string; commonName?: string; spiffeId?: string } & Validity,
): Promise<string> {
  const csr = await parseCsrPem(opts.csrPem)
  const commonName = opts.commonName ?? csr.subjectCn
  if (!commonName) throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'the CSR subject has no CN')
  return issueClientCertificate({ ...opts, publicKey: csr.publicKeySpki, commonName })
}
