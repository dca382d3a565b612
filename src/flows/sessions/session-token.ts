/**
 * Service session tokens: JWTs the CA actor signs, carrying exactly the claims an edge router reads
 * (ziti router/state/token.go NewServiceSessionToken, common/oidc_tokens.go ServiceAccessClaims): the service as
 * `sub`, the session id as `jti`, the API session the router holds as `z_asid`, the identity as `z_iid`, `z_t` "s",
 * the session type as `z_st`, `z_leg` for a session of a zt-session sign-in, `aud` ["openziti"].
 * - signed with the server certificate's key, its `kid` = SHA-1 hex of the certificate's DER: the key a router finds
 *   among the public keys of its data model (router/state/manager.go pubKeyLookup: usage JWTValidation, that kid), as
 *   the real controller signs them (GetRootTlsJwtSigner); on a cluster node, that node's certificate
 * - verified by `kid` against the signing certificates (this node's, every member's in a cluster); a token without a
 *   `kid` was signed by an edgeplane before this one with the intermediate CA's key, and is verified with that key
 *   (no router accepts it: a session asked for again gets a token signed anew, session-routes.ts)
 * Signing goes through the CA's mailbox; verifying uses the public keys the CA shows, without queueing.
 */
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import type { PolicyType } from '../../domain/policy/policy-types.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { JwtVerifier } from '../../actors/ca/ca-state.ts'
import type { TokenKeys } from '../oidc/oidc-tokens.ts'

export interface SessionTokenClaims {
  sessionId: string
  apiSessionId: string
  identityId: string
  serviceId: string
  type: PolicyType
  /** A session of a zt-session sign-in (stored); false for one of an OIDC sign-in (its token alone). */
  legacy?: boolean
}

/** The claims of a token that verified: whether it is a stored session's (`z_leg`) and when it was issued. */
export interface VerifiedSessionToken extends SessionTokenClaims {
  legacy: boolean
  /** `iat`, seconds. */
  iat: number
}

export interface SessionTokens {
  sign(c: SessionTokenClaims, now: number): Promise<string>
  /** The claims of a valid token, or undefined (bad signature, expired, not a service session token). */
  verify(token: string, now: number): Promise<VerifiedSessionToken | undefined>
}

const YEAR_S = 365 * 24 * 3600

/** The claims of a service session token as a router reads them (the names of ServiceAccessClaims' JSON). */
export function serviceAccessClaims(c: SessionTokenClaims, issuer: string, now: number): Record<string, unknown> {
  const iat = Math.floor(now / 1000)
  return {
    z_asid: c.apiSessionId,
    z_iid: c.identityId,
    z_t: 's',
    z_st: c.type,
    z_leg: c.legacy ?? true,
    iss: issuer,
    sub: c.serviceId,
    aud: ['openziti'],
    iat,
    exp: iat + YEAR_S,
    jti: c.sessionId,
  }
}

export function createSessionTokens(ca: CaActor, issuer: () => string, keys: TokenKeys): SessionTokens {
  const legacyVerifier = ca.snapshot().jwtVerifiers['signing-ca']
  const verifierOf = (token: string): JwtVerifier | undefined => {
    let kid: string | undefined
    try {
      kid = decodeProtectedHeader(token).kid
    } catch {
      return undefined
    }
    return kid === undefined ? legacyVerifier : keys().get(kid)
  }
  return {
    sign(c, now) {
      return ca.ask({ type: 'ca.signJwt', key: 'server', claims: serviceAccessClaims(c, issuer(), now) })
    },
    async verify(token, now) {
      const verifier = verifierOf(token)
      if (!verifier) return undefined
      let payload: JWTPayload
      try {
        ;({ payload } = await jwtVerify(token, verifier.publicKey, { audience: 'openziti', algorithms: [verifier.alg], currentDate: new Date(now) }))
      } catch {
        return undefined
      }
      const p = payload as JWTPayload & { z_asid?: unknown; z_iid?: unknown; z_t?: unknown; z_st?: unknown; z_leg?: unknown }
      if (p.z_t !== 's' || typeof p.jti !== 'string' || typeof p.sub !== 'string') return undefined
      if (typeof p.z_asid !== 'string' || typeof p.z_iid !== 'string' || (p.z_st !== 'Dial' && p.z_st !== 'Bind')) return undefined
      return { sessionId: p.jti, apiSessionId: p.z_asid, identityId: p.z_iid, serviceId: p.sub, type: p.z_st, legacy: p.z_leg === true, iat: p.iat ?? 0 }
    },
  }
}
