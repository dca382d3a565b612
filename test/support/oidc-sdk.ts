// An OIDC client that behaves on the wire as the C SDK 1.18.2 does (oidc-and-ha.md §2): version, discovery,
// authorize by POST with the parameters in the query and no body, the login POST chosen by the client, redirects
// followed on the controller's own host by path and query, the code copied raw (with the `&state=` tail), the token
// form encoded as tlsuv encodes it, refresh with HTTP Basic `openziti:`.
import { createHash, randomBytes } from 'node:crypto'
import type { ApiClient, ApiResponse, TestServer } from './harness.ts'

/** Throws unless `ok`: the sequence stops where the SDK would give up (usable outside tests: the benchmarks use it). */
function must(ok: boolean, what: string): void {
  if (!ok) throw new Error(`OIDC sign-in: ${what}`)
}
const isRedirect = (status: number) => status >= 300 && status < 400

export const SDK_REDIRECT_URI = 'http://localhost:20314/auth/callback'

export interface SdkTls {
  cert?: string
  key?: string
}

export interface OidcTokensAnswer {
  access_token: string
  refresh_token?: string
  id_token?: string
  token_type: string
  expires_in: number
  scope: string
  session_cert?: string
}

/** A raw answer of the /oidc tree (no spec check: it is not part of the edge APIs' specs). */
export interface OidcAnswer {
  status: number
  headers: Headers
  text: string
  json: any
}

