/**
 * Service session tokens: JWTs signed with the controller's intermediate CA key, carrying the claims SDKs and routers
 * read (the service as `sub`, the session id as `jti`, the API session and identity, the session type).
 */
import { SignJWT, jwtVerify, type JWTPayload } from 'jose'
import { publicKeyFromPrivateKey } from '../../pki/pki-keys.ts'
import type { PolicyType } from '../../domain/policy/policy-types.ts'

export interface SessionTokenClaims {
  sessionId: string
  apiSessionId: string
  identityId: string
  serviceId: string
  type: PolicyType
}

export interface SessionTokens {
  sign(c: SessionTokenClaims, now: number): Promise<string>
  /** The claims of a valid token, or undefined (bad signature, expired, not a service session token). */
  verify(token: string, now: number): Promise<SessionTokenClaims | undefined>
}

const YEAR_S = 365 * 24 * 3600

function algorithmOf(key: CryptoKey): string {
  const alg = key.algorithm as { name: string; namedCurve?: string }
  if (alg.name === 'ECDSA') return alg.namedCurve === 'P-384' ? 'ES384' : alg.namedCurve === 'P-521' ? 'ES512' : 'ES256'
  if (alg.name === 'Ed25519') return 'EdDSA'
  return 'RS256'
}

export async function createSessionTokens(privateKey: CryptoKey, issuer: () => string): Promise<SessionTokens> {
  const publicKey = await publicKeyFromPrivateKey(privateKey)
  const alg = algorithmOf(privateKey)
  return {
    async sign(c, now) {
      const iat = Math.floor(now / 1000)
      return new SignJWT({ z_asid: c.apiSessionId, z_iid: c.identityId, z_t: 's', z_st: c.type, z_leg: true })
        .setProtectedHeader({ alg, typ: 'JWT' })
        .setIssuer(issuer())
        .setSubject(c.serviceId)
        .setAudience(['openziti'])
        .setIssuedAt(iat)
        .setExpirationTime(iat + YEAR_S)
        .setJti(c.sessionId)
        .sign(privateKey)
    },
    async verify(token, now) {
      let payload: JWTPayload
      try {
        ;({ payload } = await jwtVerify(token, publicKey, { audience: 'openziti', currentDate: new Date(now) }))
      } catch {
        return undefined
      }
      const p = payload as JWTPayload & { z_asid?: unknown; z_iid?: unknown; z_t?: unknown; z_st?: unknown }
      if (p.z_t !== 's' || typeof p.jti !== 'string' || typeof p.sub !== 'string') return undefined
      if (typeof p.z_asid !== 'string' || typeof p.z_iid !== 'string' || (p.z_st !== 'Dial' && p.z_st !== 'Bind')) return undefined
      return { sessionId: p.jti, apiSessionId: p.z_asid, identityId: p.z_iid, serviceId: p.sub, type: p.z_st }
    },
  }
}
