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
}

const WWW_MISSING =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided"'
const WWW_INVALID = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"'

/** How stale an API session's `lastActivityAt` may be before a request moves it on (its expiry is minutes away). */
const TOUCH_EVERY_MS = 1000

export interface SessionResolver {
  /** The caller's session, or undefined when the header is absent or names no live session. */
  resolve(req: Request): AuthContext | undefined
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
}): SessionResolver {
  const resolve = (req: Request): AuthContext | undefined => {
    const token = req.headers.get('zt-session')
    if (!token) return undefined
    const now = deps.clock.now()
    const tokenHash = hashToken(token)
    const session = deps.sessions.snapshot().byTokenHash.get(tokenHash)
    if (!session || isExpired(session, now, deps.timeoutMs)) return undefined
    const identities = deps.identities.snapshot()
    const identity = identities.identity(session.identityId)
    if (!identity || isDisabled(identity, now)) return undefined
    // the last activity is kept to the second: a session used many times a second is touched once a second
    if (now - session.lastActivityAt >= TOUCH_EVERY_MS) deps.sessions.tell({ type: 'apiSession.touch', tokenHash, at: now })
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
  return {
    resolve,
    timeoutMs: deps.timeoutMs,
    require(req, level) {
      const ctx = resolve(req)
      if (!ctx) {
        throw new ApiError('UNAUTHORIZED', { headers: { 'www-authenticate': req.headers.has('zt-session') ? WWW_INVALID : WWW_MISSING } })
      }
      const owed = deps.extJwtSecondary?.owed(ctx.identity, req.headers.get('authorization'))
      if (!owed) return enforce(ctx, level)
      return owed.then((o) => (o ? enforce({ ...ctx, isPartial: true, extJwtOwed: o.query }, level, o.challenge) : enforce(ctx, level)))
    },
  }
}
