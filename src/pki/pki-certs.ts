/**
 * X.509 certificates: issue a root CA, an intermediate CA, TLS server and client certificates, and parse any
 * certificate PEM into a small plain view. Stateless; times are explicit epoch ms that callers take from their Clock.
 * @see RFC 5280 §4.1 (certificate), §4.2.1 (the extensions written here)
 */
import * as asn1js from 'asn1js'
import { createHash } from 'node:crypto'
import {
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  ExtKeyUsage,
  Extension,
  PublicKeyInfo,
  type RelativeDistinguishedNames,
  Time,
  TimeType,
} from 'pkijs'
import { ApiError } from '../errors/api-error.ts'
import { decodePem, encodePem, PemFormatError } from '../lib/pem.ts'
import { parseCsrPem } from './pki-csr.ts'
import { engine } from './pki-engine.ts'
import { exportPublicKeySpki, signingHashFor, toPublicKeyAlgorithm, type PublicKeyAlgorithm } from './pki-keys.ts'
import { altNamesOf, commonNameOf, toAltNameExtension, toDistinguishedName, type SubjectName } from './pki-names.ts'

const OID_BASIC_CONSTRAINTS = '2.5.29.19'
const OID_KEY_USAGE = '2.5.29.15'
const OID_EXT_KEY_USAGE = '2.5.29.37'
const OID_SUBJECT_KEY_ID = '2.5.29.14'
const OID_AUTHORITY_KEY_ID = '2.5.29.35'
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1'
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
const EKU_NAMES: Record<string, string> = { [OID_SERVER_AUTH]: 'serverAuth', [OID_CLIENT_AUTH]: 'clientAuth' }

/** keyUsage bits, numbered as in RFC 5280 §4.2.1.3. */
const KU = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const

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
    ca: { pathLen: undefined },
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
    extKeyUsages: [OID_SERVER_AUTH],
    sans: { dnsNames: opts.dnsNames ?? [], ipAddresses: opts.ipAddresses ?? [] },
  })
}

/**
 * A TLS client certificate (PEM, leaf only) signed by `issuer`: extendedKeyUsage clientAuth, CN `commonName`,
 * and a URI SAN when `spiffeId` is given (e.g. `spiffe://trust.domain/identity/<id>`).
 */
export async function issueClientCertificate(
  opts: { issuer: CaSigner; publicKey: PublicKeyInput; commonName: string; spiffeId?: string } & Validity,
): Promise<string> {
  return signCertificate({
    issuer: opts.issuer,
    subject: toDistinguishedName({ commonName: opts.commonName }),
    spki: await toSpki(opts.publicKey),
    validity: opts,
    extKeyUsages: [OID_CLIENT_AUTH],
    sans: { uris: opts.spiffeId ? [opts.spiffeId] : [] },
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
  ca?: { pathLen: number | undefined }
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
    authorityKeyId = subjectKeyIdOf(issuerCert)
  } else {
    if (!spec.signingKey) throw new TypeError('a self-signed certificate needs its signing key')
    cert.issuer = spec.subject
    signingKey = spec.signingKey
    authorityKeyId = keyIdOf(cert.subjectPublicKeyInfo)
  }

  const isRsa = toPublicKeyAlgorithm(spec.spki) === 'rsa'
  const extensions: Extension[] = []
  const basic = spec.ca ? new BasicConstraints({ cA: true, ...(spec.ca.pathLen === undefined ? {} : { pathLenConstraint: spec.ca.pathLen }) }) : new BasicConstraints({ cA: false })
  extensions.push(new Extension({ extnID: OID_BASIC_CONSTRAINTS, critical: true, extnValue: basic.toSchema().toBER(false), parsedValue: basic }))
  const usage = spec.ca ? [KU.keyCertSign, KU.cRLSign] : isRsa ? [KU.digitalSignature, KU.keyEncipherment] : [KU.digitalSignature]
  const keyUsage = toKeyUsageBits(usage)
  extensions.push(new Extension({ extnID: OID_KEY_USAGE, critical: true, extnValue: keyUsage.toBER(false), parsedValue: keyUsage }))
  if (spec.extKeyUsages?.length) {
    const eku = new ExtKeyUsage({ keyPurposes: spec.extKeyUsages })
    extensions.push(new Extension({ extnID: OID_EXT_KEY_USAGE, critical: false, extnValue: eku.toSchema().toBER(false), parsedValue: eku }))
  }
  const ski = new asn1js.OctetString({ valueHex: keyIdOf(cert.subjectPublicKeyInfo) })
  extensions.push(new Extension({ extnID: OID_SUBJECT_KEY_ID, critical: false, extnValue: ski.toBER(false), parsedValue: ski }))
  const aki = new AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: authorityKeyId }) })
  extensions.push(new Extension({ extnID: OID_AUTHORITY_KEY_ID, critical: false, extnValue: aki.toSchema().toBER(false), parsedValue: aki }))
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

