// ZitiQL evaluation semantics: controller/storage/ast/node_expr.go, node_set.go and bolt_listener_test.go (openziti/ziti).
import { describe, expect, it } from 'bun:test'
import { matches, parseListQuery } from '../../../../src/domain/query/index.ts'
import { SYMBOLS } from './query-fixtures.ts'

const JAN1 = Date.UTC(2021, 0, 1)
const row = {
  id: 'i1',
  name: 'hello',
  externalId: null,
  isAdmin: true,
  cost: 1,
  createdAt: '2021-01-01T00:00:00.000Z',
  roleAttributes: ['web', 'db', 'Ops'],
  tags: { owner: 'alice', size: 3, enabled: true, 'service-id': '1234', nothing: null },
}

/** Whether `filter` matches `r` (default: the row above). */
const m = (filter: string, r: Record<string, unknown> = row) => matches(parseListQuery(filter, SYMBOLS), r)

/** Asserts each [filter, expected] pair. */
const table = (cases: readonly (readonly [string, boolean])[], r: Record<string, unknown> = row) => {
  for (const [filter, expected] of cases) {
    if (m(filter, r) !== expected) throw new Error(`${filter} → expected ${expected}`)
  }
}

describe('matches: strings', () => {
  it('compares strings with = != < <= > >=', () => {
    table([
      ['name = "hello"', true], ['name = "hell"', false], ['name != "world"', true], ['name != "hello"', false],
      ['name < "jello"', true], ['name < "hello"', false], ['name <= "hello"', true], ['name <= "cello"', false],
      ['name > "cello"', true], ['name > "hello"', false], ['name >= "hello"', true], ['name >= "jello"', false],
    ])
  })

  it('matches contains and not contains, with string or number needles', () => {
    table([
      ['name contains "ell"', true], ['name contains "lle"', false], ['name contains "HELL"', false],
      ['name not contains "xyz"', true], ['name not contains "ell"', false],
      ['name contains 0', false], ['name not contains 0', true],
    ])
    table([['name contains 234', true], ['name contains 321', false]], { name: '123456789' })
  })

  it('matches icontains and not icontains ignoring case on both sides', () => {
    table([
      ['name icontains "HELLO"', true], ['name icontains "eLLo"', true], ['name icontains "heLLoo"', false],
      ['name not icontains "LLE"', true], ['name not icontains "L"', false],
    ])
  })

  it('matches in and not in string lists', () => {
    table([
      ['name in ["hello", "bye"]', true], ['name in ["hellooo", "bye"]', false],
      ['name not in ["hellooo", "bye"]', true], ['name not in ["hello"]', false],
    ])
  })

  it('decodes string escapes before comparing', () => {
    table([['name = "a\\"b\\\\c\\td"', true]], { name: 'a"b\\c\td' })
  })
})

describe('matches: numbers', () => {
  it('compares numbers with every operator, integers and fractions alike', () => {
    table([
      ['cost = 1', true], ['cost = 1.0', true], ['cost = 1.5', false], ['cost != 2', true], ['cost != 1', false],
      ['cost < 2', true], ['cost < 1', false], ['cost <= 1', true], ['cost <= 0', false],
      ['cost > 0', true], ['cost > 1', false], ['cost >= 1', true], ['cost >= 1e1', false], ['cost > -1.5', true],
    ])
  })

  it('matches in and not in number lists', () => {
    table([['cost in [4, 2, 1]', true], ['cost in [4.0, 2]', false], ['cost not in [0, 2]', true], ['cost not in [1.0]', false]])
  })

  it('treats between as half-open: low inclusive, high exclusive', () => {
    table([
      ['cost between 1 and 2', true], ['cost between 0 and 1', false], ['cost between 1 and 1', false], ['cost between 1.0 and 4', true],
      ['cost not between 1 and 1', true], ['cost not between 0 and 2', false], ['cost not between 2 and 4', true],
    ])
  })

  it('matches contains against the decimal text of a number', () => {
    table([['cost contains 234', true], ['cost not contains 321', true], ['cost contains 9.12', true]], { cost: 123456789.123 })
  })
})

