/**
 * Messages of the CA actor: plain, cloneable data. CSRs are parsed and their signatures verified in flows/ before
 * asking (pki-csr `parseCsrPem`); the actor only signs.
 */
import type { ParsedCsr } from '../../pki/pki-csr.ts'

/**
 * The keys the CA signs JWTs with:
 * - `signing-ca`: the intermediate CA's key (service session tokens; no `kid`, as before)
 * - `server`: the TLS server certificate's key, `kid` = SHA-1 of its certificate (what the real controller signs
 *   enrollment JWTs with, so an SDK can check them against the certificate the controller presents)
 */
export type JwtKeyName = 'signing-ca' | 'server'

/** JWT claims: a plain JSON object (registered claims such as iss, sub, aud, iat, exp, jti included as given). */
export type JwtClaims = Record<string, unknown>

/** A certificate to issue for the key of a verified CSR. */
export interface CertificateRequest {
  /** `client`: extendedKeyUsage clientAuth, an optional SPIFFE URI SAN; `server`: serverAuth and the given SANs. */
  purpose: 'client' | 'server'
  csr: ParsedCsr
  /** The subject CN (ziti uses the identity or router id). */
  commonName: string
  /** client only: e.g. `spiffe://<trust domain>/identity/<id>`. */
  spiffeId?: string
  /** server only: the names to certify (the caller decides which of the CSR's requested SANs to grant). */
  dnsNames?: string[]
  ipAddresses?: string[]
  /** Time to live; the certificate never outlives the intermediate CA. */
  ttlMs: number
}

/** An issued certificate. */
export interface IssuedCertificate {
  /** The leaf alone. */
  certPem: string
  /** The leaf followed by the intermediate CA: what a client presents. */
  chainPem: string
  /** SHA-1 of the leaf's DER, lowercase hex: what cert authenticators store. */
  fingerprint: string
  notAfter: number
}

export type CaMsg =
  | { type: 'ca.signJwt'; key: JwtKeyName; claims: JwtClaims }
  | { type: 'ca.issueCertificate'; request: CertificateRequest }
  /** The listener's TLS key and certificate chain, handed out at start. */
  | { type: 'ca.tlsCredentials' }

export interface CaReplies {
  'ca.signJwt': string
  'ca.issueCertificate': IssuedCertificate
  'ca.tlsCredentials': { key: string; cert: string }
}
