// ZitiQL grammar and typing: controller/storage/zitiql/ZitiQl.g4, controller/storage/ast/* (openziti/ziti);
// reference: shared/reference/controller-behaviour.md §2.
import { describe, expect, it } from 'bun:test'
import { matches, parseListQuery, type Predicate, type SortKey } from '../../../../src/domain/query/index.ts'
import { SYMBOLS, apiErrorOf, causeMessage, filterError } from './query-fixtures.ts'

const parse = (filter: string | undefined, sort?: string) => parseListQuery(filter, SYMBOLS, sort === undefined ? {} : { sort })
const pred = (filter: string): Predicate => parse(filter).predicate
const idAsc: SortKey = { field: 'id', type: 'string', ascending: true }

describe('parseListQuery: structure', () => {
  it('reads an empty or blank filter as true with the default order', () => {
    for (const f of [undefined, '', '  \n\t']) {
      const q = parse(f)
      expect(q.predicate).toEqual({ kind: 'const', value: true })
      expect(q.sort).toEqual([idAsc])
      expect(q.skip).toBeUndefined()
      expect(q.limit).toBeUndefined()
    }
  })

  it('reads the constants true and false', () => {
    expect(pred('true')).toEqual({ kind: 'const', value: true })
    expect(pred('FALSE')).toEqual({ kind: 'const', value: false })
  })

  it('binds and tighter than or', () => {
    const p = pred('isAdmin or name = "a" and cost = 1')
    expect(p.kind).toBe('or')
    expect(p).toMatchObject({ kind: 'or', items: [{ kind: 'truthy' }, { kind: 'and' }] })
    const q = parse('isAdmin or name = "a" and cost = 1')
    expect(matches(q, { isAdmin: true, name: 'b', cost: 2 })).toBe(true)
    expect(matches(q, { isAdmin: false, name: 'a', cost: 2 })).toBe(false)
  })

  it('lets parentheses override precedence', () => {
    const q = parse('(isAdmin or name = "a") and cost = 1')
    expect(q.predicate.kind).toBe('and')
    expect(matches(q, { isAdmin: true, name: 'b', cost: 2 })).toBe(false)
    expect(matches(q, { isAdmin: true, name: 'b', cost: 1 })).toBe(true)
  })

  it('applies not to the whole and chain that follows it', () => {
    const p = pred('not isAdmin and cost = 1 or name = "a"')
    expect(p).toMatchObject({ kind: 'or', items: [{ kind: 'not', expr: { kind: 'and' } }, { kind: 'compare' }] })
    const q = parse('not isAdmin and cost = 1')
    expect(matches(q, { isAdmin: true, cost: 2 })).toBe(true) // (not isAdmin) and cost = 1 would be false
    expect(matches(q, { isAdmin: true, cost: 1 })).toBe(false)
    expect(matches(q, { isAdmin: false, cost: 1 })).toBe(true)
  })

  it('applies not to a parenthesised operand only', () => {
    const q = parse('not (isAdmin) and cost = 1')
    expect(q.predicate).toMatchObject({ kind: 'not', expr: { kind: 'and' } })
    const r = parse('(not (isAdmin)) and cost = 1')
    expect(matches(r, { isAdmin: false, cost: 1 })).toBe(true)
    expect(matches(r, { isAdmin: false, cost: 2 })).toBe(false)
  })

  it('accepts keywords in any case', () => {
    const q = parse('name CONTAINS "a" AnD NOT isAdmin oR cost BETWEEN 1 AND 3 SORT BY name DESC SKIP 1 LIMIT 2')
    expect(q.predicate.kind).toBe('or')
    expect(q.sort[0]).toEqual({ field: 'name', type: 'string', ascending: false })
    expect(q.skip).toBe(1)
    expect(q.limit).toBe(2)
    expect(pred('name NOT IN ["a"]')).toMatchObject({ kind: 'in', negated: true })
    const sets = pred('anyof(roleAttributes) = "x" and ALLOF(roleAttributes) != "y" and COUNT(roleAttributes) > 1 or IsEmpty(roleAttributes)')
    expect(sets).toMatchObject({ kind: 'or', items: [{ kind: 'and' }, { kind: 'isEmpty' }] })
    expect(pred('name = NULL')).toMatchObject({ kind: 'isNull', negated: false })
    expect(pred('LIMIT NONE')).toEqual({ kind: 'const', value: true })
  })

  it('resolves single-quoted identifiers like plain ones', () => {
    expect(pred("'name' = \"a\"")).toEqual(pred('name = "a"'))
  })

  it('reads map entries as symbols typed by their literal', () => {
    expect(pred('tags.owner = "x"')).toMatchObject({ kind: 'compare', subject: { map: 'tags', key: 'owner', type: 'any' }, valueType: 'string' })
    expect(pred('tags.size > 3')).toMatchObject({ kind: 'compare', valueType: 'number' })
    expect(pred('tags.enabled')).toMatchObject({ kind: 'truthy' })
  })
})

