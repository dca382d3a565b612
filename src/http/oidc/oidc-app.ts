/**
 * The `/oidc` tree on the controller's listener: a small router of its own (these answers are not the edge APIs':
 * no envelope, no session, OAuth and bare `{code,message}` errors), the issuer chosen by the Host header, and the
 * helpers its routes share to read parameters and render.
 * - a Host that names none of the server certificate's names (or the advertised host) gets a plain 404, as does any
 *   path of the tree when OIDC is turned off (the app then never calls this handler)
 * - an unknown path is 404, a known path with another method 405, both as plain text
 * - a thrown ApiError renders bare (`{code,message[,cause]}` with its headers); anything else is logged by the app
 * @see ../shared/reference/oidc-and-ha.md §1
 */
import { ApiError } from '../../errors/api-error.ts'
import { parseJsonBody } from '../http-json.ts'
import { renderCause } from '../http-errors.ts'
import { peerOf, type PeerInfo } from '../peer-cert.ts'

export const OIDC_PREFIX = '/oidc'

/** One request to an OIDC route. */
export interface OidcCall {
  readonly request: Request
  readonly url: URL
  /** `https://<host[:port]>/oidc`: the issuer the client reached (tokens' `iss`, discovery's URLs). */
  readonly issuer: string
  readonly peer: PeerInfo
  /** The id the app gave the request (its log line, its writes' change context). */
  readonly requestId: string
}

export interface OidcRoute {
  readonly method: 'GET' | 'POST' | 'DELETE'
  /** Below `/oidc`, e.g. `/login/cert`. */
  readonly path: string
  handle(call: OidcCall): Response | Promise<Response>
}

export interface OidcAppDeps {
  routes: readonly OidcRoute[]
  /** Whether `host` (a Host header's `name[:port]`, lowercased) is one of this controller's issuers. */
  isIssuerHost(host: string): boolean
}

/** The handler of every request whose path is `/oidc` or below it. */
export function createOidcApp(deps: OidcAppDeps): (request: Request, requestId: string) => Promise<Response> {
  const byPath = new Map<string, OidcRoute[]>()
  for (const r of deps.routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r])
  return async (request, requestId) => {
    const url = new URL(request.url)
    const host = (request.headers.get('host') ?? url.host).toLowerCase()
    if (!deps.isIssuerHost(host)) return plain(404, 'not found')
    const routes = byPath.get(url.pathname.slice(OIDC_PREFIX.length).replace(/\/$/, '') || '/')
    if (!routes) return plain(404, 'not found')
    const route = routes.find((r) => r.method === request.method || (r.method === 'GET' && request.method === 'HEAD'))
    if (!route) return plain(405, 'method not allowed')
    try {
      return await route.handle({ request, url, issuer: `https://${host}${OIDC_PREFIX}`, peer: peerOf(request), requestId })
    } catch (e) {
      if (e instanceof ApiError) return bareError(e, requestId)
      throw e
    }
  }
}

/** A plain-text answer. */
export function plain(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } })
}

/** A JSON answer (no envelope). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } })
}

/** A 302 to `location`, with no body and no JSON content type (the C SDK follows it; see reference §7.4). */
export function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store' } })
}

/** An ApiError as the login endpoints render it: `{code,message[,cause]}` with no envelope, its headers copied. */
export function bareError(e: ApiError, requestId: string): Response {
  const body: Record<string, unknown> = { code: e.code, message: e.message }
  const cause = renderCause(e.apiCause, requestId)
  if (cause) body.cause = cause
  return json(e.status, body, e.headers ?? {})
}

/** An OAuth 2.0 error answer (RFC 6749 §5.2). */
export function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): Response {
  return json(status, { error, error_description: description }, headers)
}

/**
 * The parameters of a request: the query's, then the body's (a form, or JSON whose members are strings or arrays of
 * strings; nested objects are kept under `json`). A body of another content type is 415 UNSUPPORTED_MEDIA_TYPE; an
 * empty body is no parameters (the C SDK's authorize and DELETE send none).
 */
export interface OidcParams {
  /** The first value of `name`, body before query; undefined when absent or empty. */
  get(name: string): string | undefined
  /** Every value of `name`, query then body. */
  all(name: string): string[]
  /** The JSON body as parsed (undefined for a form or no body). */
  readonly json?: Record<string, unknown>
}

export async function readParams(call: OidcCall): Promise<OidcParams> {
  const query = call.url.searchParams
  let form: URLSearchParams | undefined
  let jsonBody: Record<string, unknown> | undefined
  if (call.request.method !== 'GET' && call.request.method !== 'HEAD') {
    const text = await call.request.text()
    if (text.trim() !== '') {
      const type = (call.request.headers.get('content-type') ?? '').toLowerCase()
      if (type.startsWith('application/x-www-form-urlencoded')) form = new URLSearchParams(text)
      else if (type.includes('json')) {
        const parsed = parseJsonBody(text)
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ApiError('COULD_NOT_PARSE_BODY')
        jsonBody = parsed as Record<string, unknown>
      } else throw new ApiError('UNSUPPORTED_MEDIA_TYPE')
    }
  }
  const fromJson = (name: string): string[] => {
    const v = jsonBody?.[name]
    if (typeof v === 'string') return [v]
    if (typeof v === 'number' || typeof v === 'boolean') return [String(v)]
    if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string')
    return []
  }
  const bodyValues = (name: string) => (form ? form.getAll(name) : fromJson(name))
  return {
    get: (name) => [...bodyValues(name), ...query.getAll(name)].find((v) => v !== ''),
    all: (name) => [...query.getAll(name), ...bodyValues(name)],
    json: jsonBody,
  }
}

/**
 * The issuer check of the Host header: a name of the server certificate (DNS or IP SAN) or the advertised host, on
 * one of the listener's ports (a bare name on 443). IPv6 literals come bracketed.
 */
export function issuerHostCheck(names: () => readonly string[], ports: () => readonly number[]): (host: string) => boolean {
  return (host) => {
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host)
    if (!m) return false
    const name = m[1]!.replace(/^\[|\]$/g, '').toLowerCase()
    const port = m[2] === undefined ? 443 : Number(m[2])
    return ports().includes(port) && names().some((n) => n.toLowerCase() === name)
  }
}
