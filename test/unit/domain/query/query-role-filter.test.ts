// roleFilter / roleSemantic on the identity, edge router, service and posture check lists:
// shared/reference/controller-behaviour.md §2 "roleFilter and roleSemantic".
import { describe, expect, it } from 'bun:test'
import { matchesRoleFilter, parseRoleFilter } from '../../../../src/domain/query/index.ts'
import { apiErrorOf } from './query-fixtures.ts'

const web = { id: 'e1', roleAttributes: ['Web', 'db'] }
const ops = { id: 'e2', roleAttributes: ['ops'] }
const bare = { id: 'e3', roleAttributes: null }

describe('parseRoleFilter', () => {
  it('gives no filter when no roleFilter values are sent', () => {
    expect(parseRoleFilter(undefined, undefined)).toBeUndefined()
    expect(parseRoleFilter([], 'AnyOf')).toBeUndefined()
  })

  it('splits @ids from #attributes and defaults the semantic to AllOf', () => {
    expect(parseRoleFilter(['#web', '@e2', '#db'], undefined)).toEqual({ ids: ['e2'], attrs: ['web', 'db'], semantic: 'AllOf' })
    expect(parseRoleFilter('#web', '')).toEqual({ ids: [], attrs: ['web'], semantic: 'AllOf' })
  })

  it('reads the semantic case-insensitively', () => {
    expect(parseRoleFilter('#a', 'anyof')?.semantic).toBe('AnyOf')
    expect(parseRoleFilter('#a', 'ALLOF')?.semantic).toBe('AllOf')
  })

  it('rejects an unknown semantic with COULD_NOT_VALIDATE on field semantic', () => {
    const e = apiErrorOf(() => parseRoleFilter('#a', 'OneOf'))
    expect(e.code).toBe('COULD_NOT_VALIDATE')
    expect(e.status).toBe(400)
    expect(e.apiCause).toMatchObject({ kind: 'field', field: 'semantic', value: 'OneOf' })
  })

  it('rejects an entry without # or @ with COULD_NOT_VALIDATE on field roleFilter', () => {
    for (const bad of ['web', '#', '@', '']) {
      const e = apiErrorOf(() => parseRoleFilter(['#ok', bad], undefined))
      expect(e.code).toBe('COULD_NOT_VALIDATE')
      expect(e.apiCause).toMatchObject({ kind: 'field', field: 'roleFilter', value: bad })
    }
  })
})

describe('matchesRoleFilter', () => {
  const match = (roleFilter: string[], semantic: string | undefined, entity: typeof web | typeof bare) =>
    matchesRoleFilter(parseRoleFilter(roleFilter, semantic)!, entity)

  it('requires every attribute under AllOf, case-insensitively', () => {
    expect(match(['#web', '#DB'], 'AllOf', web)).toBe(true)
    expect(match(['#web', '#ops'], 'AllOf', web)).toBe(false)
  })

  it('requires one attribute under AnyOf', () => {
    expect(match(['#web', '#ops'], 'AnyOf', web)).toBe(true)
    expect(match(['#web', '#ops'], 'AnyOf', ops)).toBe(true)
    expect(match(['#x', '#y'], 'AnyOf', web)).toBe(false)
  })

  it('adds the @ids to the attribute matches', () => {
    expect(match(['#web', '#ops', '@e3'], 'AllOf', bare)).toBe(true)
    expect(match(['#web', '#ops', '@e3'], 'AllOf', web)).toBe(false)
    expect(match(['@e2'], 'AnyOf', ops)).toBe(true)
    expect(match(['@e2'], 'AnyOf', web)).toBe(false)
  })

  it('matches ids exactly', () => {
    expect(match(['@E2'], 'AnyOf', ops)).toBe(false)
  })

  it('matches every entity with #all', () => {
    for (const e of [web, ops, bare]) expect(match(['#all'], undefined, e)).toBe(true)
  })

  it('matches no entity by attribute when it has none', () => {
    expect(match(['#web'], 'AnyOf', bare)).toBe(false)
    expect(matchesRoleFilter({ ids: [], attrs: [], semantic: 'AllOf' }, web)).toBe(false)
  })
})
