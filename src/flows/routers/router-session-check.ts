/**
 * The service session behind a request an edge router makes for an SDK (create, update or health-check a
 * terminator): the SDK's two tokens, relayed by its router, checked as the real controller's loadSession and
 * checkSessionType do (ziti controller/handler_edge_ctrl/common.go). Rules:
 * - an API session token that starts with `ey` is an OIDC access token: it must verify as one of ours (signature,
 *   expiry, type `a`) and not be revoked (by jti, identity or API session); the service token must verify too, name
 *   the access token's API session, not be revoked (by jti or identity) and be for the access token's identity; its
 *   claims are the session (nothing is stored for an OIDC sign-in). Every refusal here is an internal error (retry
 *   default), as in the real controller;
 * - otherwise the API session is a stored one found by the SHA-256 of its token (unknown, expired, or its identity
 *   gone or disabled: invalid api session); the service token must be a JWT of ours for that API session, not
 *   revoked (invalid session), a stored session's (`z_leg`; else internal: "the session token is not durable"), and
 *   its session (`jti`) must be stored (invalid session). A service token that is not a JWT is no session of ours
 *   (invalid session);
 * - then the session must be of the wanted type (incorrect session type).
 * A token longer than 64 KiB is no token of ours (invalid api session or invalid session, unread; edgeplane's bound,
 * the real controller has none). The tokens are never logged.
 */
import type { PolicyType } from '../../domain/policy/policy-types.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import { isDisabled } from '../../domain/identity/identity-types.ts'
import type { SessionReads } from '../../domain/session/session-reads.ts'
import { hashToken, isExpired } from '../../domain/session/session-types.ts'
import { RouterRequestErrors, type RouterRequestError } from '../../domain/router/router-request-errors.ts'
import type { SessionTokens } from '../sessions/session-token.ts'
import type { OidcTokens } from '../oidc/oidc-tokens.ts'

/** The session a router's request was made with. */
export interface RouterSession {
  sessionId: string
  apiSessionId: string
  identityId: string
  serviceId: string
  type: PolicyType
}

export type RouterSessionOutcome = { ok: true; session: RouterSession } | { ok: false; error: RouterRequestError }

export interface RouterSessionDeps {
  sessions: { snapshot(): SessionReads }
  identities: { snapshot(): IdentityReads }
  /** Service session tokens (flows/sessions/session-token.ts). */
  serviceTokens: Pick<SessionTokens, 'verify'>
  /** OIDC access tokens; absent when OIDC is off (an access token is then refused). */
  accessTokens?: Pick<OidcTokens, 'verify'>
  /** How long an API session lives without activity. */
  timeoutMs: number
  now(): number
}

/** The longest token read (session JWTs are a few KiB). */
export const MAX_TOKEN_CHARS = 64 * 1024

/** The JWT prefix the real controller tells OIDC tokens by (base64url of `{"`). */
const JWT_PREFIX = 'ey'

export type RouterSessionCheck = (tokens: { sessionToken: string; apiSessionToken: string }, type: PolicyType) => Promise<RouterSessionOutcome>

export function createRouterSessionCheck(deps: RouterSessionDeps): RouterSessionCheck {
  const refuse = (error: RouterRequestError): RouterSessionOutcome => ({ ok: false, error })
  const typed = (session: RouterSession, type: PolicyType): RouterSessionOutcome =>
    session.type === type ? { ok: true, session } : refuse(RouterRequestErrors.wrongSessionType())

  const fromOidc = async (sessionToken: string, apiSessionToken: string): Promise<RouterSessionOutcome> => {
    if (!deps.accessTokens) return refuse(RouterRequestErrors.internal('OIDC access tokens are not accepted: OIDC is off'))
    const access = await deps.accessTokens.verify(apiSessionToken, 'a')
    if (typeof access === 'string') return refuse(RouterRequestErrors.internal(`access token is ${access}`))
    const now = deps.now()
    const identities = deps.identities.snapshot()
    if (identities.isTokenRevoked({ jti: access.jti, sub: access.identityId, iat: access.iat, apiSessionId: access.apiSessionId }, now)) {
      return refuse(RouterRequestErrors.internal('access token has been revoked'))
    }
    const service = await deps.serviceTokens.verify(sessionToken, now)
    if (!service || service.apiSessionId !== access.apiSessionId) return refuse(RouterRequestErrors.internal('service access token is invalid'))
    if (identities.isTokenRevoked({ jti: service.sessionId, sub: service.identityId, iat: service.iat }, now)) {
      return refuse(RouterRequestErrors.internal('service access token has been revoked'))
    }
    if (service.identityId !== access.identityId) return refuse(RouterRequestErrors.internal('access and service tokens do not match'))
    if (!identities.identity(access.identityId)) return refuse(RouterRequestErrors.internal('the identity of the access token is gone'))
    const { sessionId, apiSessionId, identityId, serviceId, type } = service
    return { ok: true, session: { sessionId, apiSessionId, identityId, serviceId, type } }
  }

  const fromStore = async (sessionToken: string, apiSessionToken: string): Promise<RouterSessionOutcome> => {
    const now = deps.now()
    const sessions = deps.sessions.snapshot()
    const api = apiSessionToken === '' ? undefined : sessions.byTokenHash.get(hashToken(apiSessionToken))
    const identity = api ? deps.identities.snapshot().identity(api.identityId) : undefined
    if (!api || isExpired(api, now, deps.timeoutMs, sessions.activityOf(api)) || !identity || isDisabled(identity, now)) {
      return refuse(RouterRequestErrors.invalidApiSession())
    }
    if (!sessionToken.startsWith(JWT_PREFIX)) return refuse(RouterRequestErrors.invalidSession())
    const claims = await deps.serviceTokens.verify(sessionToken, now)
    if (!claims || claims.apiSessionId !== api.id) return refuse(RouterRequestErrors.invalidSession())
    if (deps.identities.snapshot().isTokenRevoked({ jti: claims.sessionId, sub: claims.identityId, iat: claims.iat }, now)) {
      return refuse(RouterRequestErrors.invalidSession())
    }
    if (!claims.legacy) return refuse(RouterRequestErrors.internal('legacy api session detected, but session token is not durable'))
    // the stored session, read after the await: one removed meanwhile (logout, expiry, lost access) is not found
    const stored = deps.sessions.snapshot().serviceSessions.get(claims.sessionId)
    if (!stored || stored.apiSessionId !== api.id) return refuse(RouterRequestErrors.invalidSession())
    return { ok: true, session: { sessionId: stored.id, apiSessionId: api.id, identityId: stored.identityId, serviceId: stored.serviceId, type: stored.type } }
  }

  return async ({ sessionToken, apiSessionToken }, type) => {
    if (apiSessionToken.length > MAX_TOKEN_CHARS) return refuse(RouterRequestErrors.invalidApiSession())
    if (sessionToken.length > MAX_TOKEN_CHARS) return refuse(RouterRequestErrors.invalidSession())
    const outcome = apiSessionToken.startsWith(JWT_PREFIX) ? await fromOidc(sessionToken, apiSessionToken) : await fromStore(sessionToken, apiSessionToken)
    return outcome.ok ? typed(outcome.session, type) : outcome
  }
}
