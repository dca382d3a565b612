/**
 * Key pairs over WebCrypto: generate (ECDSA P-256 by default), export and import PKCS#8 / SPKI.
 * Imports accept EC P-256/P-384/P-521 and RSA keys, also in the legacy SEC1 and PKCS#1 PEM forms. Stateless.
 */
import * as asn1js from 'asn1js'
import { createPrivateKey, createPublicKey, type webcrypto } from 'node:crypto'
import { decodePem, encodePem } from '../lib/pem.ts'
import { subtle } from './pki-engine.ts'

/** What `generateKeyPair` can make. ECDSA P-256 is what the controller issues with; the rest serve tests and imports. */
export type KeySpec = 'ec-p256' | 'ec-p384' | 'rsa-2048'

/** The algorithm of a public key, as the certificate and CSR views report it. */
export type PublicKeyAlgorithm = 'ec-p256' | 'ec-p384' | 'ec-p521' | 'rsa' | 'ed25519' | 'unknown'

const OID_EC_PUBLIC_KEY = '1.2.840.10045.2.1'
const OID_RSA_ENCRYPTION = '1.2.840.113549.1.1.1'
const OID_ED25519 = '1.3.101.112'
const CURVE_BY_OID: Record<string, 'P-256' | 'P-384' | 'P-521'> = {
  '1.2.840.10045.3.1.7': 'P-256',
  '1.3.132.0.34': 'P-384',
  '1.3.132.0.35': 'P-521',
}

/** WebCrypto parameters for an imported RSA key: RSASSA-PKCS1-v1_5 over SHA-256, the only RSA form we sign or verify. */
const RSA_IMPORT: webcrypto.RsaHashedImportParams = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }

/**
 * A new extractable signing key pair.
 * @param spec `ec-p256` (default), `ec-p384` or `rsa-2048` (RSASSA-PKCS1-v1_5, SHA-256, e = 65537).
 */
export async function generateKeyPair(spec: KeySpec = 'ec-p256'): Promise<CryptoKeyPair> {
  const params: webcrypto.EcKeyGenParams | webcrypto.RsaHashedKeyGenParams =
    spec === 'rsa-2048'
      ? { ...RSA_IMPORT, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }
      : { name: 'ECDSA', namedCurve: spec === 'ec-p384' ? 'P-384' : 'P-256' }
  return (await subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair
}

/** The PKCS#8 `PRIVATE KEY` PEM of an extractable private key. */
export async function exportPrivateKeyPem(privateKey: CryptoKey): Promise<string> {
  return encodePem('PRIVATE KEY', new Uint8Array(await subtle.exportKey('pkcs8', privateKey)))
}

/**
 * Imports the first private key in `pem` as an extractable signing key.
 * Accepts `PRIVATE KEY` (PKCS#8), `EC PRIVATE KEY` (SEC1, RFC 5915) and `RSA PRIVATE KEY` (PKCS#1).
 * RSA keys import as RSASSA-PKCS1-v1_5 with SHA-256.
 * @throws Error naming the problem: no key block, an encrypted key, or an unsupported algorithm or curve.
 */
export async function importPrivateKeyPem(pem: string): Promise<CryptoKey> {
  const block = decodePem(pem).find((b) => b.type.endsWith('PRIVATE KEY'))
  if (!block) throw new Error('no PRIVATE KEY PEM block found')
  if (block.type === 'ENCRYPTED PRIVATE KEY' || block.headers['Proc-Type']?.includes('ENCRYPTED')) {
    throw new Error('encrypted private keys are not supported')
  }
  let pkcs8: Uint8Array
  if (block.type === 'PRIVATE KEY') pkcs8 = block.der
  else if (block.type === 'EC PRIVATE KEY') pkcs8 = wrapPkcs8(OID_EC_PUBLIC_KEY, sec1CurveOid(block.der), block.der)
  else if (block.type === 'RSA PRIVATE KEY') pkcs8 = wrapPkcs8(OID_RSA_ENCRYPTION, null, block.der)
  else throw new Error(`unsupported private key block type ${block.type}`)
  return importDer('pkcs8', pkcs8)
}

/** The DER form OpenSSL reads for each private key PEM block type. */
const OPENSSL_KEY_TYPES: Record<string, 'pkcs8' | 'sec1' | 'pkcs1'> = { 'PRIVATE KEY': 'pkcs8', 'EC PRIVATE KEY': 'sec1', 'RSA PRIVATE KEY': 'pkcs1' }

/**
 * The SubjectPublicKeyInfo DER of the first private key in `pem`, derived by OpenSSL (node:crypto): any algorithm it
 * reads (RSA, EC, Ed25519, ...), in PKCS#8, SEC1 or PKCS#1 form, without WebCrypto's import and a trial signature.
 * Comparing it with a certificate's SPKI says whether the key is the certificate's.
 * @throws Error naming the problem: no key block, an encrypted key, or a key OpenSSL cannot read.
 */
export function publicKeySpkiOfPrivateKeyPem(pem: string): Uint8Array {
  const block = decodePem(pem).find((b) => b.type.endsWith('PRIVATE KEY'))
  if (!block) throw new Error('no PRIVATE KEY PEM block found')
  if (block.type === 'ENCRYPTED PRIVATE KEY' || block.headers['Proc-Type']?.includes('ENCRYPTED')) {
    throw new Error('encrypted private keys are not supported')
  }
  const type = OPENSSL_KEY_TYPES[block.type]
  if (!type) throw new Error(`unsupported private key block type ${block.type}`)
  const privateKey = createPrivateKey({ key: Buffer.from(block.der), format: 'der', type })
  return new Uint8Array(createPublicKey(privateKey).export({ type: 'spki', format: 'der' }))
}

/**
 * Imports PKCS#8 (as a signing key) or SPKI (as a verifying key) DER, choosing the WebCrypto parameters from its
 * algorithm identifier: ECDSA on a supported curve, or RSA as {@link RSA_IMPORT}.
 */
async function importDer(format: 'pkcs8' | 'spki', der: Uint8Array): Promise<CryptoKey> {
  const what = format === 'pkcs8' ? 'PKCS#8 private key' : 'SubjectPublicKeyInfo'
  const { algorithmOid, paramOid } = readAlgorithmIdentifier(der, format === 'pkcs8' ? 1 : 0, what)
  const usages: webcrypto.KeyUsage[] = format === 'pkcs8' ? ['sign'] : ['verify']
  const data = new Uint8Array(der) // an ArrayBuffer-backed copy, which is what the BufferSource type accepts
  if (algorithmOid === OID_RSA_ENCRYPTION) return subtle.importKey(format, data, RSA_IMPORT, true, usages)
  if (algorithmOid === OID_EC_PUBLIC_KEY) {
    const namedCurve = paramOid ? CURVE_BY_OID[paramOid] : undefined
    if (!namedCurve) throw new Error(`unsupported EC curve ${paramOid ?? '(none)'}`)
    return subtle.importKey(format, data, { name: 'ECDSA', namedCurve }, true, usages)
  }
  throw new Error(`unsupported ${format === 'pkcs8' ? 'private' : 'public'} key algorithm ${algorithmOid}`)
}

/**
 * The public half of an extractable private key (through its JWK, dropping the private members).
 * @throws Error when the key is not extractable.
 */
export async function publicKeyFromPrivateKey(privateKey: CryptoKey): Promise<CryptoKey> {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...publicJwk } = await subtle.exportKey('jwk', privateKey)
  const algorithm = privateKey.algorithm as webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams
  return subtle.importKey('jwk', { ...publicJwk, key_ops: ['verify'] }, algorithm, true, ['verify'])
}

