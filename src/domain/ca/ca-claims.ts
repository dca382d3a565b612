/**
 * What a third-party CA reads out of a certificate it signed: the `externalId` its `externalIdClaim` points at, and
 * the name an auto-enrolled identity gets from its `identityNameFormat`. Pure; the certificate was verified before.
 * - externalId: the values at `location` (COMMON_NAME: the subject CN, one value; SAN_URI: every URI SAN; SAN_EMAIL:
 *   every e-mail SAN), kept when `matcher` accepts them (ALL; PREFIX and SUFFIX keep the rest after removing the
 *   criteria; SCHEME keeps URIs of that scheme whole), each split by `parser` (NONE: as is; SPLIT: at the criteria),
 *   all in order; the claim is the `index`-th of them. None there, or an empty one: no externalId
 * - name format placeholders `[caName]`, `[caId]`, `[commonName]`, `[requestedName]`, `[identityId]`; text around
 *   them is kept, unknown brackets stay as written
 * @see openziti/x509-claims (locators, matchers, parsers); controller/model/ca_model.go GetExternalId,
 *   enrollment_mod_ca.go getIdentityName; controller-behaviour.md §6 "identityNameFormat"
 */
import type { ExternalIdClaim, ThirdPartyCa } from './ca-types.ts'

/** The parts of a certificate a claim can read. */
export interface ClaimSource {
  readonly subjectCn: string
  readonly uris: readonly string[]
  readonly emails: readonly string[]
}

/** The value a matcher keeps, or undefined when it does not accept `value`. */
function matched(claim: ExternalIdClaim, value: string): string | undefined {
  const criteria = claim.matcherCriteria
  switch (claim.matcher) {
    case 'ALL':
      return value
    case 'PREFIX':
      return value.startsWith(criteria) ? value.slice(criteria.length) : undefined
    case 'SUFFIX':
      return value.endsWith(criteria) ? value.slice(0, value.length - criteria.length) : undefined
    case 'SCHEME':
      return schemeOf(value) === criteria ? value : undefined
  }
}

/** The scheme of a URI (what precedes the first ':'), or '' when it has none. */
function schemeOf(uri: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)
  return m ? m[1] : ''
}

/** Every claim value `claim` finds in `cert`, in certificate order. */
export function claimValuesOf(claim: ExternalIdClaim, cert: ClaimSource): string[] {
  const located = claim.location === 'COMMON_NAME' ? [cert.subjectCn] : claim.location === 'SAN_URI' ? cert.uris : cert.emails
  const out: string[] = []
  for (const value of located) {
    const kept = matched(claim, value)
    if (kept === undefined) continue
    if (claim.parser === 'SPLIT') out.push(...kept.split(claim.parserCriteria))
    else out.push(kept)
  }
  return out
}

/** The externalId `claim` gives for `cert`, or null when the claim finds none (or an empty one). */
export function externalIdOf(claim: ExternalIdClaim, cert: ClaimSource): string | null {
  const value = claimValuesOf(claim, cert)[claim.index]
  return value === undefined || value === '' ? null : value
}

/** The values the name format placeholders stand for. */
export interface IdentityNameValues {
  readonly ca: Pick<ThirdPartyCa, 'id' | 'name'>
  readonly commonName: string
  /** The name the enrolling client asked for; the identity id when it asked for none. */
  readonly requestedName: string
  readonly identityId: string
}

/** `format` with its placeholders replaced. */
export function formatIdentityName(format: string, v: IdentityNameValues): string {
  const values: Record<string, string> = {
    caName: v.ca.name,
    caId: v.ca.id,
    commonName: v.commonName,
    requestedName: v.requestedName,
    identityId: v.identityId,
  }
  return format.replace(/\[(caName|caId|commonName|requestedName|identityId)\]/g, (_, key: string) => values[key])
}

/**
 * The first of `base`, `base000001`, `base000001000002`, … that `isTaken` refuses: the real controller appends a
 * 6-digit counter to the current name on each collision, so the suffixes accumulate.
 */
export function uniqueIdentityName(base: string, isTaken: (name: string) => boolean): string {
  let name = base
  for (let n = 1; isTaken(name); n++) name += String(n).padStart(6, '0')
  return name
}
