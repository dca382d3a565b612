/**
 * Pure checks of external JWT signers (the CA aggregate's `/external-jwt-signers`). Each throws 400; none parses a
 * certificate (the actor hands the facts of `certPem` in).
 * - name required and unique (COULD_NOT_VALIDATE on `name`); `issuer` required and unique, `kid` unique when set:
 *   a JWT picks its signer by `kid`, else by `iss`, so neither may be ambiguous
 * - `audience` required and non-empty: a JWT is accepted only when its `aud` names it (stricter than the real
 *   controller, which lets a signer without an audience accept any)
 * - exactly one of `certPem` and `jwksEndpoint` (COULD_NOT_VALIDATE on `certPem` when both or neither are given)
 * - `jwksEndpoint`: an absolute https URL, or http to a loopback host (127.0.0.0/8, ::1, localhost); `externalAuthUrl`:
 *   an absolute http(s) URL
 * - `claimsProperty` absent or empty means `sub`; `targetToken` absent means ACCESS
 * - token enrollment (`POST /enroll/token`): `enrollNameClaimsSelector` empty means `/sub`, and it and
 *   `enrollAttributeClaimsSelector` must be valid JSON pointers (a leading `/` may be left out; ca-jwt-claims.ts);
 *   `enrollAuthPolicyId` empty means `default`, and it must name an authentication policy that allows primary ext-jwt
 *   login when `enrollToTokenEnabled` and primary certificate login when `enrollToCertEnabled` (400 on the field,
 *   as the real controller's store refuses it); the policies are the identity actor's, read through `authPolicyOf`
 * How a write lays its fields over the stored signer: create and PUT start from the defaults, PATCH from the stored
 * record; an absent member keeps that start, null clears a nullable field and counts as absent for the others.
 */
import { ApiError } from '../../errors/api-error.ts'
import { decideName } from '../policy/graph-decide.ts'
import { DEFAULT_CLAIMS_PROPERTY, type ExternalJwtSigner, type ExternalJwtSignerReads, type TargetToken } from './ca-jwt-signer-types.ts'
import { claimSelectorProblem, DEFAULT_ENROLL_NAME_SELECTOR } from './ca-jwt-claims.ts'
import { DEFAULT_AUTH_POLICY } from '../identity/identity-types.ts'
import type { AuthPolicyRules } from '../identity/identity-auth-policy.ts'

/** The rules of an authentication policy by id (the identity actor's), for the token-enrollment checks. */
export type AuthPolicyOf = (id: string) => Pick<AuthPolicyRules, 'primary'> | undefined

/** The writable fields of a signer, as a request gives them (each may be absent; nullable ones may be null). */
export interface JwtSignerFields {
  name?: string | null
  certPem?: string | null
  jwksEndpoint?: string | null
  kid?: string | null
  issuer?: string | null
  audience?: string | null
  claimsProperty?: string | null
  useExternalId?: boolean | null
  enabled?: boolean | null
  externalAuthUrl?: string | null
  clientId?: string | null
  scopes?: string[] | null
  targetToken?: TargetToken | null
  enrollToCertEnabled?: boolean | null
  enrollToTokenEnabled?: boolean | null
  enrollNameClaimsSelector?: string | null
  enrollAttributeClaimsSelector?: string | null
  enrollAuthPolicyId?: string | null
  tags?: Record<string, unknown> | null
}

/** The settable part of a signer (what a write decides; the certificate facts and times are added by the actor). */
export type JwtSignerSettings = Omit<ExternalJwtSigner, 'id' | 'commonName' | 'fingerprint' | 'notBefore' | 'notAfter' | 'createdAt' | 'updatedAt'>

const DEFAULTS: JwtSignerSettings = {
  name: '',
  certPem: null,
  jwksEndpoint: null,
  kid: null,
  issuer: '',
  audience: '',
  claimsProperty: DEFAULT_CLAIMS_PROPERTY,
  useExternalId: false,
  enabled: false,
  externalAuthUrl: null,
  clientId: null,
  scopes: [],
  targetToken: 'ACCESS',
  enrollToCertEnabled: false,
  enrollToTokenEnabled: false,
  enrollNameClaimsSelector: '',
  enrollAttributeClaimsSelector: '',
  enrollAuthPolicyId: '',
  tags: {},
}

/** Fields where null is a value (cleared); for every other field null reads as absent. */
const NULLABLE = new Set<keyof JwtSignerSettings>(['certPem', 'jwksEndpoint', 'kid', 'externalAuthUrl', 'clientId'])

/** The settings a write asks for: `input` laid over the stored signer (PATCH) or over the defaults (create, PUT). */
export function mergeJwtSignerFields(stored: JwtSignerSettings | undefined, input: JwtSignerFields): JwtSignerSettings {
  const out: Record<string, unknown> = { ...(stored ?? DEFAULTS) }
  for (const key of Object.keys(DEFAULTS) as (keyof JwtSignerSettings)[]) {
    const given = input[key]
    if (given === undefined) continue
    if (given === null && !NULLABLE.has(key)) continue
    out[key] = given
  }
  return out as JwtSignerSettings
}

