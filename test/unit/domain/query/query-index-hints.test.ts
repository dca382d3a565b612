// Index hints: which equality constraints of a filter a store index may serve without changing the result.
import { describe, expect, it } from 'bun:test'
import { indexHints, matches, parseListQuery } from '../../../../src/domain/query/index.ts'
import { SYMBOLS, seededRandom } from './query-fixtures.ts'

const INDEXED = ['id', 'name', 'roleAttributes'] as const
const hints = (filter: string, indexed: readonly string[] = INDEXED) => indexHints(parseListQuery(filter, SYMBOLS), indexed)

describe('indexHints: safe shapes', () => {
  it('serves = and in on an indexed string field', () => {
    expect(hints('name = "x"')).toEqual([{ field: 'name', values: ['x'] }])
    expect(hints('id in ["a", "b", "a"]')).toEqual([{ field: 'id', values: ['a', 'b'] }])
  })

  it('serves anyOf(set) = and anyOf(set) in on an indexed set field', () => {
    expect(hints('anyOf(roleAttributes) = "web"')).toEqual([{ field: 'roleAttributes', values: ['web'] }])
    expect(hints('anyOf(roleAttributes) in ["web", "db"]')).toEqual([{ field: 'roleAttributes', values: ['web', 'db'] }])
  })

  it('collects every conjunct of the top-level and chain, through parentheses', () => {
    expect(hints('name = "x" and (cost > 1 and anyOf(roleAttributes) = "web") and id in ["i1"]')).toEqual([
      { field: 'name', values: ['x'] },
      { field: 'roleAttributes', values: ['web'] },
      { field: 'id', values: ['i1'] },
    ])
  })

  it('ignores trailing clauses', () => {
    expect(hints('name = "x" sort by cost desc skip 3 limit 2')).toEqual([{ field: 'name', values: ['x'] }])
  })
})

describe('indexHints: unsafe or unservable shapes', () => {
  it('gives nothing when an or is at the top', () => {
    expect(hints('name = "x" or name = "y"')).toEqual([])
    expect(hints('name = "x" and cost = 1 or id = "y"')).toEqual([])
  })

  it('gives nothing for a conjunct that is an or, a not or a negation', () => {
    expect(hints('cost = 1 and (name = "x" or name = "y")')).toEqual([])
    expect(hints('not (name = "x")')).toEqual([])
    expect(hints('not name = "x" and id = "y"')).toEqual([])
    expect(hints('name != "x" and name not in ["y"] and anyOf(roleAttributes) != "z"')).toEqual([])
  })

  it('gives nothing for other operators, allOf, unindexed fields and map entries', () => {
    expect(hints('name contains "x" and name > "a" and name = null')).toEqual([])
    expect(hints('allOf(roleAttributes) = "web"')).toEqual([])
    expect(hints('externalId = "x"')).toEqual([])
    expect(hints('tags.owner = "x"', ['tags.owner'])).toEqual([])
    expect(hints('', INDEXED)).toEqual([])
    expect(hints('name = "x"', [])).toEqual([])
  })
})

describe('indexHints: soundness', () => {
  it('never excludes a row the filter matches, on random rows', () => {
    const random = seededRandom(99)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]
    const rows = Array.from({ length: 300 }, (_, k) => ({
      id: `i${k}`,
      name: pick(['a', 'b', 'c', null]),
      cost: Math.floor(random() * 4),
      roleAttributes: ['web', 'db', 'ops'].filter(() => random() < 0.5),
    }))
    const filters = [
      'name = "a" and cost > 1',
      'anyOf(roleAttributes) in ["web", "ops"] and name in ["a", "b"]',
      '(name = "b") and (anyOf(roleAttributes) = "db" and cost != 0)',
      'id in ["i1", "i2", "i250"] and not isEmpty(roleAttributes)',
    ]
    for (const filter of filters) {
      const q = parseListQuery(filter, SYMBOLS)
      const hs = indexHints(q, INDEXED)
      expect(hs.length).toBeGreaterThan(0)
      for (const r of rows.filter((row) => matches(q, row))) {
        for (const h of hs) {
          const v = r[h.field as keyof typeof r]
          const served = Array.isArray(v) ? v.some((e) => h.values.includes(e)) : h.values.includes(v as string)
          expect(served).toBe(true)
        }
      }
    }
  })
})
