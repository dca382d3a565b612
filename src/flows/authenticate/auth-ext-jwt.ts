/**
 * External JWT authentication: the primary method `ext-jwt` (an `AuthMethod`) and the ext-jwt second factor a policy
 * may require (`secondary.requireExtJwtSigner`), both from `Authorization: Bearer <jwt>`.
 * - at most 3 bearer tokens of the request are considered, in order (reference §4); the first that verifies wins
 * - a token's signer: the one whose `kid` is the token header's `kid`, else the one whose `issuer` is exactly its `iss`
 * - verified with jose: signature (RS*, PS*, ES*; `certPem` or the JWKS endpoint's keys), `exp` and `nbf` at the
 *   injected clock, `iss` equal to the signer's issuer, `aud` containing its audience; a `certPem` signer only while
 *   its certificate is valid at that clock
 * - the claim `claimsProperty` (a non-empty string) names the identity: its id, or its `externalId` when the signer
 *   has `useExternalId`; `claimsProperty` is a JSON pointer into the claims as the real controller reads it (`sub` and
 *   `/sub` are the same claim, `/a/b` a nested one: domain/ca/ca-jwt-claims.ts)
 * - primary: the signer must be enabled, and the identity's policy must allow ext-jwt (`primary.extJwt.allowed`) and
 *   this signer (`allowedSigners`, null or empty = any); every refusal is 401 UNAUTHORIZED with the realm
 *   `openziti-primary-ext-jwt` (error missing, invalid or expired; ids and issuers of the enabled signers)
 * - secondary: only the required signer's tokens count, it must be enabled, and the token must name the session's own
 *   identity; while no such token comes with a request the session owes the EXT-JWT auth query and is partial for
 *   that request (realm `openziti-secondary-ext-jwt` on refusal). It is decided per request, never stored.
 * - disabled identities and the session itself: `auth-api-session.ts`
 * The session's `authenticatorId` after an ext-jwt login is the signer's id (no authenticator record exists).
 */
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import type { ExternalJwtSigner, ExternalJwtSignerReads } from '../../domain/ca/ca-jwt-signer-types.ts'
import { claimString } from '../../domain/ca/ca-jwt-claims.ts'
import { allowsSigner, type AuthPolicyRules } from '../../domain/identity/identity-auth-policy.ts'
import type { Identity } from '../../domain/identity/identity-types.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { AuthInput, AuthMethod, PrimaryAuth } from './auth-method.ts'
import type { AuthQuery } from './auth-api-session.ts'
import { EXT_JWT_ALGORITHMS, type SignerKeys } from './auth-ext-jwt-keys.ts'

/** How many bearer tokens of one request are looked at (the real controller's limit). */
export const MAX_BEARER_TOKENS = 3

export const PRIMARY_EXT_JWT_REALM = 'openziti-primary-ext-jwt'
export const SECONDARY_EXT_JWT_REALM = 'openziti-secondary-ext-jwt'

/** Why no token of a request was accepted, as WWW-Authenticate says it. */
export type BearerFailure = 'missing' | 'invalid' | 'expired'

const DESCRIPTIONS: Record<BearerFailure, string> = {
  missing: 'no matching token was provided',
  invalid: 'token is invalid',
  expired: 'token expired',
}

export interface ExtJwtDeps {
  identities: { snapshot(): Pick<IdentityReads, 'identity' | 'identityByExternalId'> }
  signers(): ExternalJwtSignerReads
  keys: SignerKeys
  clock: Clock
  /** The rules of the identity's authentication policy. */
  policyOf(identity: Identity): AuthPolicyRules
  log?: (line: string) => void
}

/** The bearer tokens of an Authorization header value (repeated headers arrive joined by commas), at most three. */
export function bearerTokens(authorization: string | null): string[] {
  if (!authorization) return []
  const out: string[] = []
  for (const part of authorization.split(',')) {
    const m = /^\s*bearer\s+(\S+)\s*$/i.exec(part)
    if (m) out.push(m[1])
    if (out.length === MAX_BEARER_TOKENS) break
  }
  return out
}