describe('matches: booleans and null', () => {
  it('compares booleans with = and != and reads a bare boolean symbol', () => {
    table([['isAdmin', true], ['not isAdmin', false], ['isAdmin = true', true], ['isAdmin = false', false], ['isAdmin != false', true], ['isAdmin != true', false]])
    table([['isAdmin', false], ['not isAdmin', true], ['isAdmin = false', false], ['isAdmin != true', true]], { isAdmin: null })
  })

  it('tests presence with = null and != null', () => {
    table([['externalId = null', true], ['externalId != null', false], ['name = null', false], ['name != null', true]])
    table([['externalId = null', true]], {})
  })

  it('treats a missing value as false for every comparison except != and the negated forms', () => {
    table(
      [
        ['name = "x"', false], ['name != "x"', true], ['name < "x"', false], ['name >= ""', false],
        ['name contains ""', false], ['name not contains "x"', true], ['name icontains "x"', false], ['name not icontains "x"', true],
        ['name in ["x"]', false], ['name not in ["x"]', true], ['cost between 0 and 9', false], ['cost not between 0 and 9', true],
        ['createdAt < datetime(2030-01-01T00:00:00Z)', false], ['createdAt != datetime(2030-01-01T00:00:00Z)', true],
      ],
      { name: null },
    )
  })

  it('evaluates the constants true and false', () => {
    table([['true', true], ['false', false], ['not false', true], ['true and false', false], ['false or true', true]])
  })
})

describe('matches: datetimes', () => {
  const d = (iso: string) => `datetime(${iso})`

  it('compares datetimes as instants, from ISO strings or epoch milliseconds', () => {
    for (const createdAt of ['2021-01-01T00:00:00Z', '2021-01-01T01:00:00+01:00', JAN1]) {
      table(
        [
          [`createdAt = ${d('2021-01-01T00:00:00Z')}`, true], [`createdAt != ${d('2021-01-01T00:00:01Z')}`, true],
          [`createdAt < ${d('2021-01-01T00:00:01Z')}`, true], [`createdAt < ${d('2021-01-01T00:00:00Z')}`, false],
          [`createdAt <= ${d('2021-01-01T00:00:00Z')}`, true], [`createdAt > ${d('2020-12-31T23:59:59Z')}`, true],
          [`createdAt > ${d('2021-01-01T00:00:00Z')}`, false], [`createdAt >= ${d('2021-01-01T00:00:00Z')}`, true],
          [`createdAt >= ${d('2021-01-01T00:00:00.001Z')}`, false],
        ],
        { createdAt },
      )
    }
  })

  it('matches in, not in, between and not between on datetimes', () => {
    table([
      [`createdAt in [${d('2020-01-01T00:00:00Z')}, ${d('2021-01-01T00:00:00Z')}]`, true],
      [`createdAt not in [${d('2020-01-01T00:00:00Z')}]`, true],
      [`createdAt between ${d('2021-01-01T00:00:00Z')} and ${d('2021-01-02T00:00:00Z')}`, true],
      [`createdAt between ${d('2020-01-01T00:00:00Z')} and ${d('2021-01-01T00:00:00Z')}`, false],
      [`createdAt not between ${d('2020-01-01T00:00:00Z')} and ${d('2021-01-01T00:00:00Z')}`, true],
    ])
  })

  it('treats an unparseable datetime value as missing', () => {
    table([[`createdAt < ${d('2030-01-01T00:00:00Z')}`, false], [`createdAt != ${d('2030-01-01T00:00:00Z')}`, true]], { createdAt: 'not a date' })
  })
})

