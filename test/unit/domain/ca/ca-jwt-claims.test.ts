// The claim selectors of external JWT signers (src/domain/ca/ca-jwt-claims.ts): JSON pointers into a verified token's
// claims, read as the real controller's resolveStringClaimSelector and resolveStringSliceClaimProperty read them.
import { describe, expect, it } from 'bun:test'
import { claimSelectorProblem, claimString, claimStrings, toClaimPointer } from '../../../../src/domain/ca/ca-jwt-claims.ts'

const claims = {
  sub: 'subject',
  n: 5,
  'a/b': 'slashed',
  '~t': 'tilde',
  profile: { name: 'Person', tags: ['x', '', 'y'] },
  groups: ['red', 'blue'],
  one: 'green',
  empty: '',
  nothing: null,
  mixed: ['a', 2],
  object: { a: 1 },
}

describe('toClaimPointer and claimSelectorProblem', () => {
  it('adds the leading slash a selector may leave out; "" selects nothing', () => {
    expect(toClaimPointer('sub')).toBe('/sub')
    expect(toClaimPointer('/sub')).toBe('/sub')
    expect(toClaimPointer('')).toBe('')
  })

  it('finds the selectors that are no JSON pointer: a ~ not followed by 0 or 1', () => {
    for (const ok of ['', 'sub', '/profile/name', '/a~1b', '/~0t', '/groups/0']) expect(claimSelectorProblem(ok)).toBeNull()
    for (const bad of ['~', '/a~2', 'groups~', '/x/~']) expect(claimSelectorProblem(bad)).not.toBeNull()
  })
})

describe('claimString', () => {
  it('picks a string by pointer, nested and escaped ones too', () => {
    expect(claimString(claims, 'sub')).toBe('subject')
    expect(claimString(claims, '/profile/name')).toBe('Person')
    expect(claimString(claims, '/a~1b')).toBe('slashed')
    expect(claimString(claims, '/~0t')).toBe('tilde')
    expect(claimString(claims, '/groups/1')).toBe('blue')
    expect(claimString(claims, 'empty')).toBe('')
  })

  it('is undefined for nothing selected, a value that is not a string, a step into a scalar, or prototype names', () => {
    for (const s of ['', '/missing', 'n', '/profile', '/sub/x', '/groups/9', '/groups/-', 'nothing', '__proto__', '/constructor', '/a~2']) {
      expect(claimString(claims, s)).toBeUndefined()
    }
  })
})

describe('claimStrings', () => {
  it('reads a string as one value, an array of strings as each, dropping empty strings', () => {
    expect(claimStrings(claims, 'groups')).toEqual({ ok: true, values: ['red', 'blue'] })
    expect(claimStrings(claims, '/profile/tags')).toEqual({ ok: true, values: ['x', 'y'] })
    expect(claimStrings(claims, 'one')).toEqual({ ok: true, values: ['green'] })
    expect(claimStrings(claims, 'empty')).toEqual({ ok: true, values: [] })
  })

  it('reads no selector, nothing selected and null as none', () => {
    for (const s of ['', '/missing', '/sub/deeper', 'nothing', '__proto__']) expect(claimStrings(claims, s)).toEqual({ ok: true, values: [] })
  })

  it('refuses another type, or an array that holds something other than strings', () => {
    for (const s of ['n', 'object', 'mixed']) expect(claimStrings(claims, s).ok).toBe(false)
  })
})