/** An answer's status, headers, text and (when it parses) JSON. */
export async function answerOf(res: Response): Promise<OidcAnswer> {
  const text = await res.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

/** tlsuv's form encoder: escapes control characters, space and /:"<>%{}|\^` only (not & = + ? #). */
export function tlsuvEncode(value: string): string {
  let out = ''
  for (const ch of value) {
    const code = ch.codePointAt(0)!
    out += code < 0x21 || code === 0x7f || '/:"<>%{}|\\^`'.includes(ch) ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : ch
  }
  return out
}

export function tlsuvForm(fields: [string, string][]): string {
  return fields.map(([k, v]) => `${k}=${tlsuvEncode(v)}`).join('&')
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(40).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** The SDK's authorize parameters (state: 30 random bytes, base64url), with `over` applied (undefined removes one). */
export function sdkAuthorizeQuery(challenge: string, over: Record<string, string | string[] | undefined> = {}): Record<string, string | string[]> {
  const q: Record<string, string | string[] | undefined> = {
    client_id: 'openziti',
    scope: 'openid offline_access',
    response_type: 'code',
    redirect_uri: SDK_REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: randomBytes(30).toString('base64url'),
    audience: 'openziti',
    ...over,
  }
  return Object.fromEntries(Object.entries(q).filter((e): e is [string, string | string[]] => e[1] !== undefined))
}

export function decodeJwtPayload(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'))
}

export function decodeJwtHeader(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'))
}

export interface OidcSdk {
  /** One request to the listener: `path` absolute on the controller, no redirect followed. */
  call(method: string, path: string, opts?: { body?: string; headers?: Record<string, string>; tls?: SdkTls | null }): Promise<OidcAnswer>
  /** The provider URL the SDK builds from /version (`apiVersions["edge-oidc"].v1.apiBaseUrls[0]`). */
  provider(): Promise<string>
  discovery(): Promise<Record<string, any>>
  /** POST authorize with the SDK's query; answers the authRequestID and the verifier. */
  authorize(extra?: Record<string, string>): Promise<{ id: string; verifier: string; state: string; location: string }>
  /** Follows a login's 302 to the callback and the callback's 302; answers the raw code tail (code=… to the end). */
  followToCode(loginAnswer: OidcAnswer): Promise<string>
  exchange(codeTail: string, verifier: string, extra?: [string, string][]): Promise<OidcAnswer>
  refresh(refreshToken: string, extra?: [string, string][]): Promise<OidcAnswer>
  /** The whole certificate sign-in (authorize, login/cert, callback, token); asserts each step. */
  certLogin(): Promise<OidcTokensAnswer>
  /** The whole password sign-in. */
  passwordLogin(username: string, password: string): Promise<OidcTokensAnswer>
  /** An edge API client sending `Authorization: Bearer <token>` (and this SDK's certificate). */
  api(token: string, api: 'client' | 'management'): ApiClient
}

/** Where the SDK signs in: a test server, or (benchmarks) any controller's URL; without a CA the server is not checked. */
export type OidcTarget = Pick<TestServer, 'url'> & Partial<Pick<TestServer, 'caPem' | 'as'>>

/** The SDK of an identity with `tls` (its certificate chain and key; none for a password identity). */
export function oidcSdk(srv: OidcTarget, tls: SdkTls = {}): OidcSdk {
  const origin = () => srv.url
  const call: OidcSdk['call'] = async (method, path, o = {}) => {
    const useTls = o.tls === null ? {} : (o.tls ?? tls)
    const url = path.startsWith('https://') ? path : `${origin()}${path}`
    const res = await fetch(url, {
      method,
      headers: { accept: 'application/json', ...(o.headers ?? {}) },
      body: o.body,
      redirect: 'manual',
      // each request on a new connection, as the SDK's (keep-alive 0)
      keepalive: false,
      tls: { ...(srv.caPem ? { ca: srv.caPem } : { rejectUnauthorized: false }), ...useTls },
    } as RequestInit)
    return answerOf(res)
  }
  const provider = async () => {
    const v = await call('GET', '/version')
    must(v.json?.data?.capabilities?.includes('OIDC_AUTH') === true, '/version does not advertise OIDC_AUTH')
    const base = v.json.data.apiVersions['edge-oidc'].v1.apiBaseUrls[0] as string
    return base.endsWith('/oidc') ? base : `${base}/oidc`
  }
  let config: Record<string, any> | undefined
  const discovery = async () => {
    const d = await call('GET', `${await provider()}/.well-known/openid-configuration`)
    must(d.status === 200, `discovery answered ${d.status}`)
    return (config = d.json)
  }
  const sdk: OidcSdk = {
    call,
    provider,
    discovery,
    async authorize(extra = {}) {
      const cfg = config ?? (await discovery())
      const { verifier, challenge } = pkcePair()
      const params = sdkAuthorizeQuery(challenge, extra)
      const state = params.state as string
      const q = new URLSearchParams(Object.entries(params).flatMap(([k, v]) => [v].flat().map((x): [string, string] => [k, x])))
      const res = await call('POST', `${cfg.authorization_endpoint}?${q}`)
      must(isRedirect(res.status), `authorize answered ${res.status}: ${res.text}`)
      const location = res.headers.get('location') ?? ''
      const at = location.indexOf('authRequestID=')
      must(at >= 0, `authorize redirected to ${location}`)
      const rest = location.slice(at + 'authRequestID='.length)
      const id = rest.includes('&') ? rest.slice(0, rest.indexOf('&')) : rest
      return { id, verifier, state, location }
    },
    async followToCode(login) {
      must(isRedirect(login.status), `the login answered ${login.status}: ${login.text}`)
      const loc = new URL(login.headers.get('location')!, origin())
      // the SDK follows with the path and query only, on the host it talks to
      const cb = await call('GET', `${loc.pathname}${loc.search}`)
      must(isRedirect(cb.status), `the callback answered ${cb.status}: ${cb.text}`)
      const target = cb.headers.get('location') ?? ''
      const at = target.indexOf('code=')
      must(at >= 0, `the callback redirected to ${target}`)
      return target.slice(at + 'code='.length)
    },
    async exchange(codeTail, verifier, extra = []) {
      const cfg = config ?? (await discovery())
      const body = tlsuvForm([
        ['code', codeTail],
        ['grant_type', 'authorization_code'],
        ['code_verifier', verifier],
        ['client_id', 'openziti'],
        ['redirect_uri', SDK_REDIRECT_URI],
        ...extra,
      ])
      return call('POST', cfg.token_endpoint, { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    },
    async refresh(refreshToken, extra = []) {
      const cfg = config ?? (await discovery())
      const body = tlsuvForm([['client_id', 'openziti'], ['grant_type', 'refresh_token'], ['refresh_token', refreshToken], ...extra])
      return call('POST', cfg.token_endpoint, {
        body,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('openziti:').toString('base64')}` },
      })
    },
    async certLogin() {
      const { id, verifier } = await sdk.authorize()
      const login = await call('POST', `/oidc/login/cert?id=${id}`, {
        body: JSON.stringify({ sdkInfo: { type: 'ziti-sdk-c', version: '1.18.2', revision: 'test', branch: 'HEAD', appID: 'test', appVersion: '1' }, envInfo: { os: 'Linux', arch: 'x86_64', osRelease: '6', osVersion: '1', hostname: 'h', domain: '' } }),
        headers: { 'content-type': 'application/json' },
      })
      const tokens = await sdk.exchange(await sdk.followToCode(login), verifier)
      must(tokens.status === 200, `the token endpoint answered ${tokens.status}: ${tokens.text}`)
      return tokens.json
    },
    async passwordLogin(username, password) {
      const { id, verifier } = await sdk.authorize({ method: 'password' })
      const login = await call('POST', `/oidc/login/password?id=${id}`, {
        body: JSON.stringify({ username, password }),
        headers: { 'content-type': 'application/json' },
      })
      const tokens = await sdk.exchange(await sdk.followToCode(login), verifier)
      must(tokens.status === 200, `the token endpoint answered ${tokens.status}: ${tokens.text}`)
      return tokens.json
    },
    api(token, api) {
      if (!srv.as) throw new TypeError('api() needs a test server')
      const c = srv.as(undefined, api)
      const wrapped = ((method: string, path: string, o = {}) =>
        c(method, path, { ...o, session: null, tls: { ...tls, ...(o as { tls?: SdkTls }).tls }, headers: { authorization: `Bearer ${token}`, ...((o as { headers?: Record<string, string> }).headers ?? {}) } })) as ApiClient
      wrapped.get = (p, o) => wrapped('GET', p, o)
      wrapped.post = (p, b, o) => wrapped('POST', p, { ...o, body: b })
      wrapped.put = (p, b, o) => wrapped('PUT', p, { ...o, body: b })
      wrapped.patch = (p, b, o) => wrapped('PATCH', p, { ...o, body: b })
      wrapped.del = (p, o) => wrapped('DELETE', p, o)
      return wrapped
    },
  }
  return sdk
}

export type { ApiResponse }