/**
 * The settings to store, checked against the other signers (`selfId`: the signer being updated). Empty optional
 * strings read as absent (an empty `kid` is no kid, an empty `claimsProperty` is `sub`).
 */
export function decideJwtSigner(reads: ExternalJwtSignerReads, s: JwtSignerSettings, selfId?: string, authPolicyOf?: AuthPolicyOf): JwtSignerSettings {
  const name = decideName('externalJwtSigners', s.name, (n) => reads.jwtSigners.idByName(n), selfId)
  const issuer = s.issuer.trim()
  if (issuer === '') throw ApiError.invalidField('issuer', 'issuer is required', s.issuer)
  const byIssuer = reads.jwtSignerByIssuer(issuer)
  if (byIssuer && byIssuer.id !== selfId) throw duplicate('issuer', issuer)
  if (s.audience.trim() === '') throw ApiError.invalidField('audience', 'audience is required', s.audience)
  const kid = emptyAsNull(s.kid)
  const byKid = kid === null ? undefined : reads.jwtSignerByKid(kid)
  if (byKid && byKid.id !== selfId) throw duplicate('kid', kid!)
  const certPem = emptyAsNull(s.certPem)
  const jwksEndpoint = emptyAsNull(s.jwksEndpoint)
  if ((certPem === null) === (jwksEndpoint === null)) {
    throw ApiError.invalidField('certPem', 'exactly one of certPem and jwksEndpoint is required', certPem === null ? null : 'both given')
  }
  if (jwksEndpoint !== null) decideUrl('jwksEndpoint', jwksEndpoint, 'https-or-loopback')
  const externalAuthUrl = emptyAsNull(s.externalAuthUrl)
  if (externalAuthUrl !== null) decideUrl('externalAuthUrl', externalAuthUrl, 'http-or-https')
  const enrollNameClaimsSelector = s.enrollNameClaimsSelector.trim() === '' ? DEFAULT_ENROLL_NAME_SELECTOR : s.enrollNameClaimsSelector
  decideClaimSelector('enrollNameClaimsSelector', enrollNameClaimsSelector)
  decideClaimSelector('enrollAttributeClaimsSelector', s.enrollAttributeClaimsSelector)
  const enrollAuthPolicyId = s.enrollAuthPolicyId.trim() === '' ? DEFAULT_AUTH_POLICY.id : s.enrollAuthPolicyId
  if (authPolicyOf) decideEnrollAuthPolicy(authPolicyOf, enrollAuthPolicyId, s)
  return {
    ...s,
    name,
    enrollNameClaimsSelector,
    enrollAuthPolicyId,
    issuer,
    kid,
    certPem,
    jwksEndpoint,
    externalAuthUrl,
    clientId: emptyAsNull(s.clientId),
    claimsProperty: s.claimsProperty.trim() === '' ? DEFAULT_CLAIMS_PROPERTY : s.claimsProperty,
  }
}

/** 400 on `field` unless `selector` is empty or a valid JSON pointer. */
function decideClaimSelector(field: string, selector: string): void {
  const problem = claimSelectorProblem(selector)
  if (problem !== null) throw ApiError.invalidField(field, `the claims selector is not a valid JSON pointer: ${problem}`, selector)
}

/** 400 on `enrollAuthPolicyId` unless the policy exists and allows the primary login of each enrollment allowed. */
function decideEnrollAuthPolicy(authPolicyOf: AuthPolicyOf, id: string, s: JwtSignerSettings): void {
  const policy = authPolicyOf(id)
  if (!policy) throw ApiError.invalidField('enrollAuthPolicyId', 'the auth policy could not be found', id)
  if (s.enrollToTokenEnabled && !policy.primary.extJwt.allowed) {
    throw ApiError.invalidField('enrollAuthPolicyId', 'enrollToTokenEnabled needs an auth policy that allows primary ext-jwt authentication', id)
  }
  if (s.enrollToCertEnabled && !policy.primary.cert.allowed) {
    throw ApiError.invalidField('enrollAuthPolicyId', 'enrollToCertEnabled needs an auth policy that allows primary certificate authentication', id)
  }
}

function emptyAsNull(v: string | null): string | null {
  return v === null || v.trim() === '' ? null : v
}

function duplicate(field: string, value: string): ApiError {
  return ApiError.invalidField(field, `duplicate value '${value}' in unique index on externalJwtSigners store`, value)
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i

/** 400 on `field` unless `value` is an absolute URL of an allowed scheme. */
function decideUrl(field: string, value: string, rule: 'https-or-loopback' | 'http-or-https'): void {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw ApiError.invalidField(field, `${field} must be an absolute URL`, value)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw ApiError.invalidField(field, `${field} must be an http or https URL`, value)
  if (url.hostname === '') throw ApiError.invalidField(field, `${field} must name a host`, value)
  if (rule === 'https-or-loopback' && url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    throw ApiError.invalidField(field, `${field} must use https (plain http only to a loopback address)`, value)
  }
}
