/**
 * Messages and events of the CA actor: plain, cloneable data. CSRs are parsed and their signatures verified in
 * flows/ before asking (pki-csr `parseCsrPem`); the actor only signs. The same actor owns the third-party CAs
 * (`/cas`): their writes are `ca.create|update|verify|delete`.
 *
 * `ca.update` carries `replace`: true for PUT (absent optional fields, tags and externalIdClaim, are cleared), false
 * for PATCH (absent and null fields are left as they are, except externalIdClaim: absent or null removes it, and a
 * given one's members are laid over the stored claim, as in the real controller).
 */
import type { ExternalIdClaimInput } from '../../domain/ca/ca-decide.ts'
import type { JwtSignerFields } from '../../domain/ca/ca-jwt-signer-decide.ts'
import type { ThirdPartyCa } from '../../domain/ca/ca-types.ts'
import type { ParsedCsr } from '../../pki/pki-csr.ts'
import type { ChangeContext } from '../runtime/actor-runtime.ts'

/**
 * The keys the CA signs JWTs with:
 * - `signing-ca`: the intermediate CA's key, no `kid` (what service session tokens were signed with before issue 30;
 *   kept to verify those)
 * - `server`: the TLS server certificate's key, `kid` = SHA-1 of its certificate (what the real controller signs
 *   enrollment JWTs, OIDC tokens and service session tokens with, so an SDK can check them against the certificate
 *   the controller presents and a router finds the key by `kid` in its data model)
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

/** The settable fields of a third-party CA; a create gives every required one (the wire schemas see to it). */
export interface ThirdPartyCaFields {
  name?: string
  isAutoCaEnrollmentEnabled?: boolean
  isOttCaEnrollmentEnabled?: boolean
  isAuthEnabled?: boolean
  identityRoles?: string[] | null
  /** Empty means the default format. */
  identityNameFormat?: string
  /** null removes the claim. */
  externalIdClaim?: ExternalIdClaimInput | null
  /** null empties the map. */
  tags?: Record<string, unknown> | null
}

export type CaMsg =
  | { type: 'ca.signJwt'; key: JwtKeyName; claims: JwtClaims }
  /**
   * Signs `nonce` (a canonical UUID the caller checked: 36 ASCII characters, which no JWS signing input, TLS
   * handshake transcript or certificate body can be) with the TLS server key, for `POST /enroll/challenge`.
   */
  | { type: 'ca.signNonce'; nonce: string }
  | { type: 'ca.issueCertificate'; request: CertificateRequest }
  /** The listener's TLS key and certificate chain, handed out at start. */
  | { type: 'ca.tlsCredentials' }
  /** Registers a third-party CA, unverified: `certPem` must hold exactly one CA certificate not registered yet. */
  | { type: 'ca.create'; input: ThirdPartyCaFields & { name: string; certPem: string }; change: ChangeContext }
  | { type: 'ca.update'; id: string; input: ThirdPartyCaFields; replace: boolean; change: ChangeContext }
  /** Marks a CA verified; the proof (a certificate it signed with its verificationToken as CN) was checked before. */
  | { type: 'ca.verify'; id: string; change: ChangeContext }
  | { type: 'ca.delete'; id: string; change: ChangeContext }
  /**
   * External JWT signers (`/external-jwt-signers`): create, update (`replace` as for CAs: PUT starts from the
   * defaults, PATCH from the stored signer) and delete. A given `certPem` is parsed by the actor.
   */
  | { type: 'jwtSigner.create'; input: JwtSignerFields; change: ChangeContext }
  | { type: 'jwtSigner.update'; id: string; input: JwtSignerFields; replace: boolean; change: ChangeContext }
  | { type: 'jwtSigner.delete'; id: string; change: ChangeContext }

export interface CaReplies {
  'ca.signJwt': string
  /** The signature as a JWS would carry it (base64url; ECDSA as r‖s), the key's JOSE algorithm and its kid. */
  'ca.signNonce': { signature: string; alg: string; kid: string }
  'ca.issueCertificate': IssuedCertificate
  'ca.tlsCredentials': { key: string; cert: string }
  'ca.create': { id: string }
  'ca.update': void
  'ca.verify': void
  'ca.delete': void
  'jwtSigner.create': { id: string }
  'jwtSigner.update': void
  'jwtSigner.delete': void
}

/**
 * Events of the CA actor, delivered before the writer's reply resolves:
 * - `ca.trustChanged`: a verified CA was written (one verified, updated in any field, or deleted); `verified` is the
 *   new list (ThirdPartyCaReads.verifiedCas), `trustVersion` its version.
 *   Certificate login and CA enrollment rebuild their trust list from it.
 * - `ca.deleted`: a CA is gone; whatever hangs on it (its certificate authenticators, ottca enrollments) goes with it
 *   in the subscriber's own aggregate.
 */
export type CaEvent =
  | { type: 'ca.trustChanged'; verified: readonly ThirdPartyCa[]; trustVersion: number }
  | { type: 'ca.deleted'; ca: ThirdPartyCa }
