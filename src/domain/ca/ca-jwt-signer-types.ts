/**
 * External JWT signers (the `/external-jwt-signers` resource) as stored: the trust an administrator places in a
 * third party's JWTs, so that they log identities in (`method=ext-jwt`) or satisfy a policy's ext-jwt second factor.
 * The CA actor owns them, beside the third-party CAs. Times are epoch milliseconds.
 * @see edge-api management.yml externalJwtSignerCreate, externalJwtSignerDetail; controller-behaviour.md §4 "ext-jwt"
 */
import type { DeepReadonly } from '../../lib/deep-readonly.ts'
import type { ReadTable } from '../../lib/entity-table.ts'

/** Which token of an OpenID provider a client should present (stored and shown; edgeplane verifies either). */
export const TARGET_TOKENS = ['ACCESS', 'ID'] as const
export type TargetToken = (typeof TARGET_TOKENS)[number]

/** The claim mapped to an identity when a signer names none (the real controller's default). */
export const DEFAULT_CLAIMS_PROPERTY = 'sub'

/**
 * One signer. Exactly one of `certPem` (its public key verifies) and `jwksEndpoint` (keys fetched by `kid`) is set;
 * `commonName`, `fingerprint`, `notBefore` and `notAfter` come from `certPem` ("" and null for a JWKS signer).
 * Unique: `name`, `issuer`, and `kid` when set.
 */
export type ExternalJwtSigner = DeepReadonly<{
  id: string
  name: string
  certPem: string | null
  jwksEndpoint: string | null
  commonName: string
  /** SHA-1 of the certificate's DER, lowercase hex; "" without a certificate. */
  fingerprint: string
  notBefore: number | null
  notAfter: number | null
  kid: string | null
  issuer: string
  audience: string
  claimsProperty: string
  useExternalId: boolean
  enabled: boolean
  externalAuthUrl: string | null
  clientId: string | null
  scopes: string[]
  targetToken: TargetToken
  enrollToCertEnabled: boolean
  enrollToTokenEnabled: boolean
  enrollNameClaimsSelector: string
  enrollAttributeClaimsSelector: string
  enrollAuthPolicyId: string
  tags: Record<string, unknown>
  createdAt: number
  updatedAt: number
}>

/** What the CA actor shows everyone of the external JWT signers. Records are replaced on every change. */
export interface ExternalJwtSignerReads {
  readonly jwtSigners: ReadTable<ExternalJwtSigner>
  /** The signer with this `kid`. */
  jwtSignerByKid(kid: string): ExternalJwtSigner | undefined
  /** The signer with exactly this `issuer`. */
  jwtSignerByIssuer(issuer: string): ExternalJwtSigner | undefined
}
