/**
 * The keys of the other nodes of a cluster: each node signs its OIDC tokens with its own server certificate's key
 * (`kid` = SHA-1 hex of the certificate's DER), and every node's certificate is replicated state (the controllers
 * aggregate). A node's certificate is a verifying key here only when:
 * - it parses, and its SHA-1 is the fingerprint the record claims (a record cannot lend its kid to another key);
 * - it was issued by this PKI's intermediate, which every member shares (restored from a backup of a member): a
 *   certificate of another PKI signs nothing this node accepts. Its validity window is not checked, as this node's
 *   own key is not: a token's own `exp` bounds it.
 * Synchronous (node:crypto reads the certificate and hands its key to WebCrypto): the bearer check stays synchronous.
 */
import { createHash, X509Certificate } from 'node:crypto'
import { isIssuedByTrustAnchor } from '../../pki/pki-chain.ts'
import type { JwtVerifier } from './ca-state.ts'

/** What the controllers aggregate says of a node's signing certificate. */
export interface NodeCertificate {
  certPem: string
  fingerprint: string
}

/** Why a node's certificate gives no key (for a log line). */
export type NodeKeyRefusal = 'unreadable' | 'fingerprint mismatch' | 'not issued by this cluster\'s intermediate CA' | 'unsupported key'

/** The JOSE algorithm and WebCrypto import parameters of a certificate's public key; undefined for another kind. */
function algorithmOf(cert: X509Certificate): { alg: string; params: Parameters<typeof crypto.subtle.importKey>[2] } | undefined {
  const key = cert.publicKey
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve
    if (curve === 'prime256v1' || curve === 'P-256') return { alg: 'ES256', params: { name: 'ECDSA', namedCurve: 'P-256' } }
    if (curve === 'secp384r1' || curve === 'P-384') return { alg: 'ES384', params: { name: 'ECDSA', namedCurve: 'P-384' } }
    if (curve === 'secp521r1' || curve === 'P-521') return { alg: 'ES512', params: { name: 'ECDSA', namedCurve: 'P-521' } }
    return undefined
  }
  if (key.asymmetricKeyType === 'rsa') return { alg: 'RS256', params: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } }
  if (key.asymmetricKeyType === 'ed25519') return { alg: 'EdDSA', params: { name: 'Ed25519' } }
  return undefined
}

/**
 * The verifier of the JWTs a node signs, from its replicated certificate; or why there is none.
 * `issuers`: the PEM of this PKI's intermediate CA (what a node's server certificate is issued from).
 */
export function nodeJwtVerifier(node: NodeCertificate, issuers: readonly string[], at: number): JwtVerifier | NodeKeyRefusal {
  let cert: X509Certificate
  try {
    cert = new X509Certificate(node.certPem)
  } catch {
    return 'unreadable'
  }
  const der = new Uint8Array(cert.raw)
  if (createHash('sha1').update(der).digest('hex') !== node.fingerprint.toLowerCase()) return 'fingerprint mismatch'
  if (!isIssuedByTrustAnchor({ leaf: der, trusted: [...issuers], at, allowExpired: true })) return 'not issued by this cluster\'s intermediate CA'
  const a = algorithmOf(cert)
  if (!a) return 'unsupported key'
  try {
    const publicKey = cert.publicKey.toCryptoKey(a.params, true, ['verify'])
    return { publicKey, alg: a.alg, kid: node.fingerprint.toLowerCase() }
  } catch {
    return 'unsupported key'
  }
}