describe('parseListQuery: trailing clauses', () => {
  it('accepts a query made only of sort, skip or limit clauses', () => {
    expect(parse('sort by name').sort).toEqual([{ field: 'name', type: 'string', ascending: true }, idAsc])
    expect(parse('skip 5')).toMatchObject({ skip: 5, predicate: { kind: 'const', value: true } })
    expect(parse('limit 7').limit).toBe(7)
    expect(parse('skip 1 limit 2')).toMatchObject({ skip: 1, limit: 2 })
    expect(parse('sort by cost desc limit 2')).toMatchObject({ limit: 2 })
  })

  it('reads limit none as -1 and keeps negative skip and limit for the paging rules', () => {
    expect(parse('true limit none').limit).toBe(-1)
    expect(parse('limit -1').limit).toBe(-1)
    expect(parse('skip -3').skip).toBe(-3)
  })

  it('rejects clauses out of order and repeated', () => {
    expect(filterError('limit 5 skip 2')).toStartWith('Unexpected symbol: "skip" at line: 1 column: 8')
    expect(filterError('skip 1 sort by name')).toContain('symbol: sort')
    expect(filterError('limit 1 limit 2')).toContain('column: 8')
  })

  it('rejects a non-integer skip or limit', () => {
    expect(filterError('skip 1.5')).toBe('skip must be an integer. line: 1, column: 5, symbol: 1.5')
    expect(filterError('limit 1e2')).toStartWith('limit must be an integer')
    expect(filterError('limit "5"')).toStartWith('Unexpected symbol: ""5""')
  })

  it('uses at most 5 sort keys and appends id ascending as tie-breaker', () => {
    expect(filterError('sort by tags')).toBe('invalid sort field: tags. line: 1, column: 8, symbol: tags')
    const r = parse('sort by name, cost desc, createdAt, isAdmin asc, externalId desc, name')
    expect(r.sort.map((k) => `${k.field}:${k.ascending ? 'asc' : 'desc'}`)).toEqual([
      'name:asc', 'cost:desc', 'createdAt:asc', 'isAdmin:asc', 'externalId:desc', 'id:asc',
    ])
  })

  it('orders by id alone when id is the first sort key', () => {
    expect(parse('sort by id desc, name').sort).toEqual([{ field: 'id', type: 'string', ascending: false }])
  })

  it('rejects sorting on an unknown field, a set field or a map entry with INVALID_FILTER', () => {
    expect(filterError('sort by nope')).toBe("unknown symbol 'nope'. line: 1, column: 8, symbol: nope")
    expect(filterError('sort by roleAttributes')).toStartWith('invalid sort field: roleAttributes')
    expect(filterError('sort by tags.owner')).toStartWith('no such sort field: tags.owner')
  })

  it('takes the sort parameter as sort keys when the filter has none', () => {
    expect(parse('name = "a"', 'cost desc, name').sort).toEqual([
      { field: 'cost', type: 'number', ascending: false },
      { field: 'name', type: 'string', ascending: true },
      idAsc,
    ])
    expect(parse(undefined, '  ').sort).toEqual([idAsc])
  })

  it('lets a sort by in the filter win over the sort parameter', () => {
    expect(parse('true sort by name desc', 'cost').sort[0]).toEqual({ field: 'name', type: 'string', ascending: false })
  })

  it('rejects a bad sort parameter with INVALID_SORT_IDENTIFIER and a positioned message', () => {
    for (const [sort, message] of [
      ['nope', "unknown symbol 'nope'. line: 1, column: 0, symbol: nope"],
      ['name sideways', 'Unexpected symbol: "sideways" at line: 1 column: 5. line: 1, column: 5, symbol: sideways'],
      ['name,', 'Unexpected symbol: "<EOF>" at line: 1 column: 5. line: 1, column: 5, symbol: <EOF>'],
      ['roleAttributes', 'invalid sort field: roleAttributes. line: 1, column: 0, symbol: roleAttributes'],
    ] as const) {
      const e = apiErrorOf(() => parse(undefined, sort))
      expect(e.code).toBe('INVALID_SORT_IDENTIFIER')
      expect(e.status).toBe(400)
      expect(causeMessage(e)).toBe(message)
    }
  })
})

