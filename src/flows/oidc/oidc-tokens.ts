/**
 * OIDC tokens: minting (access, ID and refresh JWTs signed by the CA actor with the server certificate's key, `kid` =
 * SHA-1 hex of its DER) and checking them (signature by `kid`, `exp`/`nbf`, type). No state of its own: a sign-in is
 * carried by its tokens, so any node that knows the signing certificates can check them.
 * - access and refresh tokens carry the same custom claims (`z_asid` kept across refreshes, `z_cfs` the certificate
 *   binding); `z_ia` and `z_eid` are read from the identity, `z_cer` and `z_ckrr` (an admin asked the sign-in's cert
 *   authenticator to be extended, with a new key) from the authenticator, every time a token is minted
 * - the ID token carries no `z_asid`; `at_hash` (and `c_hash` for a code) per OIDC Core §3.1.3.6
 * - verification: `iss` and `aud` are not checked (they differ by Host and by node, as the real controller's)
 * @see ../shared/reference/oidc-and-ha.md §3
 */
import { createHash } from 'node:crypto'
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import { newUuid } from '../../lib/ids.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Authenticator, EnvInfo, Identity, SdkInfo } from '../../domain/identity/identity-types.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { JwtVerifier } from '../../actors/ca/ca-state.ts'
import type { CompletedLogin, OidcSettings } from './oidc-types.ts'

/** What every token of one sign-in says about it (carried from the login through every refresh). */
export interface TokenBasis {
  identityId: string
  apiSessionId: string
  authenticatorId: string
  clientId: string
  amr: readonly string[]
  /** Seconds. */
  authTime: number
  scopes: readonly string[]
  configTypeIds: readonly string[]
  /** SHA-1 hex fingerprints of the certificates the tokens are bound to; null for none. */
  certFingerprints: readonly string[] | null
  authCertFingerprint: string
  sdkInfo: SdkInfo | null
  envInfo: EnvInfo | null
  remoteAddress: string
  isCertExtendable: boolean
}

/** The claims of an access or refresh token as edgeplane reads them (standard ones and ziti's). */
export interface TokenClaims extends TokenBasis {
  type: 'a' | 'r'
  jti: string
  /** Seconds. */
  iat: number
  exp: number
  isAdmin: boolean
}

export interface IssuedTokens {
  access_token: string
  token_type: 'Bearer'
  refresh_token?: string
  expires_in: number
  id_token?: string
  scope: string
  /** A client certificate signed from the CSR given at login or with the grant. */
  session_cert?: string
}

/** Why a token was refused: past its `exp` (or before its `nbf`), or anything else. */
export type TokenFailure = 'expired' | 'invalid'

export interface OidcTokenDeps {
  ca: CaActor
  identity(id: string): Identity | undefined
  /** The authenticator a sign-in used (absent: no authenticator is read, `z_cer`/`z_ckrr` are false). */
  authenticator?(id: string): Authenticator | undefined
  clock: Clock
  settings: Pick<OidcSettings, 'accessTokenMs' | 'idTokenMs' | 'refreshTokenMs'>
}

/** The signing certificates tokens may name by `kid` (this node's today; every member's in a cluster). */
export type TokenKeys = () => ReadonlyMap<string, JwtVerifier>

export interface OidcTokens {
  /** Mints the tokens of `basis` for `issuer`; a refresh token only with `offline_access`, an ID token only with `openid`. */
  mint(basis: TokenBasis, issuer: string, extra?: { nonce?: string; code?: string; sessionCert?: string }): Promise<IssuedTokens>
  /** The claims of a valid token of `type`, or why it is refused. */
  verify(token: string, type: 'a' | 'r'): Promise<TokenClaims | TokenFailure>
  /** The `kid` of a token's header without checking anything (which signer it claims); undefined when unreadable. */
  kidOf(token: string): string | undefined
  /** The payload of any token this controller signed (an ID token too), expired or not; undefined otherwise. */
  signedPayload(token: string): Promise<Record<string, unknown> | undefined>
  /** The TOTP token of an access token's session (`z_t:"t"`): proof that a TOTP code was given at `issuedAt` (ms). */
  totpToken(claims: TokenClaims, issuer: string): Promise<{ token: string; issuedAt: number }>
}

