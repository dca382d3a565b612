/**
 * The OIDC authorize request: its checks, the auth request it starts and the login page it sends the client to.
 * - `client_id` must be `openziti` or `native` (OAuth 400 invalid_client), `redirect_uri` must match one of the
 *   settings' patterns (400 invalid_request): until both hold, errors are answered to the caller, never redirected
 * - then, redirected to `redirect_uri` with `error`, `error_description` and `state` (RFC 6749 §4.1.2.1):
 *   `response_type` other than `code` (unsupported_response_type); no `scope` (invalid_request); no `openid` among
 *   the known scopes (invalid_scope; unknown scopes are dropped); no `code_challenge`, or a method other than S256
 *   (invalid_request: PKCE is required, the real controller leaves it optional); `prompt=none` (login_required: every
 *   sign-in here needs a login)
 * - a redirect pattern's `*` matches any run of characters but `/ ? # @ \`, so a pattern's host part cannot be
 *   stretched into user info (`https://127.0.0.1:1@evil/…`)
 * - `configTypes` (repeated; names or ids) become config-type ids; unknown ones are dropped; `all` stays `all`
 * - the login page: `cert` when `method=cert`, or when no method is named and the TLS handshake carried a client
 *   certificate; `ext-jwt` for `method=ext-jwt`; else `username` (the password form)
 * @see ../shared/reference/oidc-and-ha.md §1 (authorize), §2a step 2, §7.2
 */
import { OIDC_CLIENT_IDS, OIDC_SCOPES, type AuthorizeParams, type AuthRequest, type AuthRequestStore, type OidcClientId } from './oidc-types.ts'

/** The parameters of a request as read (oidc-app's OidcParams satisfies it). */
export interface ParamReader {
  get(name: string): string | undefined
  all(name: string): string[]
}

/** The config types known now (the policy graph's snapshot). */
export interface ConfigTypeLookup {
  get(id: string): unknown
  idByName(name: string): string | undefined
}

/** The login page an authorize request leads to (below `/oidc/login/`). */
export type LoginPage = 'cert' | 'ext-jwt' | 'username'

export type AuthorizeOutcome =
  | { kind: 'login'; request: AuthRequest; page: LoginPage }
  /** Answered to the caller: the redirect URI is not (yet) trusted. */
  | { kind: 'refused'; status: 400; error: string; description: string }
  /** Sent to the (trusted) redirect URI. */
  | { kind: 'redirected'; redirectUri: string; error: string; description: string; state?: string }

export interface AuthorizeDeps {
  requests: AuthRequestStore
  /** The redirect URI patterns (settings `redirectUris`). */
  redirectUris: () => readonly string[]
  configTypes: () => ConfigTypeLookup
}

/** Whether `uri` matches the glob `pattern` (`*`: any run of characters but `/ ? # @ \`). */
export function redirectUriMatches(pattern: string, uri: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map(escapeRegExp).join('[^/?#@\\\\]*')}$`)
  return re.test(uri)
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Config-type names or ids as ids; unknown ones dropped, duplicates once, `all` kept. */
export function configTypeIdsOf(given: readonly string[], lookup: ConfigTypeLookup): string[] {
  const out = new Set<string>()
  for (const v of given) {
    if (v === 'all') out.add('all')
    else if (lookup.get(v) !== undefined) out.add(v)
    else {
      const id = lookup.idByName(v)
      if (id !== undefined) out.add(id)
    }
  }
  return [...out]
}

export function authorize(deps: AuthorizeDeps, params: ParamReader, hasClientCert: boolean, now: number): AuthorizeOutcome {
  const clientId = params.get('client_id')
  if (!clientId || !(OIDC_CLIENT_IDS as readonly string[]).includes(clientId)) {
    return { kind: 'refused', status: 400, error: 'invalid_client', description: 'client not found' }
  }
  const redirectUri = params.get('redirect_uri')
  if (!redirectUri) return { kind: 'refused', status: 400, error: 'invalid_request', description: 'The redirect_uri is missing in the request.' }
  if (!deps.redirectUris().some((p) => redirectUriMatches(p, redirectUri))) {
    return {
      kind: 'refused',
      status: 400,
      error: 'invalid_request',
      description: 'The requested redirect_uri is missing in the client configuration.',
    }
  }
  const state = params.get('state')
  const refuse = (error: string, description: string): AuthorizeOutcome => ({ kind: 'redirected', redirectUri, error, description, state })

  const responseType = params.get('response_type')
  if (responseType !== 'code') return refuse('unsupported_response_type', 'The response type must be code.')
  const asked = (params.get('scope') ?? '').split(' ').filter((s) => s !== '')
  if (asked.length === 0) return refuse('invalid_request', 'The scope of your request is missing.')
  const scopes = [...new Set(asked.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s)))]
  if (!scopes.includes('openid')) return refuse('invalid_scope', 'The scope openid is missing in your request.')
  const codeChallenge = params.get('code_challenge')
  if (!codeChallenge) return refuse('invalid_request', 'code_challenge is required (PKCE with S256).')
  const method = params.get('code_challenge_method')
  if (method !== 'S256') return refuse('invalid_request', 'code_challenge_method must be S256.')
  if ((params.get('prompt') ?? '').split(' ').includes('none')) return refuse('login_required', 'A login is required.')

  const loginMethod = params.get('method')
  const checked: AuthorizeParams = {
    clientId: clientId as OidcClientId,
    redirectUri,
    scopes,
    state,
    nonce: params.get('nonce'),
    codeChallenge,
    codeChallengeMethod: 'S256',
    method: loginMethod,
    configTypeIds: configTypeIdsOf(params.all('configTypes'), deps.configTypes()),
  }
  const request = deps.requests.create(checked, now)
  const page: LoginPage =
    loginMethod === 'cert' || (loginMethod === undefined && hasClientCert) ? 'cert' : loginMethod === 'ext-jwt' ? 'ext-jwt' : 'username'
  return { kind: 'login', request, page }
}
