/**
 * Resolves the `zt-session` header to an API session and its identity, and enforces a route's access level.
 * Every refusal is 401 UNAUTHORIZED with a WWW-Authenticate header (the edge APIs never answer 403).
 * A session whose policy requires an ext-jwt signer is partial on each request that comes without a valid bearer
 * token of that signer (refused with the `openziti-secondary-ext-jwt` challenge where a full session is needed).
 */
import { ApiError } from '../errors/api-error.ts'
import type { Clock } from '../lib/clock.ts'
import { hashToken, isExpired, type ApiSession } from '../domain/session/session-types.ts'
import { isAdminIdentity, isDisabled, type Identity } from '../domain/identity/identity-types.ts'
import type { IdentityActor } from '../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../actors/session-registry/session-registry-actor.ts'
import type { ApiName } from './http-route.ts'
import { pendingAuthQueries, type AuthQuery } from '../flows/authenticate/auth-api-session.ts'
import type { ExtJwtSecondary } from '../flows/authenticate/auth-ext-jwt.ts'
import type { BearerCheck, BearerFailure } from '../flows/oidc/oidc-bearer.ts'
import type { TokenClaims } from '../flows/oidc/oidc-tokens.ts'
import { peerOf } from './peer-cert.ts'

/** Who may call a route: anyone, a partially authenticated session, a full session, or an admin's full session. */
export type AccessLevel = 'public' | 'partial' | 'session' | 'admin'

/**
 * The only API routes anyone may call without a session: `METHOD path` (the path below the API prefix) on both APIs,
 * or `api METHOD path` on that API only. Every other route is authorized before its body or query is read. The app
 * refuses to start with a route that declares itself public without being listed here. Outside the API prefixes,
 * `GET /version` and `/.well-known/est/cacerts` are public too (the app's root routes).
 */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  'POST /authenticate',
  // an SDK reads the signers it may log in with before it has a session; the Management API's list is for admins
  'client GET /external-jwt-signers',
  'client POST /enroll',
  'client POST /enroll/ott',
  'client POST /enroll/updb',
  'client POST /enroll/erott',
  // a router proves itself with its current client certificate, not a session
  'client POST /enroll/extend/router',
  'client POST /enroll/ottca',
  'client POST /enroll/ca',
  // the external JWT in Authorization is the enrollment's credential, not a session
  'client POST /enroll/token',
  // an enrolling client checks the network it joins before it has any credential
  'client GET /enroll/jwks',
  'client POST /enroll/challenge',
  // the network enrollment JWT and the API's addresses: how a new client learns the controller
  'GET /network-jwts',
  'client GET /protocols',
  'GET /',
  'GET /version',
  'GET /enumerated-capabilities',
  'GET /specs',
  'GET /specs/:id',
  'GET /specs/:id/spec',
])

/** Whether `METHOD path` on `api` is one of the PUBLIC_ROUTES. */
export function isPublicRoute(api: ApiName, method: string, path: string): boolean {
  return PUBLIC_ROUTES.has(`${method} ${path}`) || PUBLIC_ROUTES.has(`${api} ${method} ${path}`)
}

export interface AuthContext {
  session: ApiSession
  identity: Identity
  isPartial: boolean
  isAdmin: boolean
  /** The EXT-JWT auth query this request owes (no valid bearer of the required signer came with it); else absent. */
  extJwtOwed?: AuthQuery
  /**
   * Set when an OIDC access token opened the session: the token and its claims. `session` is then built from the
   * claims for this request (id = `z_asid`) and stored nowhere.
   */
  bearer?: { readonly token: string; readonly claims: TokenClaims }
}

const WWW_MISSING =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided"'
/** With OIDC on, a missing token is missing in both realms (the real controller's v2 answer). */
const WWW_MISSING_BOTH = `${WWW_MISSING},Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"`
const WWW_INVALID = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"'
const WWW_BEARER: Record<Exclude<BearerFailure, 'missing'>, string> = {
  invalid: 'Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"',
  expired: 'Bearer realm="openziti-oidc" error="expired" error_description="token is expired"',
}

/** The API session an access token stands for, for one request (never stored). */
export function bearerSession(claims: TokenClaims, now: number): ApiSession {
  const issuedAt = claims.iat * 1000
  return {
    id: claims.apiSessionId,
    tokenHash: '',
    identityId: claims.identityId,
    authenticatorId: claims.authenticatorId,
    configTypes: claims.configTypeIds,
    ipAddress: claims.remoteAddress,
    isMfaRequired: false,
    isMfaComplete: claims.amr.includes('totp'),
    mfaCompletedAt: null,
    isCertExtendable: claims.isCertExtendable,
    tags: {},
    createdAt: issuedAt,
    updatedAt: issuedAt,
    lastActivityAt: now,
  }
}

/** How stale an API session's `lastActivityAt` may be before a request moves it on (its expiry is minutes away). */
const TOUCH_EVERY_MS = 1000

export interface SessionResolver {
  /** The caller's session, or undefined when no header names a live session; a promise only for an unseen bearer token. */
  resolve(req: Request): AuthContext | undefined | Promise<AuthContext | undefined>
  /** Resolves and enforces `level`; throws 401 UNAUTHORIZED. Synchronous unless an ext-jwt second factor is due. */
  require(req: Request, level: Exclude<AccessLevel, 'public'>): AuthContext | Promise<AuthContext>
  timeoutMs: number
}

