// Shared empty maps and role attribute lists of records held in memory by the hundred thousand.
import { describe, expect, it } from 'bun:test'
import { IdentityState } from '../../../src/actors/identity/identity-state.ts'
import type { Identity } from '../../../src/domain/identity/identity-types.ts'
import { ListPool, shareEmpty } from '../../../src/lib/shared-values.ts'

describe('shareEmpty', () => {
  it('answers one frozen object for every empty one and leaves others (and null) alone', () => {
    const a = shareEmpty({})
    expect(shareEmpty({})).toBe(a)
    expect(Object.isFrozen(a)).toBe(true)
    const full = { k: 'v' }
    expect(shareEmpty(full)).toBe(full)
    expect(shareEmpty(null)).toBeNull()
    expect(() => {
      ;(a as Record<string, string>).x = 'y'
    }).toThrow()
  })
})

describe('ListPool', () => {
  it('gives one array per list value and forgets a list once its last holder released it', () => {
    const pool = new ListPool()
    const a = pool.share(['web', 'ops'])!
    const b = pool.share(['web', 'ops'])!
    expect(b).toBe(a)
    expect(pool.share(['ops', 'web'])).not.toBe(a)
    // lists that join to the same text are still different lists
    expect(pool.share(['web\u0000ops'])).not.toBe(a)
    expect(pool.share(null)).toBeNull()
    expect(pool.size).toBe(3)
    pool.release(a)
    expect(pool.size).toBe(3)
    pool.release(b)
    expect(pool.size).toBe(2)
    expect(pool.share(['web', 'ops'])).not.toBe(a)
  })
})

describe('IdentityState keeps identities compact', () => {
  const identity = (id: string, attrs: string[] | null, tags: Record<string, string> = {}): Identity => ({
    id, name: `n-${id}`, typeId: 'User' as Identity['typeId'], isAdmin: false, isDefaultAdmin: false, roleAttributes: attrs, externalId: null,
    authPolicyId: 'default', appData: {}, tags, defaultHostingCost: 0, defaultHostingPrecedence: 'default' as Identity['defaultHostingPrecedence'],
    serviceHostingCosts: {}, serviceHostingPrecedences: {}, envInfo: {}, sdkInfo: {}, disabledAt: null, disabledUntil: null, createdAt: 1, updatedAt: 2,
  })

  it('stores an equal record whose empty maps are shared, and indexes role attributes as before', () => {
    const state = new IdentityState()
    const a = identity('a', ['web', 'ops'])
    const b = identity('b', ['web'], { team: 'x' })
    state.putIdentity(a)
    state.putIdentity(b)
    expect(state.identity('a')).toEqual(a)
    expect(state.identity('b')).toEqual(b)
    expect(state.identity('a')!.tags).toBe(state.identity('b')!.appData)
    expect(state.identity('b')!.tags).toEqual({ team: 'x' })
    expect(state.identity('a')!.roleAttributes![0]).toBe(state.identity('b')!.roleAttributes![0])
    state.putIdentity(identity('c', ['web', 'ops']))
    expect(state.identity('c')!.roleAttributes).toBe(state.identity('a')!.roleAttributes)
    state.removeIdentity('c')
    expect([...state.idsWithRole('web')].sort()).toEqual(['a', 'b'])
    state.putIdentity({ ...a, roleAttributes: ['ops'] })
    expect([...state.idsWithRole('web')]).toEqual(['b'])
    state.removeIdentity('b')
    expect([...state.idsWithRole('web')]).toEqual([])
    expect([...state.idsWithRole('ops')]).toEqual(['a'])
  })

  it('answers role questions first asked after changes as of the changes', () => {
    const state = new IdentityState()
    state.putIdentity(identity('a', ['web']))
    state.putIdentity(identity('b', ['web', 'ops']))
    state.putIdentity(identity('a', ['ops']))
    state.removeIdentity('b')
    expect([...state.idsWithRole('web')]).toEqual([])
    expect([...state.idsWithRole('ops')]).toEqual(['a'])
  })
})
