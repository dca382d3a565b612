/**
 * The token endpoint's grants, revocation and logout: the use-cases behind `/oidc/oauth/token`, `/oidc/revoke` and
 * `/oidc/end_session`.
 * - authorization_code: the code is redeemed once (the login half's store deletes its request); the PKCE verifier
 *   must hash (S256) to the challenge given at authorize, `redirect_uri` and the client must be the ones of authorize
 * - refresh_token: a valid refresh token (signature, `exp`, type `r`), not revoked (by `jti`, and, stricter than the
 *   real controller, by identity and API session too), of an identity that exists and is not disabled; the new tokens
 *   keep `z_asid`, `amr` and `auth_time`; the old refresh token is revoked by its `jti` before the answer, so it works
 *   once (a second use, even a concurrent one, is refused)
 * - token exchange: an access or refresh token for new tokens of the same sign-in (an ID token is refused)
 * - a CSR (`csr_pem`, or `csrPem` given at login) is signed into a `session_cert`, whose fingerprint joins `z_cfs`
 * - every refusal is an OAuthError (400 invalid_grant / invalid_request / invalid_client / unsupported_grant_type)
 * Failure story (CA, then identity actor): a refresh signs the new tokens, then stores the revocation of the old one;
 * the answer waits for that commit. A crash between the two leaves the old token usable and the new ones unseen by
 * the client, which refreshes again: no token is ever answered twice for one refresh token.
 * @see ../shared/reference/oidc-and-ha.md §1 (token, revoke, end_session), §3
 */
import { createHash } from 'node:crypto'
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import { isDisabled, type Identity } from '../../domain/identity/identity-types.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import { OIDC_CLIENT_IDS, OIDC_SCOPES, type AuthRequestStore } from './oidc-types.ts'
import { basisOfLogin, type IssuedTokens, type OidcTokens, type TokenBasis, type TokenClaims } from './oidc-tokens.ts'

/** An OAuth 2.0 error answer (RFC 6749 §5.2); `status` 400 unless said otherwise. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(`${error}: ${description}`)
    this.name = 'OAuthError'
  }
}

const TOKEN_TYPE = {
  access: 'urn:ietf:params:oauth:token-type:access_token',
  refresh: 'urn:ietf:params:oauth:token-type:refresh_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
} as const
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'

/** The token endpoint's parameters, as read from its form (and HTTP Basic for the client id). */
export interface GrantParams {
  get(name: string): string | undefined
}

/** Signs a CSR of an identity into a client certificate (not stored: it lives as long as the tokens name it). */
export interface SessionCertIssuer {
  issue(identityId: string, csrPem: string): Promise<{ certPem: string; fingerprint: string }>
}

export interface OidcGrantDeps {
  tokens: OidcTokens
  authRequests: AuthRequestStore
  identities: IdentityActor
  clock: Clock
  sessionCerts: SessionCertIssuer
}

export interface OidcGrants {
  token(params: GrantParams, clientId: string | undefined, issuer: string, change: ChangeContext): Promise<IssuedTokens & { issued_token_type?: string }>
  /** Revokes a live token this controller signed by its `jti`; anything else is ignored. */
  revoke(token: string, change: ChangeContext): Promise<void>
  /** Logout: revokes the API session an ID token hint names (`z_asid`), else its identity's tokens. */
  endSession(idTokenHint: string | undefined, change: ChangeContext): Promise<void>
}

/**
 * A PEM as a form carried it. A client whose form encoder leaves `+` unescaped (the C SDK's tlsuv) has its base64
 * `+` read back as spaces; a PEM body holds no spaces, so they are turned back.
 */
export function pemFromForm(text: string): string {
  return text.replace(/(-----BEGIN [^-]+-----)([\s\S]*?)(-----END [^-]+-----)/g, (_m, begin: string, body: string, end: string) => `${begin}${body.replace(/ /g, '+')}${end}`)
}

/** base64url(SHA-256(verifier)), RFC 7636 §4.6. */
function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