/** The WWW-Authenticate challenge of an ext-jwt refusal. */
export function extJwtChallenge(realm: string, failure: BearerFailure, signers: readonly Pick<ExternalJwtSigner, 'id' | 'issuer'>[]): string {
  const ids = signers.map((s) => s.id).join('|')
  const issuers = signers.map((s) => s.issuer).join('|')
  return `Bearer realm="${realm}" error="${failure}" error_description="${DESCRIPTIONS[failure]}" id="${ids}" issuer="${issuers}"`
}

function refusal(realm: string, failure: BearerFailure, signers: readonly ExternalJwtSigner[]): ApiError {
  return new ApiError('UNAUTHORIZED', { headers: { 'www-authenticate': extJwtChallenge(realm, failure, signers) } })
}

/** The signer a token names (by kid, else by iss), or undefined; never throws on a malformed token. */
export function signerOfToken(reads: ExternalJwtSignerReads, token: string): ExternalJwtSigner | undefined {
  try {
    const { kid } = decodeProtectedHeader(token)
    const byKid = typeof kid === 'string' ? reads.jwtSignerByKid(kid) : undefined
    if (byKid) return byKid
    const { iss } = decodeJwt(token)
    return typeof iss === 'string' ? reads.jwtSignerByIssuer(iss) : undefined
  } catch {
    return undefined
  }
}

export type Verified = { ok: true; claims: JWTPayload } | { ok: false; failure: BearerFailure; reason: string }

/** Verifies `token` as `signer`'s (signature, exp/nbf at the clock, iss, aud; a certPem signer within its validity). */
export async function verifyWith(deps: Pick<ExtJwtDeps, 'clock' | 'keys'>, signer: ExternalJwtSigner, token: string): Promise<Verified> {
  const now = deps.clock.now()
  if ((signer.notBefore !== null && now < signer.notBefore) || (signer.notAfter !== null && now > signer.notAfter)) {
    return { ok: false, failure: 'invalid', reason: "the signer's certificate is outside its validity" }
  }
  try {
    const { payload } = await jwtVerify(token, deps.keys.keyOf(signer), {
      issuer: signer.issuer,
      audience: signer.audience,
      currentDate: new Date(now),
      algorithms: EXT_JWT_ALGORITHMS,
    })
    return { ok: true, claims: payload }
  } catch (e) {
    if (e instanceof joseErrors.JWTExpired) return { ok: false, failure: 'expired', reason: e.message }
    return { ok: false, failure: 'invalid', reason: e instanceof Error ? e.message : String(e) }
  }
}

/** The identity the signer's claim names, or undefined. */
function identityOfClaims(deps: ExtJwtDeps, signer: ExternalJwtSigner, claims: JWTPayload): Identity | undefined {
  const value = claimString(claims, signer.claimsProperty)
  if (value === undefined || value === '') return undefined
  const reads = deps.identities.snapshot()
  return signer.useExternalId ? reads.identityByExternalId(value) : reads.identity(value)
}

const RANK: Record<BearerFailure, number> = { missing: 0, invalid: 1, expired: 2 }

/**
 * The first of the request's tokens that `pick` gives a signer for and that verifies and names an identity
 * `accept`s; else the strongest failure seen (expired over invalid over missing). A token `pick` finds no signer for
 * counts as `unmatched`.
 */
async function firstAccepted(
  deps: ExtJwtDeps,
  tokens: readonly string[],
  pick: (token: string) => ExternalJwtSigner | undefined,
  unmatched: BearerFailure,
  accept: (identity: Identity, signer: ExternalJwtSigner) => string | null,
): Promise<{ identity: Identity; signer: ExternalJwtSigner } | { failure: BearerFailure }> {
  let failure: BearerFailure = 'missing'
  const note = (f: BearerFailure, why: string) => {
    if (RANK[f] > RANK[failure]) failure = f
    deps.log?.(`ext-jwt: token refused: ${why}`)
  }
  for (const token of tokens) {
    const signer = pick(token)
    if (!signer) {
      note(unmatched, 'no usable signer matches its kid or iss')
      continue
    }
    const verified = await verifyWith(deps, signer, token)
    if (!verified.ok) {
      note(verified.failure, `signer ${signer.id}: ${verified.reason}`)
      continue
    }
    const identity = identityOfClaims(deps, signer, verified.claims)
    const refused = identity ? accept(identity, signer) : `claim ${signer.claimsProperty} names no identity`
    if (identity && refused === null) return { identity, signer }
    note('invalid', `signer ${signer.id}: ${refused}`)
  }
  return { failure }
}