describe('parseListQuery: errors', () => {
  it('answers INVALID_FILTER with status 400 and the ANTLR-style message for a syntax error', () => {
    const e = apiErrorOf(() => parse('name = '))
    expect(e.code).toBe('INVALID_FILTER')
    expect(e.status).toBe(400)
    expect(causeMessage(e)).toBe('Unexpected symbol: "<EOF>" at line: 1 column: 7. line: 1, column: 7, symbol: <EOF>')
  })

  it('names an unknown symbol and where it is', () => {
    expect(filterError('name = "a" and\n  foo = 1')).toBe("unknown symbol 'foo'. line: 2, column: 2, symbol: foo")
    expect(filterError('constructor = "x"')).toStartWith("unknown symbol 'constructor'")
    expect(filterError('name.first = "x"')).toStartWith("unknown symbol 'name.first'")
  })

  it('rejects a set symbol outside a set function', () => {
    const msg = "symbol 'roleAttributes' is a set symbol but is used in non-set function context. line: 1, column: 0, symbol: roleAttributes"
    expect(filterError('roleAttributes')).toBe(msg)
    expect(filterError('roleAttributes = "x"')).toBe(msg)
    expect(filterError('roleAttributes = null')).toBe(msg)
  })

  it('rejects a bare map symbol and a set function on a non-set symbol', () => {
    expect(filterError('tags = "x"')).toStartWith("symbol 'tags' is a map symbol")
    expect(filterError('anyOf(name) = "x"')).toBe("symbol 'name' is not a set symbol and cannot be used in anyOf(). line: 1, column: 6, symbol: name")
    expect(filterError('isEmpty(cost)')).toStartWith("symbol 'cost' is not a set symbol and cannot be used in isEmpty()")
    expect(filterError('count(nope) = 1')).toStartWith("unknown symbol 'nope'")
  })

  it('rejects a non-boolean symbol used as a boolean expression', () => {
    expect(filterError('name')).toBe("symbol 'name' of type string cannot be used as a boolean expression. line: 1, column: 0, symbol: name")
    expect(filterError('isAdmin and cost')).toContain('column: 12')
    expect(filterError('(cost)')).toStartWith("symbol 'cost' of type number")
  })

  it('names the operation and both operand types on a type mismatch', () => {
    const cases: [string, string][] = [
      ['name = 1', 'operation name = 1 is not supported with operands types string, number. line: 1, column: 7, symbol: 1'],
      ['cost = "1"', 'operation cost = 1 is not supported with operands types number, string'],
      ['isAdmin = "true"', 'operation isAdmin = true is not supported with operands types bool, string'],
      ['name = true', 'operation name = true is not supported with operands types string, bool'],
      ['createdAt > "2021-01-01"', 'operation createdAt > 2021-01-01 is not supported with operands types date, string'],
      ['cost < datetime(2021-01-01T00:00:00Z)', 'operation cost < 2021-01-01T00:00:00.000Z is not supported with operands types number, date'],
      ['createdAt contains "2021"', 'operation createdAt contains 2021 is not supported with operands types date, string'],
      ['isAdmin not icontains "t"', 'operation isAdmin not icontains t is not supported with operands types bool, string'],
      ['name in [1, 2]', 'operation name in [1, 2] is not supported with operands types string, number'],
      ['cost not in ["a"]', 'operation cost not in [a] is not supported with operands types number, string'],
      ['name between 1 and 2', 'operation name between 1 and 2 is not supported with operands types string, number'],
      ['anyOf(roleAttributes) = 1', 'operation anyOf(roleAttributes) = 1 is not supported with operands types string, number'],
      ['count(roleAttributes) = "2"', 'operation count(roleAttributes) = 2 is not supported with operands types number, string'],
      ['anyOf(roleAttributes) = null', 'operation anyOf(roleAttributes) = null is not supported with operands types string, null'],
    ]
    for (const [filter, message] of cases) expect(filterError(filter)).toStartWith(message)
  })

  it('accepts only = and != against booleans and null', () => {
    expect(filterError('isAdmin < true')).toStartWith('Unexpected symbol: "true" at line: 1 column: 10')
    expect(filterError('name > null')).toStartWith('operation name > null is not supported')
  })

  it('rejects empty and mixed lists and mixed between bounds', () => {
    expect(filterError('name in []')).toStartWith('Unexpected symbol: "]" at line: 1 column: 9')
    expect(filterError('name in ["a", 1]')).toContain('symbol: 1')
    expect(filterError('cost between 1 and datetime(2021-01-01T00:00:00Z)')).toContain('column: 19')
    expect(filterError('cost between 1 or 2')).toContain('symbol: or')
  })

  it('rejects operators the language does not have', () => {
    expect(filterError('name startswith "a"')).toStartWith('Unexpected symbol: "startswith"')
    expect(filterError('name like "a"')).toContain('symbol: like')
    expect(filterError('name is null')).toContain('symbol: is')
    expect(filterError('name not = "a"')).toContain('symbol: =')
    expect(filterError('isEmpty(roleAttributes) = false')).toContain('symbol: =')
    expect(filterError('anyOf(roleAttributes)')).toContain('symbol: <EOF>')
  })

  it('rejects unbalanced parentheses and trailing tokens', () => {
    expect(filterError('(isAdmin')).toContain('symbol: <EOF>')
    expect(filterError('isAdmin)')).toStartWith('Unexpected symbol: ")" at line: 1 column: 7')
    expect(filterError('name = "a" name = "b"')).toContain('column: 11')
  })

  it('rejects nesting deeper than the limit instead of exhausting the stack', () => {
    expect(pred(`${'('.repeat(200)}isAdmin${')'.repeat(200)}`)).toMatchObject({ kind: 'truthy' })
    expect(filterError(`${'('.repeat(5_000)}isAdmin${')'.repeat(5_000)}`)).toBe(
      'filter nests parentheses or not deeper than 200 levels. line: 1, column: 200, symbol: (',
    )
    expect(filterError(`${'not '.repeat(201)}isAdmin`)).toStartWith('filter nests parentheses or not deeper than 200 levels')
  })

  it('rejects subqueries with a clear message', () => {
    expect(filterError('count(from roleAttributes where true) > 1')).toBe(
      'subqueries (from <set> where <query>) are not supported. line: 1, column: 6, symbol: from',
    )
    expect(filterError('isEmpty(from x where y)')).toStartWith('subqueries')
    expect(filterError('from identities where true')).toStartWith('subqueries')
  })
})