/** A DER-minimal keyUsage BIT STRING with the given bits set (trailing zero bits dropped, RFC 5280 §4.2.1.3). */
function toKeyUsageBits(bits: number[]): asn1js.BitString {
  const octets = new Uint8Array(2)
  for (const bit of bits) octets[bit >> 3] |= 0x80 >> (bit & 7)
  const length = octets[1] ? 2 : 1
  const last = octets[length - 1]
  let unusedBits = 0
  while (unusedBits < 7 && (last & (1 << unusedBits)) === 0) unusedBits++
  return new asn1js.BitString({ valueHex: octets.slice(0, length), unusedBits })
}

/** The key identifier of a public key: SHA-1 of the subjectPublicKey bits (RFC 5280 §4.2.1.2, method 1). */
function keyIdOf(spki: PublicKeyInfo): Uint8Array {
  return new Uint8Array(createHash('sha1').update(spki.subjectPublicKey.valueBlock.valueHexView).digest())
}

/** A certificate's own subjectKeyIdentifier, or the key identifier computed from its key when it has none. */
function subjectKeyIdOf(cert: Certificate): Uint8Array {
  const ext = cert.extensions?.find((e) => e.extnID === OID_SUBJECT_KEY_ID)
  if (ext?.parsedValue instanceof asn1js.OctetString) return ext.parsedValue.valueBlock.valueHexView
  return keyIdOf(cert.subjectPublicKeyInfo)
}

async function toSpki(key: PublicKeyInput): Promise<Uint8Array> {
  return key instanceof Uint8Array ? key : exportPublicKeySpki(key)
}

/** Whether a parsed certificate has basicConstraints cA true. */
export function isCaCertificate(cert: Certificate): boolean {
  const ext = cert.extensions?.find((e) => e.extnID === OID_BASIC_CONSTRAINTS)
  return ext?.parsedValue instanceof BasicConstraints ? ext.parsedValue.cA === true : false
}

/** The basicConstraints pathLenConstraint of a CA certificate, or undefined when unlimited or not a CA. */
export function pathLenOf(cert: Certificate): number | undefined {
  const ext = cert.extensions?.find((e) => e.extnID === OID_BASIC_CONSTRAINTS)
  if (!(ext?.parsedValue instanceof BasicConstraints) || ext.parsedValue.pathLenConstraint === undefined) return undefined
  const pathLen = ext.parsedValue.pathLenConstraint
  return typeof pathLen === 'number' ? pathLen : pathLen.valueBlock.valueDec
}

/**
 * Whether the keyUsage of a certificate, when present, allows signing certificates (keyCertSign).
 * A certificate without the extension is not restricted.
 */
export function canSignCertificates(cert: Certificate): boolean {
  const ext = cert.extensions?.find((e) => e.extnID === OID_KEY_USAGE)
  if (!ext) return true
  const bits = ext.parsedValue instanceof asn1js.BitString ? ext.parsedValue.valueBlock.valueHexView : new Uint8Array()
  return bits.length > 0 && (bits[0] & (0x80 >> KU.keyCertSign)) !== 0
}

/** One certificate read from PEM or DER: the pkijs object and its exact DER. */
export interface ParsedCertificate {
  cert: Certificate
  der: Uint8Array
}

/**
 * Every certificate in a PEM text (a single certificate or a bundle), in order.
 * @throws ApiError COULD_NOT_PARSE_PEM_BLOCK when there is no PEM block or the armour is broken,
 *   EXPECTED_PEM_CERTIFICATE when a block is not a CERTIFICATE, COULD_NOT_PARSE_DER_BLOCK when its DER does not parse.
 */
export function readCertificates(pem: string): ParsedCertificate[] {
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
    return readCertificateDer(block.der, i)
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

/** The view of a parsed certificate; see {@link CertificateView}. */
export function toCertificateView({ cert, der }: ParsedCertificate): CertificateView {
  const sans = altNamesOf(cert.extensions)
  const ekuExt = cert.extensions?.find((e) => e.extnID === OID_EXT_KEY_USAGE)
  const purposes = ekuExt?.parsedValue instanceof ExtKeyUsage ? ekuExt.parsedValue.keyPurposes : []
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
    publicKeyAlgorithm: toPublicKeyAlgorithm(new Uint8Array(cert.subjectPublicKeyInfo.toSchema().toBER(false))),
    extKeyUsages: purposes.map((oid) => EKU_NAMES[oid] ?? oid),
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
