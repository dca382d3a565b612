/**
 * The Elysia application: route mounting from RouteDefs, the request pipeline of every route, the error mapper,
 * path aliases (bare paths and /edge/v1 go to the Client API; /fabric/v1 is the fabric API), CORS and the common
 * response headers.
 * The pipeline of a route, in this order (Elysia itself parses and validates nothing):
 * 1. access: the session is resolved and the route's access level enforced (401 before anything is read);
 * 2. query: parsed from the URL and checked against the route's query schema;
 * 3. body: only for routes with a body schema; JSON within the depth and size bounds of http-json.ts, members the
 *    schema does not know dropped, then checked (http-validate.ts); a route that consumes text/plain gets the raw
 *    text (the listener bounds its size);
 * 4. the handler, with the request id that its error answers, its writes' change context and its log line share.
 * Between 1 and 2, a write (any verb but GET, authentication aside: it has its own window) must be admitted by the
 * write queue (http-write-queue.ts), else 429 SERVER_TOO_MANY_REQUESTS. Every answer is recorded in the HTTP metrics
 * under its route template (http-metrics.ts).
 */
import { Elysia } from 'elysia'
import type { TSchema } from '@sinclair/typebox'
import { ApiError } from '../errors/api-error.ts'
import { newShortId } from '../lib/ids.ts'
import { renderApiError, renderThrown } from './http-errors.ts'
import { parseJsonBody } from './http-json.ts'
import { validatorOf } from './http-validate.ts'
import { API_PREFIX, type ApiName, type RouteDef } from './http-route.ts'
import { isPublicRoute, type AuthContext, type SessionResolver } from './http-auth.ts'
import { attachPeer } from './peer-cert.ts'
import type { Answer, IncomingCall } from './http-call.ts'
import type { HttpMetrics, RequestRecorder } from './http-metrics.ts'
import type { WriteQueue } from './http-write-queue.ts'
import { OIDC_PREFIX } from './oidc/oidc-app.ts'

export interface AppDeps {
  resolver: SessionResolver
  version: string
  instanceId: string
  clock: { now(): number }
  /** Where the log lines of unhandled errors go. */
  log?: (line: string) => void
  /** Answers served outside the two API prefixes (version, est/cacerts), by exact path. */
  rootRoutes: Record<string, (req: Request, requestId: string) => Response | Promise<Response>>
  /** Where answered requests are counted and timed (absent: nowhere). */
  metrics?: HttpMetrics
  /** The bound on write requests in progress (absent: none). */
  writeQueue?: WriteQueue
  /** The `/oidc` tree (http/oidc/oidc-app.ts), any method; absent when OIDC is off (its paths then 404 as unknown). */
  oidc?: (request: Request, requestId: string) => Promise<Response>
  /**
   * Send `server-timing: app;dur=<ms>` (the time spent in the app) on every answer: the `serverTiming` setting, off
   * by default, since it hands every client, anonymous ones too, the server's own timing of a password check.
   */
  serverTiming?: boolean
}

const CORS_HEADERS = {
  'access-control-allow-headers': 'content-type, accept, authorization, zt-session, mfa-validation-code',
  'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
  'access-control-allow-credentials': 'true',
}

/** Compiles `/identities/:id` into a matcher for the 405 check. */
function pathMatcher(path: string): RegExp {
  return new RegExp('^' + path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+') + '/?$')
}

export interface App {
  /** Answers a request as the listener read it. */
  handle(call: IncomingCall): Promise<Answer>
}

const requestIds = new WeakMap<Request, string>()
/** The recorder of the route that served a request (set by the route's pipeline). */
const recorders = new WeakMap<Request, RequestRecorder>()

/** The request id the app gave a request (every request inside the app has one). */
function requestIdOf(req: Request): string {
  return requestIds.get(req) ?? newShortId()
}

/** The query of a URL as Elysia would give it: one string per parameter, an array for a repeated one. */
function queryOf(url: string): Record<string, string | string[]> {
  const q = url.indexOf('?')
  const out: Record<string, string | string[]> = {}
  if (q < 0) return out
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) {
    const had = Object.hasOwn(out, k) ? out[k] : undefined
    const next = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v]
    Object.defineProperty(out, k, { value: next, enumerable: true, writable: true, configurable: true })
  }
  return out
}

