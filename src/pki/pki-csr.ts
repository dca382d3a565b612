/**
 * PKCS#10 certificate signing requests: parse a PEM CSR, check its self-signature, and return plain data
 * (subject CN, requested SANs, the public key as SPKI bytes) that can travel in an actor message.
 * Every bad input is ApiError COULD_NOT_PROCESS_CSR whose cause says what failed.
 * @see RFC 2986 (PKCS#10), RFC 2985 §5.4.2 (extensionRequest)
 */
import * as asn1js from 'asn1js'
import { CertificationRequest, Extensions } from 'pkijs'
import { ApiError } from '../errors/api-error.ts'
import { decodePem, PemFormatError } from '../lib/pem.ts'
import { engine } from './pki-engine.ts'
import { toPublicKeyAlgorithm, type PublicKeyAlgorithm } from './pki-keys.ts'
import { altNamesOf, commonNameOf } from './pki-names.ts'
import { asksForCaRights } from './pki-extensions.ts'

const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14'
const CSR_LABELS = new Set(['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'])
const SUPPORTED_KEYS = new Set<PublicKeyAlgorithm>(['ec-p256', 'ec-p384', 'ec-p521', 'rsa'])

/** What a verified CSR asks for. Plain data: no pkijs or CryptoKey objects, so it clones into messages. */
export interface ParsedCsr {
  /** The subject CN, '' when the subject has none. */
  subjectCn: string
  /** subjectAltName entries from the extensionRequest attribute. */
  dnsNames: string[]
  ipAddresses: string[]
  uris: string[]
  /** DER SubjectPublicKeyInfo: pass it as `publicKey` when issuing. */
  publicKeySpki: Uint8Array
  publicKeyAlgorithm: PublicKeyAlgorithm
  /** The extension request asks for CA rights (basicConstraints cA or keyUsage keyCertSign). */
  requestsCa: boolean
}

function csrError(message: string): ApiError {
  return ApiError.withMessage('COULD_NOT_PROCESS_CSR', message)
}

/**
 * Parses a PEM CSR (`CERTIFICATE REQUEST` or `NEW CERTIFICATE REQUEST`) and verifies its self-signature.
 * Accepts EC (P-256, P-384, P-521) and RSA keys.
 * @throws ApiError COULD_NOT_PROCESS_CSR, with a cause naming the failing step: PEM, DER, key algorithm or signature.
 */
export async function parseCsrPem(pem: string): Promise<ParsedCsr> {
  if (typeof pem !== 'string' || pem.trim() === '') throw csrError('the CSR is empty')
  let blocks
  try {
    blocks = decodePem(pem)
  } catch (e) {
    throw csrError(`the CSR PEM is malformed: ${e instanceof PemFormatError ? e.message : 'unreadable'}`)
  }
  if (blocks.length === 0) throw csrError('no CERTIFICATE REQUEST PEM block found')
  if (blocks.length > 1) throw csrError(`expected one PEM block, found ${blocks.length}`)
  const block = blocks[0]
  if (!CSR_LABELS.has(block.type)) throw csrError(`PEM block is ${block.type}, expected CERTIFICATE REQUEST`)

  let csr: CertificationRequest
  try {
    const asn = asn1js.fromBER(block.der)
    if (asn.offset === -1 || asn.offset !== block.der.byteLength) throw new Error('not a single DER value')
    csr = new CertificationRequest({ schema: asn.result })
  } catch (e) {
    throw csrError(`the CSR DER could not be parsed: ${(e as Error).message}`)
  }

  const publicKeySpki = new Uint8Array(csr.subjectPublicKeyInfo.toSchema().toBER(false))
  const publicKeyAlgorithm = toPublicKeyAlgorithm(publicKeySpki)
  if (!SUPPORTED_KEYS.has(publicKeyAlgorithm)) throw csrError(`unsupported CSR public key algorithm (${publicKeyAlgorithm})`)

  let verified: boolean
  try {
    verified = await csr.verify(engine)
  } catch (e) {
    throw csrError(`the CSR signature could not be checked: ${(e as Error).message}`)
  }
  if (!verified) throw csrError('the CSR signature does not verify against its public key')

  let sans
  let requestsCa
  try {
    const extensions = requestedExtensions(csr)
    sans = altNamesOf(extensions)
    requestsCa = asksForCaRights({ extensions })
  } catch (e) {
    throw csrError(`the CSR extension request could not be parsed: ${(e as Error).message}`)
  }
  return { subjectCn: commonNameOf(csr.subject), ...sans, publicKeySpki, publicKeyAlgorithm, requestsCa }
}

/** The extensions of the extensionRequest attribute, or undefined when the CSR has none. */
function requestedExtensions(csr: CertificationRequest): Extensions['extensions'] | undefined {
  const attribute = csr.attributes?.find((a) => a.type === OID_EXTENSION_REQUEST)
  if (!attribute || attribute.values.length === 0) return undefined
  return new Extensions({ schema: attribute.values[0] }).extensions
}
