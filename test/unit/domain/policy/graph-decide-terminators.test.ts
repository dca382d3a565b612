// The pure checks of a router's terminator requests (src/domain/policy/graph-decide-terminators.ts; ziti
// controller/handler_edge_ctrl/common.go validateExistingTerminator, verifyTerminator; handler_ctrl/base.go
// filterOwnedTerminators).
import { describe, expect, it } from 'bun:test'
import { conflictOf, isTerminatorCost, isTerminatorId, MAX_TERMINATOR_COST, oversizedField, ownedTerminator, removableIds, TERMINATOR_LIMITS, withCostAndPrecedence } from '../../../../src/domain/policy/graph-decide-terminators.ts'
import type { Terminator } from '../../../../src/domain/policy/policy-types.ts'

const t = (over: Partial<Terminator> = {}): Terminator => ({
  id: 't-1', serviceId: 's', routerId: 'r', binding: 'edge', address: 't-1', identity: '', identitySecret: null, cost: 5, precedence: 'default',
  hostId: 'h', isSystem: true, peerData: {}, sourceCtrl: 'c', tags: {}, createdAt: 0, updatedAt: 0, ...over,
})

describe('conflictOf', () => {
  const claim = { binding: 'edge', serviceId: 's', routerId: 'r', hostId: 'h' }
  it('is undefined for the same terminator, whatever its cost, precedence, instance or peer data', () => {
    expect(conflictOf(t({ cost: 9, precedence: 'failed', identity: 'x', peerData: { '1': 'AA==' } }), claim)).toBeUndefined()
  })
  it('names the first field that differs, in the order binding, service, router, identity', () => {
    expect(conflictOf(t({ binding: 'transport', serviceId: 'o', routerId: 'o', hostId: 'o' }), claim)).toBe('binding')
    expect(conflictOf(t({ serviceId: 'o', routerId: 'o', hostId: 'o' }), claim)).toBe('service')
    expect(conflictOf(t({ routerId: 'o', hostId: 'o' }), claim)).toBe('router')
    expect(conflictOf(t({ hostId: 'o' }), claim)).toBe('identity')
  })
})

describe('isTerminatorCost', () => {
  it('takes 0..65535 integers only', () => {
    expect([0, 1, MAX_TERMINATOR_COST].map(isTerminatorCost)).toEqual([true, true, true])
    expect([-1, MAX_TERMINATOR_COST + 1, 1.5, Number.NaN, 2 ** 32 - 1].map(isTerminatorCost)).toEqual([false, false, false, false, false])
  })
})

describe('ownedTerminator', () => {
  it('refuses a missing terminator, one on another router (naming it), one of another binding (naming it)', () => {
    expect(ownedTerminator(undefined, 'r', 'edge')).toEqual({ ok: false, refusal: { reason: 'not-found' } })
    expect(ownedTerminator(t(), 'x', 'edge')).toEqual({ ok: false, refusal: { reason: 'other-router', routerId: 'r' } })
    expect(ownedTerminator(t({ binding: 'transport' }), 'r', 'edge')).toEqual({ ok: false, refusal: { reason: 'other-binding', binding: 'transport' } })
  })
  it('takes any binding when none is asked for', () => {
    expect(ownedTerminator(t({ binding: 'transport' }), 'r', undefined)).toMatchObject({ ok: true })
  })
})

describe('removableIds', () => {
  it('keeps the router\'s own and absent ids (a create may be on its way), drops others\', duplicates and impossible ids', () => {
    const known = new Map([['mine', { routerId: 'r' }], ['theirs', { routerId: 'x' }]])
    expect(removableIds(['mine', 'absent', 'theirs', 'mine', 'absent', '', 'y'.repeat(513)], 'r', (id) => known.get(id))).toEqual({ kept: ['mine', 'absent'], rejected: 1 })
  })
})

describe('oversizedField and isTerminatorId', () => {
  const ok = { id: 'i'.repeat(TERMINATOR_LIMITS.id), address: 'a', binding: 'edge', instanceId: '', instanceSecretBytes: 0, peerDataBytes: TERMINATOR_LIMITS.peerData }
  it('takes fields at their limit, names the first over it (bytes of UTF-8)', () => {
    expect(oversizedField(ok)).toBeUndefined()
    expect(oversizedField({ ...ok, id: 'é'.repeat(257) })).toBe('id')
    expect(oversizedField({ ...ok, address: 'a'.repeat(4_097) })).toBe('address')
    expect(oversizedField({ ...ok, binding: 'b'.repeat(257) })).toBe('binding')
    expect(oversizedField({ ...ok, instanceId: 'n'.repeat(4_097) })).toBe('instanceId')
    expect(oversizedField({ ...ok, instanceSecretBytes: 4_097 })).toBe('instanceSecret')
    expect(oversizedField({ ...ok, peerDataBytes: TERMINATOR_LIMITS.peerData + 1 })).toBe('peerData')
  })
  it('an id is 1..512 bytes', () => {
    expect([isTerminatorId(''), isTerminatorId('x'), isTerminatorId('x'.repeat(512)), isTerminatorId('x'.repeat(513))]).toEqual([false, true, true, false])
  })
})

describe('withCostAndPrecedence', () => {
  it('takes the fields given and tells whether anything changed', () => {
    expect(withCostAndPrecedence(t(), {})).toEqual({ cost: 5, precedence: 'default', changed: false })
    expect(withCostAndPrecedence(t(), { cost: 5, precedence: 'default' })).toEqual({ cost: 5, precedence: 'default', changed: false })
    expect(withCostAndPrecedence(t(), { precedence: 'required' })).toEqual({ cost: 5, precedence: 'required', changed: true })
    expect(withCostAndPrecedence(t(), { cost: 0 })).toEqual({ cost: 0, precedence: 'default', changed: true })
  })
})