function enabledSigners(reads: ExternalJwtSignerReads): ExternalJwtSigner[] {
  return reads.jwtSigners.all().filter((s) => s.enabled)
}

/** The primary method `ext-jwt`. */
export function createExtJwtAuthMethod(deps: ExtJwtDeps) {
  return {
    method: 'ext-jwt',
    kind: 'extJwt',
    async authenticate(input: AuthInput): Promise<PrimaryAuth> {
      const reads = deps.signers()
      const found = await firstAccepted(
        deps,
        bearerTokens(input.header('authorization')),
        (token) => {
          const signer = signerOfToken(reads, token)
          return signer?.enabled ? signer : undefined
        },
        'invalid',
        (identity, signer) => {
          const rules = deps.policyOf(identity).primary.extJwt
          if (!rules.allowed) return `the policy of identity ${identity.id} does not allow ext-jwt`
          if (!allowsSigner(rules, signer.id)) return `the policy of identity ${identity.id} does not allow this signer`
          return null
        },
      )
      if ('failure' in found) throw refusal(PRIMARY_EXT_JWT_REALM, found.failure, enabledSigners(reads))
      return { identity: found.identity, authenticator: { id: found.signer.id, identityId: found.identity.id, method: 'ext-jwt' } }
    },
  } as const satisfies AuthMethod
}

/** The ext-jwt auth query of a signer (reference §4 "Ext-JWT secondary query"). */
export function extJwtAuthQuery(signerId: string, signer: ExternalJwtSigner | undefined): AuthQuery {
  return {
    typeId: 'EXT-JWT',
    provider: 'url',
    httpUrl: signer?.externalAuthUrl ?? '',
    clientId: signer?.clientId ?? '',
    scopes: signer?.scopes ?? [],
    id: signerId,
  }
}

/** What a request of a session owes for the ext-jwt second factor: the auth query, and the challenge of a refusal. */
export interface OwedExtJwt {
  query: AuthQuery
  challenge: string
}

/** The ext-jwt second factor, checked on every request of a session whose identity's policy requires it. */
export interface ExtJwtSecondary {
  /**
   * null when the identity's policy requires no ext-jwt signer (answered synchronously: the common case costs no
   * await); else a promise of null when a bearer token of the required signer for this identity comes with the
   * request, or of what the request owes.
   */
  owed(identity: Identity, authorization: string | null): Promise<OwedExtJwt | null> | null
}

export function createExtJwtSecondary(deps: ExtJwtDeps): ExtJwtSecondary {
  return {
    owed(identity, authorization) {
      const signerId = deps.policyOf(identity).secondary.requireExtJwtSigner
      if (signerId === null) return null
      return (async () => {
        const reads = deps.signers()
        const required = reads.jwtSigners.get(signerId)
        const found = await firstAccepted(
          deps,
          bearerTokens(authorization),
          (token) => (required?.enabled && signerOfToken(reads, token) === required ? required : undefined),
          // another signer's token (the primary one, say) is no token of the required signer
          'missing',
          (named) => (named.id === identity.id ? null : `the token names identity ${named.id}, not the session's ${identity.id}`),
        )
        if (!('failure' in found)) return null
        return {
          query: extJwtAuthQuery(signerId, required),
          challenge: extJwtChallenge(SECONDARY_EXT_JWT_REALM, found.failure, [required ?? { id: signerId, issuer: '' }]),
        }
      })()
    },
  }
}
