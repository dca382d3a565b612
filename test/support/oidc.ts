// An OIDC client for API tests that acts as the C SDK 1.18.2 does on the wire (oidc-and-ha.md §2): PKCE values as it
// makes them, authorize by POST with every parameter in the query and an empty body, redirects never followed
// automatically (a test follows the path and query of each Location itself, on the controller's host, as the SDK
// does). The `/oidc` answers are not edge-API answers: the spec check of the harness's clients does not apply to
// them, so these requests go through fetch directly, over the same TLS (the test CA, an optional client certificate).
// The whole sign-in as one client (token endpoint and bearer calls included) is oidc-sdk.ts; this module is the
// finer tool for the login half's tests (any request below /oidc, the authorize query with overrides).
import { expect } from 'bun:test'
import type { TestServer } from './harness.ts'
import { answerOf, pkcePair, sdkAuthorizeQuery, SDK_REDIRECT_URI } from './oidc-sdk.ts'

export { pkcePair, sdkAuthorizeQuery, SDK_REDIRECT_URI }

export interface OidcAnswer {
  status: number
  headers: Headers
  text: string
  /** The parsed JSON body, when it is JSON. */
  body: any
  /** The Location header, when any. */
  location: string | null
}

export interface OidcRequest {
  method?: string
  /** Query parameters appended to `path` (repeated names as repeated pairs). */
  query?: Record<string, string | string[]>
  /** A JSON body (content type application/json). */
  json?: unknown
  /** A form body (content type application/x-www-form-urlencoded). */
  form?: Record<string, string>
  /** A raw body with its content type in `headers`. */
  rawBody?: string
  headers?: Record<string, string>
  /** A client certificate and key for the TLS handshake. */
  tls?: { cert: string; key: string }
}

/** One request below `/oidc` (or any path starting with `/`), redirects not followed. */
export async function oidcCall(srv: TestServer, path: string, r: OidcRequest = {}): Promise<OidcAnswer> {
  const url = new URL(`${srv.url}${path.startsWith('/oidc') ? path : `/oidc${path}`}`)
  for (const [k, v] of Object.entries(r.query ?? {})) for (const x of [v].flat()) url.searchParams.append(k, x)
  const headers: Record<string, string> = { accept: 'application/json', ...(r.headers ?? {}) }
  let body: string | undefined = r.rawBody
  if (r.json !== undefined) {
    body = JSON.stringify(r.json)
    headers['content-type'] ??= 'application/json'
  } else if (r.form !== undefined) {
    body = new URLSearchParams(r.form).toString()
    headers['content-type'] ??= 'application/x-www-form-urlencoded'
  }
  const res = await fetch(url, {
    method: r.method ?? 'GET',
    headers,
    body,
    redirect: 'manual',
    tls: { ca: srv.caPem, ...(r.tls ?? {}) },
  } as RequestInit)
  const { status, text, json } = await answerOf(res)
  return { status, headers: res.headers, text, body: json, location: res.headers.get('location') }
}

/** The path and query of a Location (what the SDK follows on the controller's own host). */
export function pathOf(location: string): string {
  const u = new URL(location, 'https://placeholder')
  return u.pathname + u.search
}

export interface StartedSignIn {
  /** The auth request id (`authRequestID` of the Location). */
  id: string
  location: string
  verifier: string
  state: string
}

/** Authorize as the SDK does (POST, query only, empty body); expects the 302 with `authRequestID`. */
export async function sdkAuthorize(srv: TestServer, tls?: { cert: string; key: string }, over: Record<string, string | string[] | undefined> = {}): Promise<StartedSignIn> {
  const { verifier, challenge } = pkcePair()
  const query = sdkAuthorizeQuery(challenge, over)
  const res = await oidcCall(srv, '/authorize', { method: 'POST', query, tls })
  expect(res.status).toBe(302)
  const location = res.location!
  const m = /[?&]authRequestID=([^&]*)/.exec(location)
  expect(m).not.toBeNull()
  return { id: m![1]!, location, verifier, state: query.state as string }
}

/** Follows a login's 302 to the callback, and the callback's 302 to the redirect URI; answers the code and state. */
export async function followToCode(srv: TestServer, login: OidcAnswer, tls?: { cert: string; key: string }): Promise<{ code: string; state: string | null; location: string }> {
  if (login.status !== 302) throw new Error(`expected a 302 from the login, got ${login.status}: ${login.text}`)
  const callback = await oidcCall(srv, pathOf(login.location!), { tls })
  if (callback.status !== 302) throw new Error(`expected a 302 from the callback, got ${callback.status}: ${callback.text}`)
  const location = callback.location!
  const code = /[?&]code=([^&]*)/.exec(location)?.[1]
  if (!code) throw new Error(`no code in ${location}`)
  return { code, state: new URL(location).searchParams.get('state'), location }
}
