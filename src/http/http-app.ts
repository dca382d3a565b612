/**
 * The Elysia application: body parsing, route mounting from RouteDefs, access checks, the error mapper,
 * path aliases (bare paths and /edge/v1 go to the Client API), CORS and the common response headers.
 */
import { Elysia } from 'elysia'
import { ApiError } from '../errors/api-error.ts'
import { renderApiError, renderThrown, validationToApiError } from './http-errors.ts'
import { API_PREFIX, type RouteDef } from './http-route.ts'
import type { AuthContext, SessionResolver } from './http-auth.ts'
import { attachPeer, peerOf } from './peer-cert.ts'

export interface AppDeps {
  resolver: SessionResolver
  version: string
  instanceId: string
  clock: { now(): number }
  /** Answers served outside the two API prefixes (version, est/cacerts), by exact path. */
  rootRoutes: Record<string, (req: Request) => Response | Promise<Response>>
}

const CORS_HEADERS = {
  'access-control-allow-headers': 'content-type, accept, authorization, zt-session',
  'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
  'access-control-allow-credentials': 'true',
}

/** Compiles `/identities/:id` into a matcher for the 405 check. */
function pathMatcher(path: string): RegExp {
  return new RegExp('^' + path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+') + '/?$')
}

export interface App {
  handle(req: Request): Promise<Response>
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

  const app = new Elysia({ aot: true, normalize: false })
    .onParse(async ({ request }) => {
      const text = await request.text()
      if (text.trim() === '') return {}
      const type = (request.headers.get('content-type') ?? '').toLowerCase()
      if (type === '' || type.includes('json')) {
        try {
          return JSON.parse(text)
        } catch (e) {
          throw ApiError.withMessage('COULD_NOT_PARSE_BODY', `parsing body failed: ${(e as Error).message}`)
        }
      }
      return text
    })
    .onError(({ code, error, request }) => {
      if (error instanceof ApiError) return renderApiError(error)
      if (code === 'VALIDATION') {
        const v = error as unknown as { type?: string; all?: unknown[] }
        let errors: unknown[] = []
        try {
          errors = v.all ?? []
        } catch {
          errors = []
        }
        return renderApiError(validationToApiError(v.type ?? 'body', errors as never[]))
      }
      if (code === 'PARSE') return renderApiError(ApiError.withMessage('COULD_NOT_PARSE_BODY', 'the body could not be parsed'))
      if (code === 'NOT_FOUND') {
        const path = new URL(request.url).pathname
        if (known.some((k) => k.re.test(path) && k.method !== request.method)) return renderApiError(new ApiError('METHOD_NOT_ALLOWED'))
        return renderApiError(new ApiError('NOT_FOUND'))
      }
      return renderThrown(error, request)
    })

  for (const r of routes) {
    for (const api of r.apis) {
      const full = API_PREFIX[api] + r.path
      known.push({ re: pathMatcher(full), method: r.method })
      app.route(
        r.method,
        full,
        async (ctx: { request: Request; body: unknown; query: Record<string, unknown>; params: Record<string, string> }) => {
          const auth = r.access === 'public' ? deps.resolver.resolve(ctx.request) : deps.resolver.require(ctx.request, r.access)
          const res = await r.handle({
            request: ctx.request,
            body: ctx.body,
            query: ctx.query,
            params: ctx.params,
            auth: auth as AuthContext,
            api,
          })
          if (auth) for (const [k, v] of Object.entries(sessionHeaders(auth))) res.headers.set(k, v)
          return res
        },
        { body: r.body, query: r.query } as never,
      )
    }
  }
  app.compile()

  /** The common headers; `server-timing` carries the time spent in the app (benchmarks read it). */
  const common = (res: Response, origin: string | null, startedAt: number): Response => {
    res.headers.set('server-timing', `app;dur=${(performance.now() - startedAt).toFixed(3)}`)
    res.headers.set('server', `edgeplane/${deps.version}`)
    res.headers.set('ziti-instance-id', deps.instanceId)
    res.headers.set('access-control-allow-origin', origin ?? '*')
    if (origin) res.headers.set('vary', 'Origin')
    for (const [k, v] of Object.entries(CORS_HEADERS)) res.headers.set(k, v)
    return res
  }

  return {
    async handle(req: Request): Promise<Response> {
      const startedAt = performance.now()
      const origin = req.headers.get('origin')
      if (req.method === 'OPTIONS') return common(new Response(null, { status: 200 }), origin, startedAt)
      const url = new URL(req.url)
      const root = deps.rootRoutes[url.pathname]
      if (root && (req.method === 'GET' || req.method === 'HEAD')) {
        try {
          return common(await root(req), origin, startedAt)
        } catch (e) {
          return common(renderThrown(e, req), origin, startedAt)
        }
      }
      let target = req
      const aliased = aliasPath(url.pathname)
      if (aliased !== url.pathname) {
        url.pathname = aliased
        target = new Request(url.toString(), req)
        attachPeer(target, peerOf(req))
      }
      try {
        return common(await app.handle(target), origin, startedAt)
      } catch (e) {
        return common(renderThrown(e, req), origin, startedAt)
      }
    },
  }
}

/** The real controller's aliases: /edge/v1/... is the Client API; paths outside /edge and /.well-known get its prefix. */
function aliasPath(path: string): string {
  if (path.startsWith('/edge/v1/') || path === '/edge/v1') return API_PREFIX.client + path.slice('/edge/v1'.length)
  if (path.startsWith('/edge/') || path.startsWith('/.well-known/') || path.startsWith('/fabric/')) return path
  return API_PREFIX.client + (path === '/' ? '/version' : path)
}
