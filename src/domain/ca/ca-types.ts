/**
 * Third-party certificate authorities (the `/cas` resource) as stored: a CA certificate an administrator registers so
 * that certificates it signs can enroll (ottca, auto-enrollment) and log in. Times are epoch milliseconds.
 * @see edge-api management.yml definitions caCreate, caDetail, externalIdClaim
 */
import type { DeepReadonly } from '../../lib/deep-readonly.ts'

/** Where in a certificate the external id is found. */
export const EXTERNAL_ID_LOCATIONS = ['COMMON_NAME', 'SAN_URI', 'SAN_EMAIL'] as const
export type ExternalIdLocation = (typeof EXTERNAL_ID_LOCATIONS)[number]

/** Which of the located values count: all, by prefix or suffix (CN, e-mail), or by URI scheme (SAN URI). */
export const EXTERNAL_ID_MATCHERS = ['ALL', 'PREFIX', 'SUFFIX', 'SCHEME'] as const
export type ExternalIdMatcher = (typeof EXTERNAL_ID_MATCHERS)[number]

/** How a matched value becomes candidate ids: as it is, or split at `parserCriteria`. */
export const EXTERNAL_ID_PARSERS = ['NONE', 'SPLIT'] as const
export type ExternalIdParser = (typeof EXTERNAL_ID_PARSERS)[number]

/** The name an auto-enrolled identity gets when the CA names no format (the real controller's default). */
export const DEFAULT_IDENTITY_NAME_FORMAT = '[caName]-[commonName]'

/**
 * How an enrolling certificate maps to an identity's `externalId`: the `index`-th of the values found at `location`
 * that `matcher` accepts (with `matcherCriteria`), after `parser` (with `parserCriteria`). Stored only in a
 * combination the real controller can evaluate (see decideExternalIdClaim).
 */
export interface ExternalIdClaim {
  location: ExternalIdLocation
  matcher: ExternalIdMatcher
  matcherCriteria: string
  parser: ExternalIdParser
  parserCriteria: string
  index: number
}

/** A stored third-party CA: replaced on every change, never mutated (hence deeply read-only). */
export type ThirdPartyCa = DeepReadonly<{
  id: string
  name: string
  /** The CA certificate, exactly one PEM block; it never changes after creation. */
  certPem: string
  /** SHA-1 of the certificate's DER, lowercase hex: unique among CAs. */
  fingerprint: string
  /** Set by `POST /cas/{id}/verify` (proof of the CA's key); an unverified CA neither enrolls nor authenticates. */
  isVerified: boolean
  /** The CN a verification certificate must carry (a UUID). */
  verificationToken: string
  isAutoCaEnrollmentEnabled: boolean
  isOttCaEnrollmentEnabled: boolean
  isAuthEnabled: boolean
  /** Role attributes an auto-enrolled identity gets. */
  identityRoles: string[]
  /** Name format of an auto-enrolled identity; never empty (DEFAULT_IDENTITY_NAME_FORMAT when none was given). */
  identityNameFormat: string
  externalIdClaim: ExternalIdClaim | null
  tags: Record<string, unknown>
  createdAt: number
  updatedAt: number
}>

/**
 * Whether certificates of `ca` may enroll by ottca: verified, ottca enabled, and auth enabled (the rule that
 * an auth-disabled CA neither enrolls nor authenticates; the real controller checks only the ottca flag).
 */
export function isOttCaEnrollable(ca: ThirdPartyCa): boolean {
  return ca.isVerified && ca.isAuthEnabled && ca.isOttCaEnrollmentEnabled
}

/** Whether certificates of `ca` may auto-enroll: verified, auto-enrollment enabled, and auth enabled (as ottca). */
export function isAutoCaEnrollable(ca: ThirdPartyCa): boolean {
  return ca.isVerified && ca.isAuthEnabled && ca.isAutoCaEnrollmentEnabled
}
