/**
 * Bearer access tokens on the edge APIs: which `Authorization: Bearer` value opens a request's session, and whether
 * it may. Only consulted when the request has no `zt-session` (that one wins; bearers are then ext-jwt secondaries).
 * - the session token is the first bearer (of at most 3) whose header names one of this controller's signing
 *   certificates (`kid`) and whose payload says `z_t:"a"` with a `z_asid`; others (ext-jwt tokens, refresh tokens) are
 *   not sessions. No such bearer: `missing`, or `invalid` when a bearer of ours was of another kind or unreadable
 * - a token's signature and claims are checked once and cached by the token (bounded; an entry is dropped at its
 *   expiry, and all are when a cluster node is removed, whose key then verifies nothing), so a bearer request then
 *   costs a map lookup, the expiry, three revocation lookups and the certificate binding
 * - refused: past `exp` (`expired`), revoked by `jti`, by identity (issued at or before the revocation's second) or
 *   by API session, and a `z_cfs` binding the TLS client certificate does not meet (`invalid`)
 * @see ../shared/reference/oidc-and-ha.md §4
 */
import { createHash } from 'node:crypto'
import { decodeJwt } from 'jose'
import { BoundedMap } from '../../lib/bounded-map.ts'
import { bearerTokens } from '../authenticate/auth-ext-jwt.ts'
import type { OidcTokens, TokenClaims, TokenKeys } from './oidc-tokens.ts'

export type BearerFailure = 'missing' | 'invalid' | 'expired'

export type BearerOutcome = { readonly claims: TokenClaims; readonly token: string } | { readonly failure: BearerFailure }

export interface BearerCheckDeps {
  tokens: OidcTokens
  keys: TokenKeys
  now(): number
  /** Whether a token of these claims was revoked (the identity actor's revocations). */
  isRevoked(claims: TokenClaims, now: number): boolean
  /** How many verified tokens to keep (default 50,000). */
  maxEntries?: number
}

export interface BearerCheck {
  /** The session a request's Authorization header opens, or why none; synchronous once a token was seen. */
  check(authorization: string | null, peerLeaf: Uint8Array | undefined): BearerOutcome | Promise<BearerOutcome>
  /** Drops every verified token (a cluster node was removed: its tokens must be checked against the keys again). */
  forgetVerified(): void
}

/** SHA-1 hex of a certificate's DER, kept per certificate object (a connection's chain is read once and kept). */
const fingerprints = new WeakMap<Uint8Array, string>()
function fingerprintOf(der: Uint8Array): string {
  let f = fingerprints.get(der)
  if (f === undefined) fingerprints.set(der, (f = createHash('sha1').update(der).digest('hex')))
  return f
}

export function createBearerCheck(deps: BearerCheckDeps): BearerCheck {
  let verified = new BoundedMap<string, TokenClaims>(deps.maxEntries ?? 50_000)

  /** The first bearer that is, or claims to be, one of our access tokens (unverified); or why there is none. */
  const candidateOf = (bearers: readonly string[]): { token: string; known?: TokenClaims } | BearerFailure => {
    let sawOurs = false
    for (const token of bearers) {
      const known = verified.get(token)
      if (known) return { token, known }
      const kid = deps.tokens.kidOf(token)
      if (kid === undefined || !deps.keys().has(kid)) continue
      sawOurs = true
      try {
        const p = decodeJwt(token)
        if (p.z_t === 'a' && typeof p.z_asid === 'string' && p.z_asid !== '') return { token }
      } catch {
        // unreadable: not a session token
      }
    }
    return sawOurs ? 'invalid' : 'missing'
  }

  const admit = (token: string, claims: TokenClaims, peerLeaf: Uint8Array | undefined): BearerOutcome => {
    const now = deps.now()
    if (claims.exp * 1000 <= now) {
      verified.delete(token)
      return { failure: 'expired' }
    }
    if (deps.isRevoked(claims, now)) return { failure: 'invalid' }
    const bound = claims.certFingerprints
    if (bound && bound.length > 0 && (!peerLeaf || !bound.includes(fingerprintOf(peerLeaf)))) return { failure: 'invalid' }
    return { claims, token }
  }

  return {
    forgetVerified() {
      verified = new BoundedMap<string, TokenClaims>(deps.maxEntries ?? 50_000)
    },
    check(authorization, peerLeaf) {
      // the common case, one bearer, without the general parse (this runs on every bearer request)
      const bearers =
        authorization !== null && authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ' && !authorization.includes(',')
          ? [authorization.slice(7).trim()]
          : bearerTokens(authorization)
      if (bearers.length === 0) return { failure: 'missing' }
      const candidate = candidateOf(bearers)
      if (typeof candidate === 'string') return { failure: candidate }
      const { token, known } = candidate
      if (known) return admit(token, known, peerLeaf)
      return deps.tokens.verify(token, 'a').then((claims) => {
        if (typeof claims === 'string') return { failure: claims }
        verified.set(token, claims)
        return admit(token, claims, peerLeaf)
      })
    },
  }
}
