/**
 * Revocations of OIDC tokens: the record, the decision whether a token is revoked, and the checks of a new one.
 * - a JTI revocation revokes the one token (access or refresh) with that `jti`
 * - an API_SESSION revocation revokes every token carrying that `z_asid` (one sign-in and its refreshes)
 * - an IDENTITY revocation revokes every token of that identity (`sub`) issued in the second of the revocation or
 *   before it (the real controller's cut-off: `createdAt` truncated to the second ≥ the token's `iat`); a token issued
 *   in a later second (a login after the identity is enabled again) is not revoked
 * - a revocation whose `expiresAt` has passed revokes nothing (it is pruned later); it outlives every token it can
 *   apply to, the refresh tokens included (`revocationLifetimeMs`)
 * - one record per id: a new revocation of an id replaces the old one (a new `createdAt`, so a new cut-off)
 * @see edge-api management.yml revocationDetail, revocationCreate; ../shared/reference/oidc-and-ha.md §4
 */
import { ApiError } from '../../errors/api-error.ts'
import type { DeepReadonly } from '../../lib/deep-readonly.ts'
import { UUID_TEXT } from '../../lib/ids.ts'

/** The kinds of revocation, as the spec's `revocationTypeEnum`. */
export const REVOCATION_TYPES = ['JTI', 'IDENTITY', 'API_SESSION'] as const
export type RevocationType = (typeof REVOCATION_TYPES)[number]

/**
 * A stored revocation: `id` is the token's `jti` (JTI), the identity id (IDENTITY) or the API-session id `z_asid`
 * (API_SESSION). Times are epoch ms. Replaced, never changed in place.
 */
export type Revocation = DeepReadonly<{
  id: string
  type: RevocationType
  expiresAt: number
  createdAt: number
  updatedAt: number
  tags: Record<string, unknown>
}>

/** A revocation asked for: `expiresAt` absent means now + the revocation lifetime. */
export interface NewRevocation {
  id: string
  type: RevocationType
  expiresAt?: number
  tags?: Record<string, unknown>
}

/** What of a token the revocation check reads: `iat` in seconds, as in the JWT. */
export interface RevocableToken {
  jti?: string
  sub: string
  iat: number
  apiSessionId?: string
}

/** How long an automatic revocation (and one asked without `expiresAt`) lives: past the longest refresh token. */
export function revocationLifetimeMs(refreshTokenMs: number): number {
  return refreshTokenMs + 60_000
}

/** The default refresh-token lifetime (24 h, the reference's), when the actor is started without one. */
export const DEFAULT_REFRESH_TOKEN_MS = 24 * 60 * 60_000

/**
 * Whether a token is revoked by the revocations `byId` holds at `now`: three map lookups, no allocation (it runs on
 * every bearer request).
 */
export function isRevokedBy(byId: ReadonlyMap<string, Revocation>, t: RevocableToken, now: number): boolean {
  if (t.jti !== undefined) {
    const r = byId.get(t.jti)
    if (r !== undefined && r.type === 'JTI' && r.expiresAt > now) return true
  }
  if (t.apiSessionId !== undefined) {
    const r = byId.get(t.apiSessionId)
    if (r !== undefined && r.type === 'API_SESSION' && r.expiresAt > now) return true
  }
  const r = byId.get(t.sub)
  return r !== undefined && r.type === 'IDENTITY' && r.expiresAt > now && Math.floor(r.createdAt / 1000) >= t.iat
}

/** The record a new revocation becomes at `now` (created anew even when it replaces one). */
export function toRevocation(n: NewRevocation, now: number, lifetimeMs: number): Revocation {
  return { id: n.id, type: n.type, expiresAt: n.expiresAt ?? now + lifetimeMs, createdAt: now, updatedAt: now, tags: n.tags ?? {} }
}


/**
 * The checks of an admin's `POST /revocations`, as the real controller makes them: an IDENTITY revocation names an
 * identity that exists (404 otherwise); JTI and API_SESSION ids are UUIDs, as every `jti` and `z_asid` this
 * controller issues (COULD_NOT_VALIDATE on `id` otherwise). Revocations the controller makes itself skip them (a
 * deleted identity's revocation names an identity that is gone).
 */
export function decideAdminRevocation(identityExists: (id: string) => boolean, n: NewRevocation): void {
  if (n.type === 'IDENTITY') {
    if (!identityExists(n.id)) throw ApiError.notFound()
  } else if (!UUID_TEXT.test(n.id)) {
    throw ApiError.invalidField('id', 'must be a valid UUID', n.id)
  }
}
