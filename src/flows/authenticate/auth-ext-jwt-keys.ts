/**
 * The verification keys of external JWT signers, cached per signer record (every write replaces the record, so a
 * changed certificate or endpoint is never served from an old entry).
 * - a `certPem` signer verifies with its certificate's public key, imported once per algorithm
 * - a `jwksEndpoint` signer uses jose's remote JWK set: fetched on first use, cached, fetched again when a token names
 *   a `kid` the set lacks (at most once per cooldown, so tokens with made-up kids cannot make the controller hammer
 *   the endpoint), and after its maximum age
 * - only asymmetric signatures are accepted: RS*, PS*, ES* (never `none` or HMAC, whose key would be public)
 */
import { createRemoteJWKSet, importX509, type CryptoKey as JoseKey, type JWTVerifyGetKey } from 'jose'
import type { ExternalJwtSigner } from '../../domain/ca/ca-jwt-signer-types.ts'

/** The JWS algorithms a signer's token may use. */
export const EXT_JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512']

export interface SignerKeyOptions {
  /** The least time between two fetches of one JWKS endpoint for unknown kids (default 5 s). */
  jwksCooldownMs?: number
  /** How long a fetched JWK set is used before it is fetched again (default 10 minutes). */
  jwksMaxAgeMs?: number
  /** How long a JWKS fetch may take (default 5 s). */
  jwksTimeoutMs?: number
}

/** The key lookup jose's jwtVerify calls for a signer's token. */
export interface SignerKeys {
  keyOf(signer: ExternalJwtSigner): JWTVerifyGetKey
}

export function createSignerKeys(opts: SignerKeyOptions = {}): SignerKeys {
  const cache = new WeakMap<ExternalJwtSigner, JWTVerifyGetKey>()
  const build = (signer: ExternalJwtSigner): JWTVerifyGetKey => {
    if (signer.jwksEndpoint !== null) {
      return createRemoteJWKSet(new URL(signer.jwksEndpoint), {
        cooldownDuration: opts.jwksCooldownMs ?? 5_000,
        cacheMaxAge: opts.jwksMaxAgeMs ?? 600_000,
        timeoutDuration: opts.jwksTimeoutMs ?? 5_000,
      })
    }
    const certPem = signer.certPem
    if (certPem === null) throw new TypeError(`signer ${signer.id} has neither certPem nor jwksEndpoint`)
    const byAlg = new Map<string, Promise<JoseKey>>()
    return (header) => {
      const alg = header.alg ?? ''
      let key = byAlg.get(alg)
      if (!key) byAlg.set(alg, (key = importX509(certPem, alg)))
      return key
    }
  }
  return {
    keyOf(signer) {
      let keys = cache.get(signer)
      if (!keys) cache.set(signer, (keys = build(signer)))
      return keys
    },
  }
}
