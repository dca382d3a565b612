// API sessions as stored (src/domain/session/session-stored.ts): the token sealed, bound to its session id, and
// checked against the record's tokenHash when opened (a refused one reads as stored: a session without a token); a
// record without a token stored and read as it is.
import { describe, expect, it } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { sealKeyOf } from '../../../../src/store/store-seal.ts'
import { fromStoredApiSession, toStoredApiSession } from '../../../../src/domain/session/session-stored.ts'
import { hashToken, type ApiSession } from '../../../../src/domain/session/session-types.ts'

const key = sealKeyOf(randomBytes(32), '/nowhere/secrets.key')
const token = '6f1d6c1e-2b0e-4c4a-9a55-2a9a1f0b7c10'
const record: ApiSession = {
  id: 'c-1', tokenHash: hashToken(token), identityId: 'i1', authenticatorId: 'a1', configTypes: [], ipAddress: '::1',
  isMfaRequired: false, isMfaComplete: false, mfaCompletedAt: null, isCertExtendable: false, tags: {}, createdAt: 1, updatedAt: 1, lastActivityAt: 1,
}

describe('a stored API session', () => {
  it('holds its token sealed, and reads back whole', () => {
    const stored = toStoredApiSession({ ...record, token }, key)
    expect(JSON.stringify(stored)).not.toContain(token)
    expect(stored).not.toHaveProperty('token')
    expect(fromStoredApiSession(JSON.parse(JSON.stringify(stored)), key)).toEqual({ ...record, token })
  })

  it('without a token is stored and read as it is', () => {
    expect(toStoredApiSession(record, key)).toEqual(record)
    expect(fromStoredApiSession(record, key)).toEqual(record)
  })

  it('refuses a sealed token moved to another record, or one that is not the record\'s token: read as stored, without a token', () => {
    const stored = toStoredApiSession({ ...record, token }, key)
    const moved = { ...stored, id: 'c-2' }
    expect(fromStoredApiSession(moved, key)).toEqual(moved)
    const other = toStoredApiSession({ ...record, token: 'another-token-of-the-same-id' }, key)
    expect(fromStoredApiSession(other, key)).toEqual(other)
    expect(fromStoredApiSession(other, key)).not.toHaveProperty('token')
  })
})