export function createSessionResolver(deps: {
  identities: IdentityActor
  sessions: SessionRegistryActor
  clock: Clock
  timeoutMs: number
  extJwtSecondary?: ExtJwtSecondary
  /** OIDC access tokens (absent: OIDC is off, and `Authorization` opens no session). */
  bearer?: BearerCheck
}): SessionResolver {
  /** The context of a bearer's claims, or undefined when its identity is gone or disabled. */
  const bearerContext = (token: string, claims: TokenClaims): AuthContext | undefined => {
    const now = deps.clock.now()
    const identities = deps.identities.snapshot()
    const identity = identities.identity(claims.identityId)
    if (!identity || isDisabled(identity, now)) return undefined
    const session = bearerSession(claims, now)
    const isPartial = pendingAuthQueries(session, identity, identities).length > 0
    return { session, identity, isPartial, isAdmin: isAdminIdentity(identity), bearer: { token, claims } }
  }
  type Resolved = AuthContext | { challenge: string }
  const withBearer = (req: Request): Resolved | Promise<Resolved> => {
    const authorization = req.headers.get('authorization')
    // the peer's certificate is read only for a request that carries a bearer (its z_cfs binding)
    const leaf = authorization !== null ? peerOf(req).certChainDer[0] : undefined
    const outcome = deps.bearer!.check(authorization, leaf)
    const settle = (o: Awaited<typeof outcome>): Resolved => {
      if ('failure' in o) return { challenge: o.failure === 'missing' ? WWW_MISSING_BOTH : WWW_BEARER[o.failure] }
      return bearerContext(o.token, o.claims) ?? { challenge: WWW_BEARER.invalid }
    }
    return outcome instanceof Promise ? outcome.then(settle) : settle(outcome)
  }
  /** The session of the request, or the challenge of its refusal. */
  const resolveOrChallenge = (req: Request): Resolved | Promise<Resolved> => {
    if (!req.headers.has('zt-session') && deps.bearer) return withBearer(req)
    return resolveLegacy(req) ?? { challenge: req.headers.has('zt-session') ? WWW_INVALID : WWW_MISSING }
  }
  const resolveLegacy = (req: Request): AuthContext | undefined => {
    const token = req.headers.get('zt-session')
    if (!token) return undefined
    const now = deps.clock.now()
    const tokenHash = hashToken(token)
    const sessions = deps.sessions.snapshot()
    const session = sessions.byTokenHash.get(tokenHash)
    if (!session) return undefined
    const lastActivityAt = sessions.activityOf(session)
    if (isExpired(session, now, deps.timeoutMs, lastActivityAt)) return undefined
    const identities = deps.identities.snapshot()
    const identity = identities.identity(session.identityId)
    if (!identity || isDisabled(identity, now)) return undefined
    // the last activity is kept to the second: a session used many times a second is touched once a second
    if (now - lastActivityAt >= TOUCH_EVERY_MS) deps.sessions.tell({ type: 'apiSession.touch', tokenHash, at: now })
    // the touch replaces the record (at once when the mailbox is idle): hand out the marked one
    const current = deps.sessions.snapshot().byTokenHash.get(tokenHash) ?? session
    // partial while a second factor is owed: an enrolled TOTP not yet answered, or one the policy requires
    const isPartial = pendingAuthQueries(current, identity, identities).length > 0
    return { session: current, identity, isPartial, isAdmin: isAdminIdentity(identity) }
  }
  const enforce = (ctx: AuthContext, level: Exclude<AccessLevel, 'public'>, challenge?: string): AuthContext => {
    if (level !== 'partial' && ctx.isPartial) throw challenge ? new ApiError('UNAUTHORIZED', { headers: { 'www-authenticate': challenge } }) : ApiError.unauthorized()
    if (level === 'admin' && !ctx.isAdmin) throw ApiError.unauthorized()
    return ctx
  }
  const asContext = (r: Resolved): AuthContext | undefined => ('challenge' in r ? undefined : r)
  const required = (req: Request, r: Resolved, level: Exclude<AccessLevel, 'public'>): AuthContext | Promise<AuthContext> => {
    if ('challenge' in r) throw new ApiError('UNAUTHORIZED', { headers: { 'www-authenticate': r.challenge } })
    const ctx = r
    const owed = deps.extJwtSecondary?.owed(ctx.identity, req.headers.get('authorization'))
    if (!owed) return enforce(ctx, level)
    return owed.then((o) => (o ? enforce({ ...ctx, isPartial: true, extJwtOwed: o.query }, level, o.challenge) : enforce(ctx, level)))
  }
  return {
    resolve(req) {
      const r = resolveOrChallenge(req)
      return r instanceof Promise ? r.then(asContext) : asContext(r)
    },
    timeoutMs: deps.timeoutMs,
    require(req, level) {
      const r = resolveOrChallenge(req)
      return r instanceof Promise ? r.then((x) => required(req, x, level)) : required(req, r, level)
    },
  }
}
