/**
 * Opening an API session after any primary method: the one place that applies the identity's authentication policy
 * and decides the session's second factors (`admitPrimaryLogin`, which the OIDC login shares). TOTP and ext-jwt
 * secondaries change this flow and nothing else.
 * - a disabled identity fails every method: 401 INVALID_AUTH (same answer as a wrong credential)
 * - a primary method the identity's policy does not allow: 401 INVALID_AUTH
 * - `isMfaRequired` is true when the identity has a verified TOTP; `isMfaComplete` starts false
 * - a TOTP auth query is pending while (the identity has a verified TOTP or the policy requires one) and the session
 *   has not completed it; with no query pending the session is fully authenticated
 * - an EXT-JWT auth query is pending on a request (the login's included) of a session whose policy requires an
 *   ext-jwt signer while no valid bearer token of that signer comes with it (`auth-ext-jwt.ts` decides per request)
 * - the session token is returned once; only its SHA-256 is stored
 * - envInfo/sdkInfo given at login are recorded on the identity when they differ from what it has
 * @see controller-behaviour.md §4 "authQueries", "Authentication policies"; edge-api client.yml authQueryDetail
 */
import { ApiError } from '../../errors/api-error.ts'
import { newUuid } from '../../lib/ids.ts'
import type { Clock } from '../../lib/clock.ts'
import { isDisabled, type Identity } from '../../domain/identity/identity-types.ts'
import type { AuthPolicyRules } from '../../domain/identity/identity-auth-policy.ts'
import { hashToken, type ApiSession } from '../../domain/session/session-types.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import { isMfaEnabled } from '../../domain/identity/identity-mfa.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../actors/session-registry/session-registry-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthInput, AuthMethod, AuthPeer, PrimaryAuth } from './auth-method.ts'
import type { ExtJwtSecondary, OwedExtJwt } from './auth-ext-jwt.ts'

/** An outstanding authentication step of a session. @see edge-api client.yml authQueryDetail */
export interface AuthQuery {
  readonly typeId: string
  readonly provider: string
  readonly format?: string
  readonly httpMethod?: string
  readonly httpUrl?: string
  readonly minLength?: number
  readonly maxLength?: number
  /** EXT-JWT: the signer's id, and the client id and scopes to ask its provider for. */
  readonly id?: string
  readonly clientId?: string
  readonly scopes?: readonly string[]
}

/** The real controller's TOTP query (`format` is alphaNumeric there, not numeric). */
export const TOTP_AUTH_QUERY: AuthQuery = {
  typeId: 'MFA',
  provider: 'ziti',
  format: 'alphaNumeric',
  httpMethod: 'POST',
  httpUrl: './authenticate/mfa',
  minLength: 4,
  maxLength: 6,
}

/** The second factors an identity has set up. */
export interface EnrolledFactors {
  readonly totp: boolean
}

/** What the session records about second factors, and what it still owes. */
export interface SessionFactors {
  readonly isMfaRequired: boolean
  readonly isMfaComplete: boolean
  readonly authQueries: readonly AuthQuery[]
}

/**
 * The rules of the stored policy an identity names (`policies`: the identity actor's snapshot).
 * @throws TypeError for an unknown id (identities only name existing policies, and a named one is never deleted).
 */
export function authPolicyOf(identity: Pick<Identity, 'authPolicyId'>, policies: Pick<IdentityReads, 'authPolicy'>): AuthPolicyRules {
  const policy = policies.authPolicy(identity.authPolicyId)
  if (!policy) throw new TypeError(`identity names the unknown auth policy '${identity.authPolicyId}'`)
  return policy
}

/** A TOTP counts once its enrollment is verified. */
export function enrolledFactorsOf(identity: Identity, identities: Pick<IdentityReads, 'mfaOf'>): EnrolledFactors {
  return { totp: isMfaEnabled(identities.mfaOf(identity.id)) }
}

/** 401 INVALID_AUTH unless `policy` allows the primary method `kind`. */
export function decidePrimaryAllowed(policy: AuthPolicyRules, kind: AuthMethod['kind']): void {
  if (!policy.primary[kind].allowed) throw ApiError.invalidAuth()
}

/** Whether a login must give a TOTP code: the identity has a verified TOTP, or its policy requires one. */
export function decideTotpRequired(policy: AuthPolicyRules, enrolled: EnrolledFactors): boolean {
  return enrolled.totp || policy.secondary.requireTotp
}

/** The second-factor state of a session, from the policy, what the identity has enrolled and what it has completed. */
export function decideSessionFactors(
  policy: AuthPolicyRules,
  enrolled: EnrolledFactors,
  completed: { totp: boolean },
  extJwtOwed: AuthQuery | null = null,
): SessionFactors {
  const owesTotp = decideTotpRequired(policy, enrolled) && !completed.totp
  return {
    isMfaRequired: enrolled.totp,
    isMfaComplete: completed.totp,
    authQueries: [...(owesTotp ? [TOTP_AUTH_QUERY] : []), ...(extJwtOwed ? [extJwtOwed] : [])],
  }
}

/**
 * The auth queries a session still owes (what `GET /current-api-session` shows; one or more make it partial). What the
 * identity had enrolled is what it had at login (`isMfaRequired`), as the real controller keeps it.
 */
