/**
 * Pure checks of the CA aggregate. Each throws; none signs or mutates.
 * What the controller CA issues:
 * - a certificate is valid from `backdateMs` before now until now + its time to live, never past its issuer's
 *   notAfter; a CA past its notAfter issues nothing
 * - a certificate needs a subject CN; a server certificate needs at least one DNS name or IP address
 * Third-party CAs (`/cas`), as the real controller decides them (controller/model/ca_model.go):
 * - names are required and unique; a CA certificate is registered once (400 COULD_NOT_VALIDATE on certPem,
 *   "certificate already used as CA <id>")
 * - identityRoles are role attributes (no '#' or '@' prefix); an empty identityNameFormat means the default
 * - an externalIdClaim must be one the claim extraction can evaluate: index ≥ 0, a known location, a matcher of that
 *   location (CN and e-mail: ALL, PREFIX, SUFFIX; SAN URI: ALL, SCHEME) with criteria where it needs them, NONE or
 *   SPLIT with a separator
 * - a CA is verified once (409 CA_ALREADY_VERIFIED)
 */
import { ApiError } from '../../errors/api-error.ts'
import { decideRoleAttributes } from '../identity/identity-decide.ts'
import { decideName } from '../policy/graph-decide.ts'
import {
  DEFAULT_IDENTITY_NAME_FORMAT,
  EXTERNAL_ID_LOCATIONS,
  type ExternalIdClaim,
  type ExternalIdLocation,
  type ExternalIdMatcher,
  type ExternalIdParser,
  type ThirdPartyCa,
} from './ca-types.ts'
import type { ThirdPartyCaReads } from './ca-reads.ts'

/** The validity window (epoch ms) of a certificate issued at `now`. @throws TypeError for a time to live ≤ 0 (a bug). */
export function decideValidity(now: number, ttlMs: number, backdateMs: number, issuerNotAfter: number): { notBefore: number; notAfter: number } {
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) throw new TypeError(`a certificate's time to live must be positive, got ${ttlMs}`)
  if (issuerNotAfter <= now) throw new Error(`the signing CA expired at ${new Date(issuerNotAfter).toISOString()}; it issues nothing`)
  return { notBefore: now - backdateMs, notAfter: Math.min(now + ttlMs, issuerNotAfter) }
}

/** The subject of a certificate to issue: a non-empty CN, and for a server certificate at least one SAN. */
export function decideSubject(purpose: 'client' | 'server', commonName: string, sans: { dnsNames: readonly string[]; ipAddresses: readonly string[] }): void {
  if (commonName.trim() === '') throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'the certificate request has no common name')
  if (purpose === 'server' && sans.dnsNames.length === 0 && sans.ipAddresses.length === 0) {
    throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'a server certificate request must name at least one DNS name or IP address')
  }
}

/** A CA's name: required, unique among CAs. */
export function decideCaName(reads: Pick<ThirdPartyCaReads, 'cas'>, name: string | undefined, selfId?: string): string {
  return decideName('cas', name, (n) => reads.cas.idByName(n), selfId)
}

/** A CA certificate (by its fingerprint) is registered once. */
export function decideCaCertificateUnused(reads: Pick<ThirdPartyCaReads, 'caByFingerprint'>, fingerprint: string, certPem: string): void {
  const other = reads.caByFingerprint(fingerprint)
  if (other) throw ApiError.invalidField('certPem', `certificate already used as CA ${other.id}`, certPem)
}

/** The role attributes auto-enrolled identities get; null reads as none. */
export function decideIdentityRoles(roles: readonly string[] | null | undefined): string[] {
  return decideRoleAttributes(roles, 'identityRoles') ?? []
}

/** The name format of auto-enrolled identities: empty or absent means the default. */
export function decideIdentityNameFormat(format: string | null | undefined): string {
  return format === undefined || format === null || format.trim() === '' ? DEFAULT_IDENTITY_NAME_FORMAT : format
}

/** An externalIdClaim as a request gives it: every member may be absent or null. */
export interface ExternalIdClaimInput {
  location?: string | null
  matcher?: string | null
  matcherCriteria?: string | null
  parser?: string | null
  parserCriteria?: string | null
  index?: number | null
}

const MATCHERS_OF: Record<ExternalIdLocation, readonly ExternalIdMatcher[]> = {
  COMMON_NAME: ['ALL', 'PREFIX', 'SUFFIX'],
  SAN_EMAIL: ['ALL', 'PREFIX', 'SUFFIX'],
  SAN_URI: ['ALL', 'SCHEME'],
}

/**
 * A claim the real controller's extraction can evaluate, with absent criteria as "" and an absent index as 0; the
 * refusals carry the real controller's reasons (400 COULD_NOT_VALIDATE).
 */
export function decideExternalIdClaim(input: ExternalIdClaimInput): ExternalIdClaim {
  const index = input.index ?? 0
  if (!Number.isInteger(index) || index < 0) {
    throw ApiError.invalidField('externalIdClaim.index', 'index must be greater than or equal to zero', index)
  }
  const location = input.location ?? ''
  if (!(EXTERNAL_ID_LOCATIONS as readonly string[]).includes(location)) {
    throw ApiError.invalidField('externalIdClaim.location', `unsupported location [${location}]`, location)
  }
  const loc = location as ExternalIdLocation
  const matcher = input.matcher ?? ''
  const matcherCriteria = input.matcherCriteria ?? ''
  const parser = input.parser ?? ''
  const parserCriteria = input.parserCriteria ?? ''
  const refuse = (reason: string) => ApiError.invalidField('externalIdClaim', reason, `location=${loc} matcher=${matcher} parser=${parser}`)
  if (!(MATCHERS_OF[loc] as readonly string[]).includes(matcher)) throw refuse(`unsupported matcher [${matcher}] for location [${loc}]`)
  if (matcher !== 'ALL' && matcherCriteria === '') throw refuse(`invalid criteria [${matcherCriteria}] for matcher [${matcher}]`)
  if (parser !== 'NONE' && parser !== 'SPLIT') throw refuse(`unsupported parser [${parser}] for location [${loc}]`)
  if (parser === 'SPLIT' && parserCriteria === '') throw refuse(`invalid criteria [${parserCriteria}] for parser [${parser}]`)
  return { location: loc, matcher: matcher as ExternalIdMatcher, matcherCriteria, parser: parser as ExternalIdParser, parserCriteria, index }
}

/** The CA `POST /cas/{id}/verify` may verify: an existing one, not verified yet. */
export function decideVerifiable(ca: ThirdPartyCa | undefined): ThirdPartyCa {
  if (!ca) throw ApiError.notFound()
  if (ca.isVerified) throw new ApiError('CA_ALREADY_VERIFIED')
  return ca
}
