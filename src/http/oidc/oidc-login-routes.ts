/**
 * The login half of the `/oidc` tree: authorize, the login pages and endpoints, TOTP at login, the auth queries and
 * the callback. Routes parse, call the login flows (flows/oidc/oidc-authorize.ts, oidc-login.ts) and render.
 * - authorize reads its parameters from the query for GET and POST (the C SDK POSTs them in the query with an empty
 *   body), or from a POST's form; it answers 302 to a relative login URL carrying `authRequestID`
 * - the login POSTs take the auth request id from the body's `id`, else the query's `authRequestID`, else its `id`;
 *   their bodies are JSON or a form (415 UNSUPPORTED_MEDIA_TYPE otherwise); errors are bare `{code,message}` with
 *   the error's headers; done is a 302 to `https://<issuer host>/oidc/authorize/callback?id=<id>` with no body and
 *   no JSON content type; a second factor owed is 200 `{"authQueries":[...]}` plus `totp-required: true` when TOTP is
 * - the callback's 302 to the redirect URI puts `code` first, then `state` (the C SDK copies all after `code=`)
 * @see ../shared/reference/oidc-and-ha.md §1, §2a-2b, §7.2-7.5
 */
import { ApiError } from '../../errors/api-error.ts'
import type { EnvInfo, SdkInfo } from '../../domain/identity/identity-types.ts'
import { authorize, type AuthorizeDeps } from '../../flows/oidc/oidc-authorize.ts'
import type { LoginStep, OidcLogin } from '../../flows/oidc/oidc-login.ts'
import { API_ERRORS } from '../../errors/error-codes.ts'
import { iso } from '../mappers/common-mapper.ts'
import { json, OIDC_PREFIX, plain, readParams, redirect, type OidcCall, type OidcParams, type OidcRoute } from './oidc-app.ts'

export interface OidcLoginRouteDeps {
  authorize: AuthorizeDeps
  login: OidcLogin
  now: () => number
}

/** The primary login endpoints below `/oidc/login/` and the AuthMethod each runs. */
const LOGIN_METHODS = { username: 'password', password: 'password', cert: 'cert', 'ext-jwt': 'ext-jwt' } as const

export function oidcLoginRoutes(deps: OidcLoginRouteDeps): OidcRoute[] {
  const authorizeRoute = async (call: OidcCall): Promise<Response> => {
    const params = await readParams(call)
    const out = authorize(deps.authorize, params, call.peer.certChainDer.length > 0, deps.now())
    switch (out.kind) {
      case 'login':
        return redirect(`${OIDC_PREFIX}/login/${out.page}?authRequestID=${out.request.id}`)
      case 'refused':
        return json(out.status, { error: out.error, error_description: out.description })
      case 'redirected':
        return redirect(withQuery(out.redirectUri, [['error', out.error], ['error_description', out.description], ['state', out.state]]))
    }
  }

  const routes: OidcRoute[] = [
    { method: 'GET', path: '/authorize', handle: authorizeRoute },
    { method: 'POST', path: '/authorize', handle: authorizeRoute },
    {
      method: 'GET',
      path: '/authorize/callback',
      handle: (call) => {
        const out = deps.login.callback(call.url.searchParams.get('id') ?? undefined)
        switch (out.kind) {
          case 'unknown':
            return plain(400, 'unknown or expired auth request')
          case 'refused':
            return redirect(withQuery(out.redirectUri, [['error', out.error], ['error_description', out.description], ['state', out.state]]))
          case 'code':
            // code first, then state: the C SDK takes everything after `code=`; the code is base64url, safe as is
            return redirect(withQuery(out.redirectUri, [['code', out.code], ['state', out.state]]))
        }
      },
    },
    {
      method: 'GET',
      path: '/login/auth-queries',
      handle: (call) => {
        const q = call.url.searchParams
        const step = deps.login.authQueries(q.get('id') || q.get('authRequestID') || undefined)
        if (!step) return plain(API_ERRORS.INVALID_AUTH.status, API_ERRORS.INVALID_AUTH.message)
        // always the list (empty once nothing is owed), never the redirect
        return queriesAnswer(step.done ? { authQueries: [], totpRequired: false } : step)
      },
    },
    {
      method: 'POST',
      path: '/login/totp',
      handle: async (call) => {
        const params = await readParams(call)
        return stepAnswer(call, await deps.login.totp(requestIdOf(call, params), params.get('code')))
      },
    },
    {
      method: 'POST',
      path: '/login/totp/enroll',
      handle: async (call) => {
        const params = await readParams(call)
        const { mfa, provisioningUrl } = await deps.login.startTotpEnrollment(requestIdOf(call, params))
        return json(201, {
          id: mfa.id,
          createdAt: iso(mfa.createdAt),
          updatedAt: iso(mfa.updatedAt),
          isVerified: false,
          provisioningUrl,
          recoveryCodes: [...mfa.recoveryCodes],
        })
      },
    },
    {
      method: 'DELETE',
      path: '/login/totp/enroll',
      handle: async (call) => {
        const params = await readParams(call)
        await deps.login.deleteTotpEnrollment(requestIdOf(call, params), params.get('code'))
        return json(200, {})
      },
    },
    {
      method: 'POST',
      path: '/login/totp/enroll/verify',
      handle: async (call) => {
        const params = await readParams(call)
        return stepAnswer(call, await deps.login.verifyTotpEnrollment(requestIdOf(call, params), params.get('code')))
      },
    },
  ]

  for (const [page, method] of Object.entries(LOGIN_METHODS)) {
    routes.push({
      method: 'GET',
      path: `/login/${page}`,
      handle: (call) => {
        const id = call.url.searchParams.get('authRequestID') ?? ''
        if (method === 'password') return loginPage(id)
        return plain(200, 'please POST to this URL', headerSafe(id) ? { 'auth-request-id': id } : {})
      },
    })
    routes.push({
      method: 'POST',
      path: `/login/${page}`,
      handle: async (call) => {
        const params = await readParams(call)
        const input = {
          username: params.get('username'),
          password: params.get('password'),
          configTypes: params.all('configTypes'),
          csrPem: params.get('csrPem'),
          ...clientInfoOf(params),
          header: (name: string) => call.request.headers.get(name),
        }
        return stepAnswer(call, await deps.login.login(method, requestIdOf(call, params), input, call.peer))
      },
    })
  }
  return routes
}