/** The DER SubjectPublicKeyInfo of a public key. */
export async function exportPublicKeySpki(publicKey: CryptoKey): Promise<Uint8Array> {
  return new Uint8Array(await subtle.exportKey('spki', publicKey))
}

/** The `PUBLIC KEY` PEM (SubjectPublicKeyInfo) of a public key. */
export async function exportPublicKeyPem(publicKey: CryptoKey): Promise<string> {
  return encodePem('PUBLIC KEY', await exportPublicKeySpki(publicKey))
}

/**
 * Imports a DER SubjectPublicKeyInfo as a verifying key: ECDSA on P-256/P-384/P-521, or RSA (RSASSA-PKCS1-v1_5, SHA-256).
 * @throws Error on malformed DER or an unsupported algorithm.
 */
export async function importPublicKeySpki(spki: Uint8Array): Promise<CryptoKey> {
  return importDer('spki', spki)
}

/** Imports the first `PUBLIC KEY` PEM block; see {@link importPublicKeySpki}. */
export async function importPublicKeyPem(pem: string): Promise<CryptoKey> {
  const block = decodePem(pem).find((b) => b.type === 'PUBLIC KEY')
  if (!block) throw new Error('no PUBLIC KEY PEM block found')
  return importPublicKeySpki(block.der)
}

/** Names the algorithm of a DER SubjectPublicKeyInfo without importing it; never throws. */
export function toPublicKeyAlgorithm(spki: Uint8Array): PublicKeyAlgorithm {
  try {
    const { algorithmOid, paramOid } = readAlgorithmIdentifier(spki, 0, 'SubjectPublicKeyInfo')
    if (algorithmOid === OID_RSA_ENCRYPTION) return 'rsa'
    if (algorithmOid === OID_ED25519) return 'ed25519'
    if (algorithmOid === OID_EC_PUBLIC_KEY && paramOid) {
      const curve = CURVE_BY_OID[paramOid]
      if (curve) return `ec-${curve.replace('-', '').toLowerCase()}` as PublicKeyAlgorithm
    }
  } catch {
    // fall through: anything we cannot read is 'unknown'
  }
  return 'unknown'
}

