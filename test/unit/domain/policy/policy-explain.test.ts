// Why a policy does not select an entity, and the smallest verified fixes (src/domain/policy/policy-explain.ts).
import { describe, expect, it } from 'bun:test'
import { judgeRoles, smallestFixes, type PolicySide } from '../../../../src/domain/policy/policy-explain.ts'

const side = (id: string, semantic: 'AllOf' | 'AnyOf', roles: string[]): PolicySide => ({ id, semantic, roles })

describe('judgeRoles', () => {
  it('case=says what selected the entity', () => {
    expect(judgeRoles(side('p', 'AllOf', ['#all']), 'i1', []).matchedBy).toBe('#all')
    expect(judgeRoles(side('p', 'AllOf', ['@i1', '#x']), 'i1', []).matchedBy).toBe('@id')
    expect(judgeRoles(side('p', 'AnyOf', ['#a', '#b']), 'i1', ['b']).matchedBy).toBe('attributes')
  })

  it('case=AllOf misses the attributes the entity lacks, AnyOf all of them', () => {
    expect(judgeRoles(side('p', 'AllOf', ['#a', '#b', '#c']), 'i1', ['a'])).toEqual({ matches: false, matchedBy: null, missingRoles: ['#b', '#c'] })
    expect(judgeRoles(side('p', 'AnyOf', ['#a', '#b']), 'i1', ['c'])).toEqual({ matches: false, matchedBy: null, missingRoles: ['#a', '#b'] })
    expect(judgeRoles(side('p', 'AllOf', []), 'i1', ['a'])).toEqual({ matches: false, matchedBy: null, missingRoles: [] })
  })
})

describe('smallestFixes', () => {
  it('case=none when a policy already selects the entity', () => {
    expect(smallestFixes([side('p', 'AllOf', ['#x']), side('q', 'AnyOf', ['#a'])], 'i1', ['a'])).toEqual([])
  })

  it('case=a new policy only when no policy names the other side', () => {
    expect(smallestFixes([], 'i1', ['a'])).toEqual([{ action: 'create-policy' }])
  })

  it('case=keeps only the smallest: one missing attribute or naming the identity beats two attributes', () => {
    const fixes = smallestFixes([side('p', 'AllOf', ['#a', '#b', '#c']), side('q', 'AllOf', ['#a', '#d'])], 'i1', ['a'])
    expect(fixes).toEqual([
      { action: 'add-attributes', attributes: ['d'], policyIds: ['q'] },
      { action: 'name-in-policy', policyId: 'p' },
      { action: 'name-in-policy', policyId: 'q' },
    ])
  })

  it('case=AnyOf offers each listed attribute, merged across policies that one attribute would satisfy', () => {
    const fixes = smallestFixes([side('p', 'AnyOf', ['#b', '#c']), side('q', 'AllOf', ['#c'])], 'i1', [])
    expect(fixes.filter((f) => f.action === 'add-attributes')).toEqual([
      { action: 'add-attributes', attributes: ['b'], policyIds: ['p'] },
      { action: 'add-attributes', attributes: ['c'], policyIds: ['p', 'q'] },
    ])
  })

  it('case=a policy with only other ids can be fixed only by naming the entity', () => {
    expect(smallestFixes([side('p', 'AllOf', ['@other'])], 'i1', ['a'])).toEqual([{ action: 'name-in-policy', policyId: 'p' }])
  })

  it('case=every proposed fix makes some policy select the entity when applied', () => {
    const sides = [side('p', 'AllOf', ['#a', '#b']), side('q', 'AnyOf', ['#c', '#d']), side('r', 'AllOf', ['@x', '#e', '#f'])]
    for (const f of smallestFixes(sides, 'i1', ['a'], 100)) {
      const ok =
        f.action === 'add-attributes'
          ? f.policyIds.every((id) => judgeRoles(sides.find((s) => s.id === id)!, 'i1', ['a', ...f.attributes]).matches)
          : f.action === 'name-in-policy'
            ? judgeRoles({ ...sides.find((s) => s.id === f.policyId)!, roles: [...sides.find((s) => s.id === f.policyId)!.roles, '@i1'] }, 'i1', ['a']).matches
            : false
      expect({ f, ok }).toEqual({ f, ok: true })
    }
  })
})