/** The auth request id of a login POST: the body's `id`, else the query's `authRequestID`, else the query's `id`. */
function requestIdOf(call: OidcCall, params: OidcParams): string | undefined {
  const q = call.url.searchParams
  // `all` lists the query's values first: what follows them came in the body
  const fromBody = params.all('id').slice(q.getAll('id').length).find((v) => v !== '')
  return fromBody ?? (q.get('authRequestID') || undefined) ?? (q.get('id') || undefined)
}

/** Done: 302 to the callback on the issuer's host; else 200 with the auth queries still owed. */
function stepAnswer(call: OidcCall, step: LoginStep): Response {
  if (step.done) return redirect(`${call.issuer}/authorize/callback?id=${encodeURIComponent(step.request.id)}`)
  return queriesAnswer(step)
}

/** 200 `{"authQueries":[...]}`, with `totp-required: true` when TOTP is among them. */
function queriesAnswer(owed: { authQueries: readonly unknown[]; totpRequired: boolean }): Response {
  return json(200, { authQueries: owed.authQueries }, owed.totpRequired ? { 'totp-required': 'true' } : {})
}

/** `uri` with the given query parameters appended (absent values left out), in the order given. */
function withQuery(uri: string, pairs: readonly (readonly [string, string | undefined])[]): string {
  const query = pairs
    .filter((p): p is readonly [string, string] => p[1] !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&')
  if (query === '') return uri
  return `${uri}${uri.includes('?') ? '&' : '?'}${query}`
}

const ENV_KEYS = ['arch', 'domain', 'hostname', 'os', 'osRelease', 'osVersion'] as const
const SDK_KEYS = ['appId', 'appVersion', 'branch', 'revision', 'type', 'version'] as const

/**
 * envInfo and sdkInfo of a login body: JSON objects of strings, or a form's flattened fields (`envOs`, `sdkVersion`:
 * the prefix, then the field with its first letter upper-cased). A JSON member of the wrong type is 400.
 */
export function clientInfoOf(params: OidcParams): { envInfo?: EnvInfo; sdkInfo?: SdkInfo } {
  const pick = <K extends string>(field: string, prefix: string, keys: readonly K[]): Partial<Record<K, string>> | undefined => {
    const out: Partial<Record<K, string>> = {}
    if (params.json) {
      const v = params.json[field]
      if (v === undefined || v === null) return undefined
      if (typeof v !== 'object' || Array.isArray(v)) throw ApiError.invalidField(field, 'must be an object', v)
      for (const k of keys) {
        const x = (v as Record<string, unknown>)[k]
        if (x === undefined || x === null) continue
        if (typeof x !== 'string') throw ApiError.invalidField(`${field}.${k}`, 'must be a string', x)
        out[k] = x
      }
      return out
    }
    let any = false
    for (const k of keys) {
      const x = params.get(prefix + k[0]!.toUpperCase() + k.slice(1))
      if (x !== undefined) {
        out[k] = x
        any = true
      }
    }
    return any ? out : undefined
  }
  return { envInfo: pick('envInfo', 'env', ENV_KEYS), sdkInfo: pick('sdkInfo', 'sdk', SDK_KEYS) }
}

/** The password login page: a form posting to `/oidc/login/password` with the auth request id. */
function loginPage(id: string): Response {
  const body = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<form method="post" action="${OIDC_PREFIX}/login/password">
<input type="hidden" name="id" value="${escapeHtml(id)}">
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>
</body>
</html>
`
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...(headerSafe(id) ? { 'auth-request-id': id } : {}) },
  })
}

/** Whether a value from the query can be echoed in a header (printable ASCII; anything else would fail the answer). */
function headerSafe(v: string): boolean {
  return /^[\x20-\x7e]*$/.test(v)
}

/** `s` safe inside HTML text and double-quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