export function pendingAuthQueries(
  session: Pick<ApiSession, 'isMfaRequired' | 'isMfaComplete'>,
  identity: Identity,
  policies: Pick<IdentityReads, 'authPolicy'>,
  extJwtOwed: AuthQuery | null = null,
): readonly AuthQuery[] {
  return decideSessionFactors(authPolicyOf(identity, policies), { totp: session.isMfaRequired }, { totp: session.isMfaComplete }, extJwtOwed).authQueries
}

/** What admitting a primary login needs. */
export interface AdmitLoginDeps {
  identities: IdentityActor
  clock: Clock
  /** The ext-jwt second factor (absent: none is ever required). */
  extJwtSecondary?: ExtJwtSecondary
}

export interface ApiSessionFlowDeps extends AdmitLoginDeps {
  sessions: SessionRegistryActor
}

/** A primary login the identity's state and policy admit, and the second factors it owes. */
export interface AdmittedLogin {
  identity: Identity
  policy: AuthPolicyRules
  enrolled: EnrolledFactors
  /** The factors as a fresh session holds them (nothing completed yet). */
  factors: SessionFactors
  /** The identity must give a TOTP code (`decideTotpRequired`). */
  totpRequired: boolean
  /** The ext-jwt signer the policy requires as a second factor, or null. */
  requiredExtJwtSigner: string | null
  /** What the login request still owes that signer: null when none is required or its token came with the request. */
  extJwtOwed: OwedExtJwt | null
}

/**
 * The one admission of a primary login, whatever opens the session afterwards (`openApiSession`, an OIDC login):
 * the identity must not be disabled and its policy must allow the method; the second factors are decided from the
 * policy, the identity's enrolled TOTP and the request's Authorization header (the ext-jwt second factor).
 * @throws ApiError 401 INVALID_AUTH for a disabled identity or a method its policy does not allow
 */
export async function admitPrimaryLogin(
  deps: AdmitLoginDeps,
  method: Pick<AuthMethod, 'kind'>,
  primary: PrimaryAuth,
  authorization: string | null,
): Promise<AdmittedLogin> {
  const { identity } = primary
  if (isDisabled(identity, deps.clock.now())) throw ApiError.invalidAuth()
  const policy = authPolicyOf(identity, deps.identities.snapshot())
  decidePrimaryAllowed(policy, method.kind)
  const extJwtOwed = (await deps.extJwtSecondary?.owed(identity, authorization)) ?? null
  const enrolled = enrolledFactorsOf(identity, deps.identities.snapshot())
  return {
    identity,
    policy,
    enrolled,
    factors: decideSessionFactors(policy, enrolled, { totp: false }, extJwtOwed?.query ?? null),
    totpRequired: decideTotpRequired(policy, enrolled),
    requiredExtJwtSigner: policy.secondary.requireExtJwtSigner,
    extJwtOwed,
  }
}

/** Records the envInfo/sdkInfo a login gave on its identity, when they differ from what it has. */
export async function recordClientInfo(
  deps: Pick<AdmitLoginDeps, 'identities'>,
  identity: Identity,
  input: Pick<AuthInput, 'envInfo' | 'sdkInfo'>,
  change: ChangeContext,
): Promise<void> {
  if (hasNews(identity.envInfo, input.envInfo) || hasNews(identity.sdkInfo, input.sdkInfo)) {
    await deps.identities.ask({ type: 'identity.recordClientInfo', id: identity.id, envInfo: input.envInfo, sdkInfo: input.sdkInfo, change })
  }
}

export interface OpenedApiSession {
  session: ApiSession
  /** The bearer token, shown to the caller once. */
  token: string
  authQueries: readonly AuthQuery[]
}

/**
 * Opens the API session of a caller that `method` authenticated as `primary`. `change` is the request's context; the
 * session is authored by the identity that logged in.
 */
export async function openApiSession(
  deps: ApiSessionFlowDeps,
  method: Pick<AuthMethod, 'kind'>,
  primary: PrimaryAuth,
  input: Pick<AuthInput, 'configTypes' | 'envInfo' | 'sdkInfo'> & Partial<Pick<AuthInput, 'header'>>,
  peer: AuthPeer,
  change: ChangeContext,
): Promise<OpenedApiSession> {
  const { identity, factors } = await admitPrimaryLogin(deps, method, primary, input.header?.('authorization') ?? null)

  const token = newUuid()
  const by: ChangeContext = { ...change, author: identity.id }
  const { session } = await deps.sessions.ask({
    type: 'apiSession.create',
    session: {
      tokenHash: hashToken(token),
      identityId: identity.id,
      authenticatorId: primary.authenticator.id,
      configTypes: [...(input.configTypes ?? [])],
      ipAddress: peer.remoteAddress,
      isMfaRequired: factors.isMfaRequired,
      isMfaComplete: factors.isMfaComplete,
      isCertExtendable: primary.isCertExtendable ?? false,
      tags: {},
    },
    // kept for the edge routers, which look the SDK's hello up by it (sealed at rest, and in a cluster's log)
    token,
    change: by,
  })
  await recordClientInfo(deps, identity, input, by)
  return { session, token, authQueries: factors.authQueries }
}

function hasNews(current: object, given: object | undefined): boolean {
  return given !== undefined && JSON.stringify(current) !== JSON.stringify(given)
}