/**
 * A route's body: JSON within the bounds, other types as text, nothing as `{}`. No content type counts as JSON,
 * or as text on a route that says so (`untypedBodyIsText`).
 */
async function bodyOf(req: Request, untypedIsText: boolean): Promise<unknown> {
  const text = await req.text()
  if (text.trim() === '') return {}
  const type = (req.headers.get('content-type') ?? '').toLowerCase()
  return type.includes('json') || (type === '' && !untypedIsText) ? parseJsonBody(text) : text
}

/** A check of a route's query or body, compiled on the route's first request (none without a schema). */
function lazyCheck(schema: TSchema | undefined, where: 'body' | 'query'): (value: unknown) => unknown {
  if (!schema) return (value) => value
  let check: ((value: unknown) => unknown) | undefined
  return (value) => (check ??= validatorOf(schema, where))(value)
}

export function buildApp(routes: readonly RouteDef[], deps: AppDeps): App {
  const known: { re: RegExp; method: string }[] = []
  const sessionHeaders = (auth: AuthContext): Record<string, string> => {
    const expiresAt = auth.session.lastActivityAt + deps.resolver.timeoutMs
    return {
      'expiration-seconds': String(Math.floor(deps.resolver.timeoutMs / 1000)),
      'expires-at': new Date(expiresAt).toISOString(),
    }
  }

  const thrownAt = (request: Request, requestId: string) => ({ method: request.method, path: new URL(request.url).pathname, requestId })
  const app = new Elysia({ aot: true, normalize: false }).onError(({ code, error, request }) => {
    const requestId = requestIdOf(request)
    if (error instanceof ApiError) return renderApiError(error, requestId, { textValues: isFabricPath(new URL(request.url).pathname) })
    if (code === 'NOT_FOUND') {
      const path = new URL(request.url).pathname
      if (known.some((k) => k.re.test(path) && k.method !== request.method)) return renderApiError(new ApiError('METHOD_NOT_ALLOWED'), requestId)
      return renderApiError(new ApiError('NOT_FOUND'), requestId)
    }
    return renderThrown(error, thrownAt(request, requestId), deps.log)
  })

  /** The pipeline of one route (see the header): access, query, body, handler. */
  type Checks = { query(v: unknown): unknown; body(v: unknown): unknown }
  type Served = { checks: Checks; isWrite: boolean; recorder?: RequestRecorder }
  const serve = async (r: RouteDef, api: ApiName, served: Served, request: Request, params: Record<string, string>) => {
    if (served.recorder) recorders.set(request, served.recorder)
    // awaited only when a promise (an unseen bearer token, an ext-jwt second factor): most requests resolve at once
    const resolved = r.access === 'public' ? deps.resolver.resolve(request) : deps.resolver.require(request, r.access)
    const auth = resolved instanceof Promise ? await resolved : resolved
    const queued = served.isWrite && deps.writeQueue !== undefined
    if (queued && !deps.writeQueue!.tryEnter()) throw new ApiError('SERVER_TOO_MANY_REQUESTS')
    try {
      const { checks } = served
      const query = checks.query(queryOf(request.url))
      const body = r.body ? checks.body(r.consumes === 'text/plain' ? await request.text() : await bodyOf(request, r.untypedBodyIsText === true)) : undefined
      const res = await r.handle({ request, body, query, params, auth: auth as AuthContext, api, requestId: requestIdOf(request) })
      if (auth) for (const [k, v] of Object.entries(sessionHeaders(auth))) res.headers.set(k, v)
      return res
    } finally {
      if (queued) deps.writeQueue!.leave()
    }
  }

  for (const r of routes) {
    const checks: Checks = { query: lazyCheck(r.query, 'query'), body: lazyCheck(r.body, 'body') }
    const isWrite = r.method !== 'GET' && !r.path.startsWith('/authenticate')
    for (const api of r.apis) {
      if ((r.access === 'public') !== isPublicRoute(api, r.method, r.path)) {
        throw new TypeError(`${api} ${r.method} ${r.path}: access '${r.access}' disagrees with PUBLIC_ROUTES (http-auth.ts)`)
      }
      const full = API_PREFIX[api] + r.path
      known.push({ re: pathMatcher(full), method: r.method })
      const served: Served = { checks, isWrite, recorder: deps.metrics?.route(r.method, full) }
      // the handler reads only request and params, so Elysia neither parses nor validates anything
      app.route(r.method, full, (ctx: { request: Request; params: Record<string, string> }) => serve(r, api, served, ctx.request, ctx.params))
    }
  }
  app.compile()

  /** The headers of every answer that do not depend on it. */
  const staticHeaders = ['server', `edgeplane/${deps.version}`, 'ziti-instance-id', deps.instanceId]
  const corsHeaders = Object.entries(CORS_HEADERS).flat()
  const serverTiming = deps.serverTiming === true
  /**
   * The common headers; `server-timing` carries the time spent in the app when the setting asks for it (benchmarks
   * turn it on and read it). CORS headers go only to a request that names its `Origin` (a browser's cross-origin
   * request; SDKs send none). The answer is recorded under the route that served `req` (or as `other`).
   */
  const common = (response: Response, origin: string | null, startedAt: number, req?: Request): Answer => {
    const ms = performance.now() - startedAt
    const recorder = req ? recorders.get(req) : undefined
    ;(recorder ?? deps.metrics?.other)?.(response.status, ms)
    // (Number#toFixed costs more than the rest of this function)
    const headers = serverTiming ? ['server-timing', `app;dur=${Math.round(ms * 1000) / 1000}`, ...staticHeaders] : [...staticHeaders]
    if (origin) headers.push('access-control-allow-origin', origin, 'vary', 'Origin', ...corsHeaders)
    return { response, headers }
  }

  return {
    async handle(call: IncomingCall): Promise<Answer> {
      const startedAt = performance.now()
      const origin = call.headers.get('origin')
      if (call.method === 'OPTIONS') return common(new Response(null, { status: 200 }), origin, startedAt)
      // the one URL parse (it also resolves dot segments and percent-encoding) and the one Request of the call, made
      // for the aliased path
      const url = new URL(call.target, call.origin)
      const root =
        deps.oidc && (url.pathname === OIDC_PREFIX || url.pathname.startsWith(`${OIDC_PREFIX}/`))
          ? deps.oidc
          : (call.method === 'GET' || call.method === 'HEAD') && Object.hasOwn(deps.rootRoutes, url.pathname)
            ? deps.rootRoutes[url.pathname]
            : undefined
      const aliased = root ? url.pathname : aliasPath(url.pathname)
      if (aliased !== url.pathname) url.pathname = aliased
      const request = new Request(url.href, { method: call.method, headers: call.headers, body: call.body })
      attachPeer(request, call.peer)
      requestIds.set(request, call.requestId)
      try {
        if (root) return common(await root(request, call.requestId), origin, startedAt)
        return common(await app.handle(request), origin, startedAt, request)
      } catch (e) {
        return common(renderThrown(e, thrownAt(request, call.requestId), deps.log), origin, startedAt, request)
      }
    },
  }
}

/** A path of the fabric API, whose error answers write a field cause's value as text (http-errors.ts CauseStyle). */
const isFabricPath = (path: string): boolean => path.startsWith(`${API_PREFIX.fabric}/`)

/** The real controller's aliases: /edge/v1/... is the Client API; paths outside /edge and /.well-known get its prefix. */
function aliasPath(path: string): string {
  if (path.startsWith('/edge/v1/') || path === '/edge/v1') return API_PREFIX.client + path.slice('/edge/v1'.length)
  if (path.startsWith('/edge/') || path.startsWith('/.well-known/') || path.startsWith('/fabric/')) return path
  return API_PREFIX.client + (path === '/' ? '/version' : path)
}