export function createOidcGrants(deps: OidcGrantDeps): OidcGrants {
  /** Refresh tokens being redeemed right now: a concurrent second use of one is refused before the first commits. */
  const redeeming = new Set<string>()

  const liveIdentity = (id: string): Identity => {
    const identity = deps.identities.snapshot().identity(id)
    if (!identity || isDisabled(identity, deps.clock.now())) throw new OAuthError('invalid_grant', 'the identity no longer exists or is disabled')
    return identity
  }
  const clientOf = (clientId: string | undefined): string => {
    if (!clientId) throw new OAuthError('invalid_client', 'client_id is required', 401)
    if (!(OIDC_CLIENT_IDS as readonly string[]).includes(clientId)) throw new OAuthError('invalid_client', 'client not found', 401)
    return clientId
  }
  const withCsr = async (basis: TokenBasis, csrPem: string | undefined): Promise<{ basis: TokenBasis; sessionCert?: string }> => {
    if (!csrPem) return { basis }
    let cert: { certPem: string; fingerprint: string }
    try {
      cert = await deps.sessionCerts.issue(basis.identityId, pemFromForm(csrPem))
    } catch (e) {
      // a refused CSR (the CSR check's ApiError) is the client's; anything else is ours and is not hidden
      if (e instanceof ApiError) throw new OAuthError('invalid_request', `the CSR could not be processed: ${e.apiCause?.kind === 'api' ? e.apiCause.message : e.message}`)
      throw e
    }
    return { basis: { ...basis, certFingerprints: [...(basis.certFingerprints ?? []), cert.fingerprint] }, sessionCert: cert.certPem }
  }
  const isRevoked = (c: TokenClaims) =>
    deps.identities.snapshot().isTokenRevoked({ jti: c.jti, sub: c.identityId, iat: c.iat, apiSessionId: c.apiSessionId }, deps.clock.now())
  /** The claims of a token of `type` that may still be used, or invalid_grant. */
  const usable = async (token: string | undefined, type: 'a' | 'r', what: string): Promise<TokenClaims> => {
    if (!token) throw new OAuthError('invalid_request', `${what} is required`)
    const claims = await deps.tokens.verify(token, type)
    if (claims === 'expired') throw new OAuthError('invalid_grant', `the ${what} has expired`)
    if (claims === 'invalid') throw new OAuthError('invalid_grant', `the ${what} is invalid`)
    if (isRevoked(claims)) throw new OAuthError('invalid_grant', `the ${what} has been revoked`)
    liveIdentity(claims.identityId)
    return claims
  }
  /** The scopes asked for, which must be a subset of `allowed`; `allowed` when none are asked. */
  const narrowed = (asked: string | undefined, allowed: readonly string[]): string[] => {
    if (!asked) return [...allowed]
    const scopes = asked.split(' ').filter((s) => s !== '')
    if (scopes.some((s) => !allowed.includes(s))) throw new OAuthError('invalid_scope', 'a scope was asked for that the grant does not hold')
    return scopes
  }
  const revokeJti = (jti: string, expSeconds: number, change: ChangeContext) =>
    deps.identities.ask({ type: 'revocation.create', revocations: [{ id: jti, type: 'JTI', expiresAt: expSeconds * 1000 }], change })

  const byCode = async (params: GrantParams, clientId: string, issuer: string) => {
    const code = params.get('code')
    if (!code) throw new OAuthError('invalid_request', 'code is required')
    const verifier = params.get('code_verifier')
    const login = deps.authRequests.redeemCode(code, deps.clock.now())
    if (!login) throw new OAuthError('invalid_grant', 'the code is invalid, expired or already used')
    if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required')
    if (s256(verifier) !== login.codeChallenge) throw new OAuthError('invalid_grant', 'the code_verifier does not match the code_challenge')
    if (params.get('redirect_uri') !== login.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request')
    if (clientId !== login.clientId) throw new OAuthError('invalid_grant', 'the code was issued to another client')
    liveIdentity(login.primary.identityId)
    const { basis, sessionCert } = await withCsr(basisOfLogin(login), params.get('csr_pem') ?? login.primary.csrPem)
    return deps.tokens.mint(basis, issuer, { nonce: login.nonce, code, sessionCert })
  }

  const byRefresh = async (params: GrantParams, clientId: string, issuer: string, change: ChangeContext) => {
    const token = params.get('refresh_token')
    const claims = await usable(token, 'r', 'refresh token')
    if (claims.clientId !== clientId) throw new OAuthError('invalid_grant', 'the refresh token was issued to another client')
    if (redeeming.has(claims.jti)) throw new OAuthError('invalid_grant', 'the refresh token has been revoked')
    redeeming.add(claims.jti)
    try {
      const scopes = narrowed(params.get('scope'), claims.scopes)
      const { basis, sessionCert } = await withCsr({ ...claims, scopes }, params.get('csr_pem'))
      const tokens = await deps.tokens.mint(basis, issuer, { sessionCert })
      await revokeJti(claims.jti, claims.exp, change)
      return tokens
    } finally {
      redeeming.delete(claims.jti)
    }
  }

  const byExchange = async (params: GrantParams, issuer: string) => {
    const subjectType = params.get('subject_token_type')
    const type = subjectType === TOKEN_TYPE.access ? 'a' : subjectType === TOKEN_TYPE.refresh ? 'r' : undefined
    if (!type) throw new OAuthError('invalid_request', subjectType === TOKEN_TYPE.id ? 'an ID token cannot be exchanged' : 'subject_token_type must be an access or refresh token type')
    const requested = params.get('requested_token_type') ?? TOKEN_TYPE.refresh
    if (requested !== TOKEN_TYPE.access && requested !== TOKEN_TYPE.refresh) throw new OAuthError('invalid_request', 'requested_token_type must be an access or refresh token type')
    const audience = params.get('audience')
    if (audience !== undefined && !(OIDC_CLIENT_IDS as readonly string[]).includes(audience)) throw new OAuthError('invalid_target', 'audience must be openziti or native')
    const claims = await usable(params.get('subject_token'), type, 'subject token')
    const scopes = narrowed(params.get('scope'), OIDC_SCOPES)
    const withRefresh = requested === TOKEN_TYPE.refresh ? [...new Set([...scopes, 'offline_access'])] : scopes
    const { basis, sessionCert } = await withCsr({ ...claims, clientId: audience ?? claims.clientId, scopes: withRefresh }, params.get('csr_pem'))
    return { ...(await deps.tokens.mint(basis, issuer, { sessionCert })), issued_token_type: requested }
  }

  return {
    async token(params, formClientId, issuer, change) {
      const clientId = clientOf(formClientId)
      const grant = params.get('grant_type')
      switch (grant) {
        case 'authorization_code':
          return byCode(params, clientId, issuer)
        case 'refresh_token':
          return byRefresh(params, clientId, issuer, change)
        case TOKEN_EXCHANGE_GRANT:
          return byExchange(params, issuer)
        case undefined:
          throw new OAuthError('invalid_request', 'grant_type is required')
        default:
          throw new OAuthError('unsupported_grant_type', `the grant type '${grant}' is not supported`)
      }
    },

    async revoke(token, change) {
      // RFC 7009 §2.2: the answer is 200 whether or not the token was valid. Only a live token this controller signed
      // is revoked (by its jti, until it expires): anyone may call this endpoint, so a string that is not one of our
      // tokens is not stored (the real controller stores it, which lets anonymous callers fill the store)
      const payload = await deps.tokens.signedPayload(token)
      const { jti, exp } = payload ?? {}
      if (typeof jti === 'string' && typeof exp === 'number' && exp * 1000 > deps.clock.now()) await revokeJti(jti, exp, change)
    },

    async endSession(hint, change) {
      if (!hint) return
      // an ID token hint must be one of ours (its signature), expired or not: it names whose tokens to end
      const claims = await deps.tokens.signedPayload(hint)
      if (!claims) return
      const asid = typeof claims.z_asid === 'string' ? claims.z_asid : undefined
      const sub = typeof claims.sub === 'string' ? claims.sub : undefined
      if (asid) await deps.identities.ask({ type: 'revocation.create', revocations: [{ id: asid, type: 'API_SESSION' }], change })
      else if (sub && deps.identities.snapshot().identity(sub)) await deps.identities.ask({ type: 'revocation.create', revocations: [{ id: sub, type: 'IDENTITY' }], change })
    },
  }
}
