/**
 * OIDC sign-in: the shapes shared by the login half (authorize, login/*, callback: `oidc-auth-requests.ts`,
 * `oidc-login.ts`, `http/oidc/oidc-login-routes.ts`) and the token half (token endpoint, keys, revoke, end_session,
 * bearer tokens on the APIs: `oidc-tokens.ts`, `http/oidc/oidc-token-routes.ts`).
 * @see ../shared/reference/oidc-and-ha.md §1-4
 */
import type { EnvInfo, SdkInfo } from '../../domain/identity/identity-types.ts'
import type { PrimaryMethodKind } from '../authenticate/auth-method.ts'

/** The two public clients of the real controller (`native` is its legacy name). */
export const OIDC_CLIENT_IDS = ['openziti', 'native'] as const
export type OidcClientId = (typeof OIDC_CLIENT_IDS)[number]

/** The scopes a token may carry; others are dropped at authorize. */
export const OIDC_SCOPES = ['openid', 'offline_access'] as const

/**
 * The real controller's default redirect URI patterns (globs: `*` is any run of characters): those of its global
 * controller settings, which add the `[::1]` ones to the five of its config file's defaults.
 */
export const DEFAULT_REDIRECT_URIS = [
  'openziti://auth/callback',
  'https://127.0.0.1:*/auth/callback',
  'http://127.0.0.1:*/auth/callback',
  'https://localhost:*/auth/callback',
  'http://localhost:*/auth/callback',
  'http://[::1]:*/auth/callback',
  'https://[::1]:*/auth/callback',
] as const

/** The same for post-logout redirects. */
export const DEFAULT_POST_LOGOUT_URIS = DEFAULT_REDIRECT_URIS.map((u) => u.replace('/auth/callback', '/auth/logout'))

/** OIDC settings (config `oidc`). */
export interface OidcSettings {
  /** false: nothing about OIDC is advertised and `/oidc` answers 404. */
  enabled: boolean
  accessTokenMs: number
  idTokenMs: number
  refreshTokenMs: number
  /** Redirect URI patterns allowed at authorize (globs). */
  redirectUris: readonly string[]
  postLogoutUris: readonly string[]
  /** Advertise OIDC_AUTH_WITH_CSR in /version (the CSR path works either way; strict generated clients reject the value). */
  advertiseCsrCapability: boolean
}

const MINUTE = 60_000
export const OIDC_DEFAULTS: OidcSettings = {
  enabled: true,
  accessTokenMs: 30 * MINUTE,
  idTokenMs: 30 * MINUTE,
  refreshTokenMs: 24 * 60 * MINUTE,
  redirectUris: DEFAULT_REDIRECT_URIS,
  postLogoutUris: DEFAULT_POST_LOGOUT_URIS,
  advertiseCsrCapability: false,
}

/** Settings with the real controller's minimums: access and id tokens at least 1 m, refresh at least access + 1 m. */
export function oidcSettingsOf(given: Partial<OidcSettings> = {}): OidcSettings {
  const s = { ...OIDC_DEFAULTS, ...given }
  const accessTokenMs = Math.max(s.accessTokenMs, MINUTE)
  return {
    ...s,
    accessTokenMs,
    idTokenMs: Math.max(s.idTokenMs, MINUTE),
    refreshTokenMs: Math.max(s.refreshTokenMs, accessTokenMs + MINUTE),
  }
}

/** How long an auth request (and so its code) lives, and how often the sweep runs. */
export const AUTH_REQUEST_TTL_MS = 10 * MINUTE
export const AUTH_REQUEST_SWEEP_MS = 10_000

/** The parameters of an authorize request, checked. */
export interface AuthorizeParams {
  clientId: OidcClientId
  redirectUri: string
  scopes: readonly string[]
  state?: string
  nonce?: string
  codeChallenge: string
  /** Only S256 is accepted. */
  codeChallengeMethod: 'S256'
  /** The ziti extra `method` (cert, password, ext-jwt), when given. */
  method?: string
  /** Config type ids (names given at authorize are resolved to ids). */
  configTypeIds: readonly string[]
}

/**
 * One sign-in in progress on this node: created at authorize, filled in by the login endpoints, redeemed once by its
 * code at the token endpoint. Memory only (the real controller's too): a login stays on the node that started it.
 */
export interface AuthRequest extends AuthorizeParams {
  /** UUID; the `authRequestID` of the login URLs and the callback's `id`. */
  readonly id: string
  readonly createdAt: number
  /** The API-session id every token of this sign-in carries as `z_asid` (a fresh UUID chosen at authorize). */
  readonly apiSessionId: string
  /** Set once a primary method succeeded. */
  primary?: {
    identityId: string
    authenticatorId: string
    kind: PrimaryMethodKind
    /** When the primary method succeeded (ms): the tokens' `auth_time`. */
    authTime: number
    isCertExtendable: boolean
    /** SHA-1 hex of the TLS client certificate of a cert login (`z_acf`, and the first of `z_cfs`). */
    certFingerprint?: string
    remoteAddress: string
    sdkInfo?: SdkInfo
    envInfo?: EnvInfo
    /** A CSR given at login, signed at the token endpoint into a `session_cert`. */
    csrPem?: string
  }
  /** Authentication methods done: `cert`, `password` or `ext-jwt`, then `totp`, `ejs:<signerId>`. */
  readonly amr: Set<string>
  /**
   * The second factors the primary login found owed (`totp`, `ejs:<signerId>`): a code is issued only once `amr`
   * holds them all. Empty until a primary login.
   */
  requiredAmr: readonly string[]
}

/** A sign-in whose code was redeemed: everything the token endpoint needs to mint the first tokens. */
export type CompletedLogin = AuthRequest & { primary: NonNullable<AuthRequest['primary']> }

/** The auth requests of this node (oidc-auth-requests.ts). */
export interface AuthRequestStore {
  create(params: AuthorizeParams, now: number): AuthRequest
  /** A live request by id; undefined when unknown or expired. */
  get(id: string, now: number): AuthRequest | undefined
  /** A URL-safe, single-use code for a fully authenticated request. */
  issueCode(request: AuthRequest): string
  /**
   * Takes the request a code names, once: the request is deleted (a second redemption finds nothing); undefined for
   * an unknown, reused or expired code, or a request without a primary login.
   */
  redeemCode(code: string, now: number): CompletedLogin | undefined
  /** Stops the sweep timer. */
  stop(): void
}