/**
 * The hash a signature by `privateKey` should use: SHA-384 for P-384, SHA-512 for P-521, otherwise SHA-256
 * (RSA keys carry their hash, SHA-256 for every key this module imports or makes).
 */
export function signingHashFor(privateKey: CryptoKey): 'SHA-256' | 'SHA-384' | 'SHA-512' {
  const algorithm = privateKey.algorithm as Partial<webcrypto.EcKeyAlgorithm & webcrypto.RsaHashedKeyAlgorithm>
  if (algorithm.namedCurve === 'P-384') return 'SHA-384'
  if (algorithm.namedCurve === 'P-521') return 'SHA-512'
  const hash = algorithm.hash?.name
  if (hash === 'SHA-384' || hash === 'SHA-512') return hash
  return 'SHA-256'
}

/**
 * Whether `privateKey` is the private half of `spki`: signs a random challenge and verifies it with the public key.
 * Works for non-extractable keys; false when the algorithms differ.
 */
export async function isKeyPairOf(privateKey: CryptoKey, spki: Uint8Array): Promise<boolean> {
  try {
    const publicKey = await importPublicKeySpki(spki)
    if (publicKey.algorithm.name !== privateKey.algorithm.name) return false
    const params = signatureParams(privateKey)
    const challenge = crypto.getRandomValues(new Uint8Array(32))
    const signature = await subtle.sign(params, privateKey, challenge)
    return await subtle.verify(params, publicKey, signature, challenge)
  } catch {
    return false
  }
}

/** WebCrypto sign/verify parameters for a key of ours (ECDSA: the hash its curve's JOSE algorithm uses; a JWS of it carries r‖s). */
export function signatureParams(key: CryptoKey): webcrypto.AlgorithmIdentifier | webcrypto.EcdsaParams {
  if (key.algorithm.name === 'ECDSA') return { name: 'ECDSA', hash: signingHashFor(key) }
  return { name: key.algorithm.name }
}

/**
 * Reads `SEQUENCE { …, AlgorithmIdentifier at index, … }` from DER: the algorithm OID and, when the parameters are
 * an OID (a named curve), that OID too.
 */
function readAlgorithmIdentifier(der: Uint8Array, index: number, what: string): { algorithmOid: string; paramOid?: string } {
  const parsed = asn1js.fromBER(der)
  if (parsed.offset === -1 || !(parsed.result instanceof asn1js.Sequence)) throw new Error(`malformed ${what}`)
  const algorithm = parsed.result.valueBlock.value[index]
  if (!(algorithm instanceof asn1js.Sequence)) throw new Error(`malformed ${what}: no algorithm identifier`)
  const [oid, param] = algorithm.valueBlock.value
  if (!(oid instanceof asn1js.ObjectIdentifier)) throw new Error(`malformed ${what}: no algorithm OID`)
  return {
    algorithmOid: oid.valueBlock.toString(),
    paramOid: param instanceof asn1js.ObjectIdentifier ? param.valueBlock.toString() : undefined,
  }
}

/** The named-curve OID inside a SEC1 `ECPrivateKey` (its `[0] parameters`), which PKCS#8 moves to the algorithm. */
function sec1CurveOid(der: Uint8Array): string {
  const parsed = asn1js.fromBER(der)
  if (parsed.offset === -1 || !(parsed.result instanceof asn1js.Sequence)) throw new Error('malformed EC PRIVATE KEY')
  for (const item of parsed.result.valueBlock.value) {
    if (item.idBlock.tagClass === 3 && item.idBlock.tagNumber === 0 && item instanceof asn1js.Constructed) {
      const oid = item.valueBlock.value[0]
      if (oid instanceof asn1js.ObjectIdentifier) {
        const curveOid = oid.valueBlock.toString()
        if (!CURVE_BY_OID[curveOid]) throw new Error(`unsupported EC curve ${curveOid}`)
        return curveOid
      }
    }
  }
  throw new Error('EC PRIVATE KEY has no named curve')
}

/** `PrivateKeyInfo { version 0, algorithm, privateKey OCTET STRING }` around a legacy key encoding. */
function wrapPkcs8(algorithmOid: string, paramOid: string | null, inner: Uint8Array): Uint8Array {
  const info = new asn1js.Sequence({
    value: [
      new asn1js.Integer({ value: 0 }),
      new asn1js.Sequence({
        value: [
          new asn1js.ObjectIdentifier({ value: algorithmOid }),
          paramOid ? new asn1js.ObjectIdentifier({ value: paramOid }) : new asn1js.Null(),
        ],
      }),
      new asn1js.OctetString({ valueHex: inner }),
    ],
  })
  return new Uint8Array(info.toBER(false))
}
