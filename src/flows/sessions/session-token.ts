/**
 * Service session tokens: JWTs the CA actor signs with the controller's intermediate CA key, carrying the claims SDKs
 * and routers read (the service as `sub`, the session id as `jti`, the API session and identity, the session type).
 * Signing goes through the CA's mailbox; verifying uses the public key the CA shows, without queueing.
 */
import { jwtVerify, type JWTPayload } from 'jose'
import type { PolicyType } from '../../domain/policy/policy-types.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'

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

export function createSessionTokens(ca: CaActor, issuer: () => string): SessionTokens {
  const verifier = ca.snapshot().jwtVerifiers['signing-ca']
  return {
    sign(c, now) {
      const iat = Math.floor(now / 1000)
      const claims = {
        z_asid: c.apiSessionId,
        z_iid: c.identityId,
        z_t: 's',
        z_st: c.type,
        z_leg: c.legacy ?? true,
        iss: issuer(),
        sub: c.serviceId,
        aud: ['openziti'],
        iat,
        exp: iat + YEAR_S,
        jti: c.sessionId,
      }
      return ca.ask({ type: 'ca.signJwt', key: 'signing-ca', claims })
    },
    async verify(token, now) {
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
