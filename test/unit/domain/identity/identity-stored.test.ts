// Identities as stored (src/domain/identity/identity-stored.ts): members at their default left out, put back when read.
import { describe, expect, it } from 'bun:test'
import { fromStoredIdentity, toStoredIdentity } from '../../../../src/domain/identity/identity-stored.ts'
import type { Identity } from '../../../../src/domain/identity/identity-types.ts'

const base: Identity = {
  id: 'i1', name: 'n', typeId: 'Default', isAdmin: false, isDefaultAdmin: false, roleAttributes: null, externalId: null,
  authPolicyId: 'default', appData: null, tags: {}, defaultHostingCost: 0, defaultHostingPrecedence: 'default',
  serviceHostingCosts: {}, serviceHostingPrecedences: {}, envInfo: {}, sdkInfo: {}, disabledAt: null, disabledUntil: null,
  createdAt: 1, updatedAt: 2,
}
const roundTrip = (i: Identity) => fromStoredIdentity(JSON.parse(JSON.stringify(toStoredIdentity(i))))

describe('stored identities', () => {
  it('leave out the members at their default and read back equal', () => {
    expect(toStoredIdentity(base)).toEqual({ id: 'i1', name: 'n', roleAttributes: null, createdAt: 1, updatedAt: 2 })
    expect(roundTrip(base)).toEqual(base)
  })

  it('keep every member that differs from its default, and members they do not know', () => {
    const full = {
      ...base, typeId: 'User', isAdmin: true, isDefaultAdmin: true, isRouterIdentity: true, roleAttributes: ['x', 'y'],
      externalId: 'ext', authPolicyId: 'p', appData: {}, tags: { t: 'v' }, defaultHostingCost: 3, defaultHostingPrecedence: 'required',
      serviceHostingCosts: { s: 1 }, serviceHostingPrecedences: { s: 'failed' }, envInfo: { os: 'linux' }, sdkInfo: { type: 'go' },
      disabledAt: 10, disabledUntil: 20, futureMember: 'kept',
    } as unknown as Identity
    expect(Object.keys(toStoredIdentity(full)).sort()).toEqual(Object.keys(full).sort())
    expect(roundTrip(full)).toEqual(full)
  })

  it('read a record stored whole (before the compact form) as it is', () => {
    const whole = { ...base, tags: { a: 'b' }, disabledAt: 5 }
    expect(fromStoredIdentity(JSON.parse(JSON.stringify(whole)))).toEqual(whole)
  })
})