describe('matches: sets', () => {
  it('matches anyOf with every operator kind on the elements', () => {
    table([
      ['anyOf(roleAttributes) = "web"', true], ['anyOf(roleAttributes) = "ops"', false],
      ['anyOf(roleAttributes) in ["x", "db"]', true], ['anyOf(roleAttributes) contains "e"', true],
      ['anyOf(roleAttributes) icontains "OP"', true], ['anyOf(roleAttributes) != "web"', true],
      ['anyOf(roleAttributes) < "D"', false], ['anyOf(roleAttributes) < "P"', true], ['anyOf(roleAttributes) not in ["web", "db", "Ops"]', false],
    ])
  })

  it('matches allOf only when every element passes, and vacuously for an empty or missing set', () => {
    table([['allOf(roleAttributes) != "x"', true], ['allOf(roleAttributes) = "web"', false], ['allOf(roleAttributes) > "A"', true]])
    table([['allOf(roleAttributes) = "web"', true], ['anyOf(roleAttributes) = "web"', false]], { roleAttributes: [] })
    table([['allOf(roleAttributes) = "web"', true], ['anyOf(roleAttributes) != "web"', false]], {})
  })

  it('negates a quantified test with not', () => {
    table([['not anyOf(roleAttributes) = "web"', false], ['not anyOf(roleAttributes) = "nope"', true]])
  })

  it('counts elements with count() and tests emptiness with isEmpty()', () => {
    table([
      ['count(roleAttributes) = 3', true], ['count(roleAttributes) > 3', false], ['count(roleAttributes) between 1 and 4', true],
      ['count(roleAttributes) in [1, 3]', true], ['isEmpty(roleAttributes)', false], ['not isEmpty(roleAttributes)', true],
      ['not isEmpty(roleAttributes) and count(roleAttributes) = 3', true],
    ])
    table([['count(roleAttributes) = 0', true], ['isEmpty(roleAttributes)', true]], { roleAttributes: null })
  })
})

describe('matches: map entries', () => {
  it('reads tags.<key> with the type of the literal', () => {
    table([
      ['tags.owner = "alice"', true], ['tags.owner contains "lic"', true], ['tags.size = 3', true], ['tags.size > 2.5', true],
      ['tags.enabled', true], ['tags.enabled = true', true], ['tags.service-id = "1234"', true], ['tags.missing = null', true],
      ['tags.nothing = null', true], ['tags.owner != null', true], ['tags.owner = 3', false], ['tags.size = "3"', true],
      ['tags.owner', false], ['tags.missing != "x"', true],
    ])
  })

  it('treats every key as missing when the map itself is missing', () => {
    table([['tags.owner = null', true], ['tags.owner = "alice"', false]], { tags: null })
  })

  it('walks nested members (config data), a member named with the dots first, never into arrays or the prototype', () => {
    const nested = { tags: { port: 80, listen: { host: 'h', port: 81 }, 'a.b': 'flat', a: { b: 'deep' }, list: [{ x: 1 }] } }
    table([
      ['tags.listen.host = "h"', true], ['tags.listen.port = 81', true], ['tags.listen.port > 80', true], ['tags.a.b = "flat"', true],
      ['tags.listen.missing = null', true], ['tags.port.x = null', true], ['tags.list.x = 1', false],
      ['tags.constructor.name = "Object"', false], ['tags.listen.constructor = null', true],
    ], nested)
  })
})

describe('matches: boolean structure', () => {
  it('combines and, or, not and parentheses', () => {
    table([
      ['name = "hello" and cost = 1', true], ['name = "hello" and cost = 2', false],
      ['name = "x" or cost = 1', true], ['name = "x" or cost = 2', false],
      ['(name = "x" or cost = 1) and isAdmin', true], ['name = "x" or (cost = 1 and not isAdmin)', false],
      ['not (name = "x" or cost = 2)', true],
    ])
  })

  it('ignores sort, skip and limit clauses', () => {
    table([['name = "hello" sort by cost desc skip 100 limit 1', true], ['sort by name', true]])
  })
})
