/**
 * Resolves the `zt-session` header to an API session and its identity, and enforces a route's access level.
 * Every refusal is 401 UNAUTHORIZED with a WWW-Authenticate header (the edge APIs never answer 403).
 */
import { ApiError } from '../errors/api-error.ts'
import type { Clock } from '../lib/clock.ts'
import { hashToken, isExpired, type ApiSession } from '../domain/session/session-types.ts'
import { isAdminIdentity, isDisabled, type Identity } from '../domain/identity/identity-types.ts'
import type { IdentityActor } from '../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../actors/session-registry/session-registry-actor.ts'
import type { ApiName } from './http-route.ts'
import { pendingAuthQueries } from '../flows/authenticate/auth-api-session.ts'

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
}

const WWW_MISSING =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided"'
const WWW_INVALID = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"'

export interface SessionResolver {
  /** The caller's session, or undefined when the header is absent or names no live session. */
  resolve(req: Request): AuthContext | undefined
  /** Resolves and enforces `level`; throws 401 UNAUTHORIZED. */
  require(req: Request, level: Exclude<AccessLevel, 'public'>): AuthContext
  timeoutMs: number
}

export function createSessionResolver(deps: {
  identities: IdentityActor
  sessions: SessionRegistryActor
  clock: Clock
  timeoutMs: number
}): SessionResolver {
  const resolve = (req: Request): AuthContext | undefined => {
    const token = req.headers.get('zt-session')
    if (!token) return undefined
    const now = deps.clock.now()
    const tokenHash = hashToken(token)
    const session = deps.sessions.snapshot().byTokenHash.get(tokenHash)
    if (!session || isExpired(session, now, deps.timeoutMs)) return undefined
    const identity = deps.identities.snapshot().identity(session.identityId)
    if (!identity || isDisabled(identity, now)) return undefined
    deps.sessions.tell({ type: 'apiSession.touch', tokenHash, at: now })
    // the touch replaces the record (at once when the mailbox is idle): hand out the marked one
    const current = deps.sessions.snapshot().byTokenHash.get(tokenHash) ?? session
    return { session: current, identity, isPartial: pendingAuthQueries(current, identity).length > 0, isAdmin: isAdminIdentity(identity) }
  }
  return {
    resolve,
    timeoutMs: deps.timeoutMs,
    require(req, level) {
      const ctx = resolve(req)
      if (!ctx) {
        throw new ApiError('UNAUTHORIZED', { headers: { 'www-authenticate': req.headers.has('zt-session') ? WWW_INVALID : WWW_MISSING } })
      }
      if (level !== 'partial' && ctx.isPartial) throw ApiError.unauthorized()
      if (level === 'admin' && !ctx.isAdmin) throw ApiError.unauthorized()
      return ctx
    },
  }
}
