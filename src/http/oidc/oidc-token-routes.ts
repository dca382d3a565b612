/**
 * The token half of `/oidc`: discovery, the token endpoint, the key set, revocation and logout. Routes parse, call
 * the grants flow (flows/oidc/oidc-grants.ts) and render; refusals are OAuth error bodies.
 * @see ../shared/reference/oidc-and-ha.md §1
 */
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import { exportJWK } from 'jose'
import { OAuthError, TOKEN_EXCHANGE_GRANT, type OidcGrants } from '../../flows/oidc/oidc-grants.ts'
import type { TokenKeys } from '../../flows/oidc/oidc-tokens.ts'
import { redirectUriMatches } from '../../flows/oidc/oidc-authorize.ts'
import { OIDC_SCOPES, type OidcSettings } from '../../flows/oidc/oidc-types.ts'
import { json, oauthError, plain, readParams, redirect, type OidcCall, type OidcParams, type OidcRoute } from './oidc-app.ts'

export interface OidcTokenRouteDeps {
  grants: OidcGrants
  keys: TokenKeys
  /** The algorithm of this node's signing key. */
  alg: () => string
  settings: Pick<OidcSettings, 'postLogoutUris'>
}

/**
 * The discovery document of `issuer` (zitadel's standard set, plus ziti's `openziti_endpoints`), less the endpoints
 * edgeplane does not serve (userinfo, introspection, device authorization: no SDK uses them; a README difference).
 */
export function discoveryDocument(issuer: string, alg: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/revoke`,
    end_session_endpoint: `${issuer}/end_session`,
    jwks_uri: `${issuer}/keys`,
    scopes_supported: [...OIDC_SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE_GRANT],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [alg],
    request_object_signing_alg_values_supported: [alg],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: [alg],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    claims_supported: ['sub', 'aud', 'exp', 'iat', 'iss', 'auth_time', 'nonce', 'amr', 'azp', 'at_hash', 'c_hash', 'name', 'client_id'],
    code_challenge_methods_supported: ['S256'],
    ui_locales_supported: ['en'],
    request_parameter_supported: true,
    request_uri_parameter_supported: false,
    openziti_endpoints: {
      password: `${issuer}/login/password`,
      cert: `${issuer}/login/cert`,
      ext_jwt: `${issuer}/login/ext-jwt`,
      totp: `${issuer}/login/totp`,
      totp_enroll: `${issuer}/login/totp/enroll`,
      totp_enroll_verify: `${issuer}/login/totp/enroll/verify`,
      auth_queries: `${issuer}/login/auth-queries`,
    },
  }
}

/** The client id of HTTP Basic (`openziti:`), if the request carries one. */
function basicClientId(call: OidcCall): string | undefined {
  const m = /^\s*basic\s+(\S+)\s*$/i.exec(call.request.headers.get('authorization') ?? '')
  if (!m) return undefined
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  const id = decodeURIComponent(colon < 0 ? decoded : decoded.slice(0, colon))
  return id === '' ? undefined : id
}

const changeOf = (call: OidcCall): ChangeContext => ({ author: 'oidc', source: 'rest', requestId: call.requestId })

/** The parameters of an OAuth endpoint; a body that is neither a form nor JSON is invalid_request. */
function oauthParams(call: OidcCall): Promise<OidcParams> {
  return readParams(call).catch(() => {
    throw new OAuthError('invalid_request', 'the body must be a form (application/x-www-form-urlencoded)')
  })
}

/** Runs `fn`, rendering an OAuthError as its answer. */
async function oauth(fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn()
  } catch (e) {
    if (e instanceof OAuthError) return oauthError(e.status, e.error, e.description)
    throw e
  }
}

export function oidcTokenRoutes(deps: OidcTokenRouteDeps): OidcRoute[] {
  return [
    {
      method: 'GET',
      path: '/.well-known/openid-configuration',
      handle: (call) => json(200, discoveryDocument(call.issuer, deps.alg())),
    },
    {
      method: 'POST',
      path: '/oauth/token',
      handle: (call) =>
        oauth(async () => {
          const params = await oauthParams(call)
          const tokens = await deps.grants.token(params, params.get('client_id') ?? basicClientId(call), call.issuer, changeOf(call))
          return json(200, tokens, { pragma: 'no-cache' })
        }),
    },
    {
      method: 'GET',
      path: '/keys',
      handle: async () => {
        const keys = []
        for (const [kid, k] of deps.keys()) keys.push({ ...(await exportJWK(k.publicKey)), kid, alg: k.alg, use: 'sig' })
        return json(200, { keys }, { 'cache-control': 'max-age=300' })
      },
    },
    {
      method: 'POST',
      path: '/revoke',
      handle: (call) =>
        oauth(async () => {
          const params = await oauthParams(call)
          const token = params.get('token')
          if (!token) throw new OAuthError('invalid_request', 'token is required')
          await deps.grants.revoke(token, changeOf(call))
          return new Response(null, { status: 200 })
        }),
    },
    ...(['GET', 'POST'] as const).map(
      (method): OidcRoute => ({
        method,
        path: '/end_session',
        handle: (call) =>
          oauth(async () => {
            const params = await oauthParams(call)
            const target = params.get('post_logout_redirect_uri')
            if (target !== undefined && !deps.settings.postLogoutUris.some((pattern) => redirectUriMatches(pattern, target))) {
              throw new OAuthError('invalid_request', 'post_logout_redirect_uri is not an allowed logout URI')
            }
            await deps.grants.endSession(params.get('id_token_hint'), changeOf(call))
            const state = params.get('state')
            if (!target) return redirect('/oidc/logged-out')
            return redirect(state ? `${target}${target.includes('?') ? '&' : '?'}state=${encodeURIComponent(state)}` : target)
          }),
      }),
    ),
    { method: 'GET', path: '/logged-out', handle: () => plain(200, 'signed out successfully') },
  ]
}