/** The basis of the first tokens of a completed sign-in. */
export function basisOfLogin(login: CompletedLogin): TokenBasis {
  const p = login.primary
  return {
    identityId: p.identityId,
    apiSessionId: login.apiSessionId,
    authenticatorId: p.authenticatorId,
    clientId: login.clientId,
    amr: [...login.amr],
    authTime: Math.floor(p.authTime / 1000),
    scopes: [...login.scopes],
    configTypeIds: [...login.configTypeIds],
    certFingerprints: p.certFingerprint ? [p.certFingerprint] : null,
    authCertFingerprint: p.certFingerprint ?? '',
    sdkInfo: p.sdkInfo ?? null,
    envInfo: p.envInfo ?? null,
    remoteAddress: p.remoteAddress,
    isCertExtendable: p.isCertExtendable,
  }
}

/** OIDC Core's `at_hash`/`c_hash`: the left half of the hash the signing algorithm uses, base64url. */
function halfHash(value: string, alg: string): string {
  const bits = /(\d{3})$/.exec(alg)?.[1] ?? '256'
  const digest = createHash(`sha${bits === '512' ? '512' : bits === '384' ? '384' : '256'}`).update(value).digest()
  return digest.subarray(0, digest.length / 2).toString('base64url')
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const objectOrNull = <T>(v: unknown): T | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as T) : null)

/** The claims of a verified payload; undefined when a claim edgeplane relies on is missing or of the wrong type. */
function claimsOf(p: JWTPayload & Record<string, unknown>): TokenClaims | undefined {
  if ((p.z_t !== 'a' && p.z_t !== 'r') || typeof p.sub !== 'string' || p.sub === '' || typeof p.jti !== 'string') return undefined
  if (typeof p.z_asid !== 'string' || p.z_asid === '' || typeof p.iat !== 'number' || typeof p.exp !== 'number') return undefined
  const aud = Array.isArray(p.aud) ? p.aud : [p.aud]
  return {
    type: p.z_t,
    jti: p.jti,
    iat: p.iat,
    exp: p.exp,
    identityId: p.sub,
    apiSessionId: p.z_asid,
    authenticatorId: str(p.z_authid),
    clientId: str(p.client_id) || str(aud[0]),
    amr: strings(p.amr),
    authTime: typeof p.auth_time === 'number' ? p.auth_time : p.iat,
    scopes: strings(p.scopes),
    configTypeIds: strings(p.z_ct),
    certFingerprints: Array.isArray(p.z_cfs) ? strings(p.z_cfs) : null,
    authCertFingerprint: str(p.z_acf),
    sdkInfo: objectOrNull<SdkInfo>(p.z_sdk),
    envInfo: objectOrNull<EnvInfo>(p.z_env),
    remoteAddress: str(p.z_ra),
    isCertExtendable: p.z_ice === true,
    isAdmin: p.z_ia === true,
  }
}

/** A tolerance past any token's expiry (100 years), for checks of who a token names rather than whether it is live. */
const ANY_AGE_S = 100 * 365 * 24 * 3600

function kidOf(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).kid
  } catch {
    return undefined
  }
}

