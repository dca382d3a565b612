// The revocation decision (domain/identity/identity-revocation.ts; oidc-and-ha.md §4 "Resolving the session"): by
// jti, by z_asid, by sub with the real controller's cut-off (createdAt truncated to the second ≥ iat), expired
// revocations ignored; the record a new revocation becomes; the checks of an admin's request.
import { describe, expect, it } from 'bun:test'
import {
  decideAdminRevocation,
  isRevokedBy,
  revocationLifetimeMs,
  toRevocation,
  type Revocation,
} from '../../../../src/domain/identity/identity-revocation.ts'
import { ApiError } from '../../../../src/errors/api-error.ts'

const NOW = 1_767_225_600_000 // 2026-01-01T00:00:00Z
const LIFETIME = revocationLifetimeMs(24 * 3_600_000)
const table = (...rs: Revocation[]) => new Map(rs.map((r) => [r.id, r]))
const rev = (id: string, type: Revocation['type'], createdAt = NOW, expiresAt = createdAt + LIFETIME): Revocation => ({
  id, type, createdAt, updatedAt: createdAt, expiresAt, tags: {},
})
const sec = (ms: number) => Math.floor(ms / 1000)

describe('isRevokedBy', () => {
  it('revokes a token by its jti, and only by a JTI revocation', () => {
    const byId = table(rev('jti-1', 'JTI'))
    expect(isRevokedBy(byId, { jti: 'jti-1', sub: 'alice', iat: sec(NOW) + 100 }, NOW)).toBe(true)
    expect(isRevokedBy(byId, { jti: 'jti-2', sub: 'alice', iat: sec(NOW) + 100 }, NOW)).toBe(false)
    expect(isRevokedBy(byId, { sub: 'alice', iat: sec(NOW) + 100 }, NOW)).toBe(false)
    // the same id under another type does not revoke by jti
    expect(isRevokedBy(table(rev('jti-1', 'API_SESSION')), { jti: 'jti-1', sub: 'alice', iat: 0 }, NOW)).toBe(false)
  })

  it('revokes every token of an API session (z_asid), whatever its iat', () => {
    const byId = table(rev('asid-1', 'API_SESSION'))
    expect(isRevokedBy(byId, { jti: 'x', sub: 'alice', iat: sec(NOW) + 3_600, apiSessionId: 'asid-1' }, NOW + 1)).toBe(true)
    expect(isRevokedBy(byId, { jti: 'x', sub: 'alice', iat: sec(NOW), apiSessionId: 'asid-2' }, NOW)).toBe(false)
    expect(isRevokedBy(byId, { jti: 'asid-1', sub: 'alice', iat: 0 }, NOW)).toBe(false)
  })

  it('revokes an identity\'s tokens issued in the revocation\'s second or before, not later ones', () => {
    const createdAt = NOW + 999 // the second is sec(NOW)
    const byId = table(rev('alice', 'IDENTITY', createdAt))
    const token = (iat: number) => ({ jti: 'j', sub: 'alice', iat, apiSessionId: 'a' })
    expect(isRevokedBy(byId, token(sec(NOW) - 60), NOW + 1_000)).toBe(true)
    expect(isRevokedBy(byId, token(sec(NOW)), NOW + 1_000)).toBe(true)
    expect(isRevokedBy(byId, token(sec(NOW) + 1), NOW + 1_000)).toBe(false)
    expect(isRevokedBy(byId, { ...token(sec(NOW)), sub: 'bob' }, NOW + 1_000)).toBe(false)
    // a JTI revocation whose id happens to be the sub has no cut-off role
    expect(isRevokedBy(table(rev('alice', 'JTI')), token(0), NOW)).toBe(false)
  })

  it('ignores a revocation from its expiresAt on', () => {
    const expiresAt = NOW + 10_000
    const byId = table(rev('jti-1', 'JTI', NOW, expiresAt), rev('asid-1', 'API_SESSION', NOW, expiresAt), rev('alice', 'IDENTITY', NOW, expiresAt))
    for (const t of [{ jti: 'jti-1', sub: 'x', iat: 0 }, { sub: 'x', iat: 0, apiSessionId: 'asid-1' }, { sub: 'alice', iat: 0 }]) {
      expect(isRevokedBy(byId, t, expiresAt - 1)).toBe(true)
      expect(isRevokedBy(byId, t, expiresAt)).toBe(false)
    }
  })
})

describe('toRevocation', () => {
  it('is created at now, lives the lifetime unless given an expiry, and has empty tags unless given', () => {
    expect(toRevocation({ id: 'a', type: 'JTI' }, NOW, LIFETIME)).toEqual({ id: 'a', type: 'JTI', createdAt: NOW, updatedAt: NOW, expiresAt: NOW + LIFETIME, tags: {} })
    expect(toRevocation({ id: 'a', type: 'IDENTITY', expiresAt: NOW + 5, tags: { k: 'v' } }, NOW, LIFETIME)).toMatchObject({ expiresAt: NOW + 5, tags: { k: 'v' } })
  })

  it('outlives the refresh token by a minute', () => {
    expect(revocationLifetimeMs(3_600_000)).toBe(3_660_000)
  })
})

describe('decideAdminRevocation', () => {
  const exists = (id: string) => id === 'known'
  const refusal = (f: () => void) => {
    try {
      f()
    } catch (e) {
      return e instanceof ApiError ? e.code : 'not an ApiError'
    }
    return undefined
  }

  it('takes a UUID for JTI and API_SESSION, and a known identity for IDENTITY', () => {
    expect(refusal(() => decideAdminRevocation(exists, { id: '0b7e1c2a-4f3d-4e5a-9b8c-7d6e5f4a3b2c', type: 'JTI' }))).toBeUndefined()
    expect(refusal(() => decideAdminRevocation(exists, { id: '0B7E1C2A-4F3D-4E5A-9B8C-7D6E5F4A3B2C', type: 'API_SESSION' }))).toBeUndefined()
    expect(refusal(() => decideAdminRevocation(exists, { id: 'known', type: 'IDENTITY' }))).toBeUndefined()
  })

  it('refuses other ids: COULD_NOT_VALIDATE for a non-UUID, NOT_FOUND for an unknown identity', () => {
    expect(refusal(() => decideAdminRevocation(exists, { id: 'known', type: 'JTI' }))).toBe('COULD_NOT_VALIDATE')
    expect(refusal(() => decideAdminRevocation(exists, { id: '0b7e1c2a-4f3d-4e5a-9b8c-7d6e5f4a3b2c-x', type: 'API_SESSION' }))).toBe('COULD_NOT_VALIDATE')
    expect(refusal(() => decideAdminRevocation(exists, { id: '', type: 'JTI' }))).toBe('COULD_NOT_VALIDATE')
    expect(refusal(() => decideAdminRevocation(exists, { id: 'unknown', type: 'IDENTITY' }))).toBe('NOT_FOUND')
  })
})