export function createOidcTokens(deps: OidcTokenDeps, keys: TokenKeys): OidcTokens {
  const keyOf = (token: string): JwtVerifier | undefined => {
    const kid = kidOf(token)
    return kid === undefined ? undefined : keys().get(kid)
  }
  const sign = (claims: Record<string, unknown>) => deps.ca.ask({ type: 'ca.signJwt', key: 'server', claims })
  const alg = () => deps.ca.snapshot().jwtVerifiers.server.alg

  /** The claims access and refresh tokens share (ziti's custom claims and the standard ones but `exp`, `jti`). */
  const sharedClaims = (b: TokenBasis, identity: Identity | undefined, issuer: string, iat: number) => {
    const a = deps.authenticator?.(b.authenticatorId)
    const cert = a?.method === 'cert' && a.identityId === b.identityId ? a : undefined
    return {
      iss: issuer,
      sub: b.identityId,
      aud: [b.clientId],
      iat,
      nbf: iat,
      client_id: b.clientId,
      amr: b.amr,
      auth_time: b.authTime,
      z_asid: b.apiSessionId,
      ...(identity?.isAdmin ? { z_ia: true } : {}),
      ...(identity?.externalId ? { z_eid: identity.externalId } : {}),
      z_ct: b.configTypeIds,
      z_aid: b.clientId,
      scopes: b.scopes,
      z_cfs: b.certFingerprints,
      z_acf: b.authCertFingerprint,
      z_sdk: b.sdkInfo,
      z_env: b.envInfo,
      z_ra: b.remoteAddress,
      z_ice: b.isCertExtendable,
      z_cae: false,
      z_authid: b.authenticatorId,
      z_cer: cert?.isExtendRequested ?? false,
      z_ckrr: cert?.isKeyRollRequested ?? false,
      z_iccc: false,
    }
  }

  return {
    async mint(b, issuer, extra = {}) {
      const identity = deps.identity(b.identityId)
      const iat = Math.floor(deps.clock.now() / 1000)
      const accessS = Math.floor(deps.settings.accessTokenMs / 1000)
      const shared = sharedClaims(b, identity, issuer, iat)
      const access = await sign({ ...shared, z_t: 'a', exp: iat + accessS, jti: newUuid() })
      const withRefresh = b.scopes.includes('offline_access')
      const refresh = withRefresh ? await sign({ ...shared, z_t: 'r', exp: iat + Math.floor(deps.settings.refreshTokenMs / 1000), jti: newUuid() }) : undefined
      let idToken: string | undefined
      if (b.scopes.includes('openid')) {
        const a = alg()
        idToken = await sign({
          iss: issuer,
          sub: b.identityId,
          aud: [b.clientId],
          exp: iat + Math.floor(deps.settings.idTokenMs / 1000),
          iat,
          auth_time: b.authTime,
          amr: b.amr,
          azp: b.clientId,
          client_id: b.clientId,
          at_hash: halfHash(access, a),
          ...(extra.code ? { c_hash: halfHash(extra.code, a) } : {}),
          ...(extra.nonce ? { nonce: extra.nonce } : {}),
          name: identity?.name ?? '',
          ...(identity?.isAdmin ? { z_ia: true } : {}),
          ...(identity?.externalId ? { z_eid: identity.externalId } : {}),
        })
      }
      return {
        access_token: access,
        token_type: 'Bearer',
        ...(refresh ? { refresh_token: refresh } : {}),
        expires_in: accessS,
        ...(idToken ? { id_token: idToken } : {}),
        scope: b.scopes.join(' '),
        ...(extra.sessionCert ? { session_cert: extra.sessionCert } : {}),
      }
    },

    async verify(token, type) {
      const key = keyOf(token)
      if (!key) return 'invalid'
      try {
        const { payload } = await jwtVerify(token, key.publicKey, { algorithms: [key.alg], currentDate: new Date(deps.clock.now()) })
        const claims = claimsOf(payload as JWTPayload & Record<string, unknown>)
        return claims?.type === type ? claims : 'invalid'
      } catch (e) {
        return e instanceof joseErrors.JWTExpired || (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'nbf') ? 'expired' : 'invalid'
      }
    },

    kidOf,

    async totpToken(claims, issuer) {
      const issuedAt = deps.clock.now()
      const token = await sign({ z_asid: claims.apiSessionId, z_t: 't', sub: claims.identityId, iss: issuer, iat: Math.floor(issuedAt / 1000), aud: [claims.clientId] })
      return { token, issuedAt }
    },

    async signedPayload(token) {
      const key = keyOf(token)
      if (!key) return undefined
      try {
        // any time from its issue on: an expired token still proves who it was issued to
        const { payload } = await jwtVerify(token, key.publicKey, { algorithms: [key.alg], clockTolerance: ANY_AGE_S })
        return payload as Record<string, unknown>
      } catch {
        return undefined
      }
    },
  }
}
