// ZitiQL lexical rules: controller/storage/zitiql/ZitiQl.g4 (openziti/ziti).
import { describe, expect, it } from 'bun:test'
import { parseRfc3339Ms, tokenize } from '../../../../src/domain/query/query-lexer.ts'
import { ApiError } from '../../../../src/errors/api-error.ts'
import { apiErrorOf, causeMessage } from './query-fixtures.ts'

const kinds = (src: string) => tokenize(src).map((t) => t.kind)
const lexError = (src: string) => {
  const e = apiErrorOf(() => tokenize(src))
  expect(e.code).toBe('INVALID_FILTER')
  return causeMessage(e)
}

describe('tokenize', () => {
  it('reads double-quoted strings with every supported escape', () => {
    const [t] = tokenize(String.raw`"a\"b\\c\fd\ne\rf\tg"`)
    expect(t.kind).toBe('string')
    expect((t as { value: string }).value).toBe('a"b\\c\fd\ne\rf\tg')
  })

  it('rejects an unsupported escape, a raw control character and an unterminated string', () => {
    expect(lexError(String.raw`"a\x"`)).toStartWith(String.raw`Unexpected symbol: ""a\x" at line: 1 column: 0`)
    expect(lexError('"a\u0001"')).toContain('line: 1 column: 0')
    expect(lexError('name = "abc')).toContain('column: 7')
  })

  it('reads numbers with sign, fraction and exponent', () => {
    const values = tokenize('0 -1 12.5 -0.25 1e3 2E-2 3.5e+1').filter((t) => t.kind === 'number')
    expect(values.map((t) => (t as { value: number }).value)).toEqual([0, -1, 12.5, -0.25, 1000, 0.02, 35])
  })

  it('rejects a leading zero, a bare minus, a trailing dot and a plus sign', () => {
    expect(lexError('01')).toContain('symbol: 1')
    expect(lexError('- 1')).toContain('symbol: -')
    expect(lexError('1.')).toContain('symbol: .')
    expect(lexError('+1')).toContain('symbol: +')
  })

  it('reads datetime(...) literals as epoch milliseconds, with inner whitespace and lowercase t and z', () => {
    const ms = Date.UTC(2021, 0, 1)
    for (const src of ['datetime(2021-01-01T00:00:00Z)', 'datetime( 2021-01-01t00:00:00z )', 'datetime(2021-01-01T01:30:00+01:30)']) {
      const [t] = tokenize(src)
      expect(t.kind).toBe('datetime')
      expect((t as { value: number }).value).toBe(ms)
    }
  })

  it('keeps milliseconds of a fractional second and truncates finer digits', () => {
    expect(parseRfc3339Ms('2021-01-01T00:00:00.123456789Z')).toBe(Date.UTC(2021, 0, 1, 0, 0, 0, 123))
    expect(parseRfc3339Ms('2021-01-01T00:00:00.5-00:00')).toBe(Date.UTC(2021, 0, 1, 0, 0, 0, 500))
  })

  it('rejects impossible dates and non-RFC 3339 forms', () => {
    for (const bad of ['2021-02-29T00:00:00Z', '2021-13-01T00:00:00Z', '2021-04-31T00:00:00Z', '2021-01-01T24:00:00Z', '2021-01-01 00:00:00Z', '2021-01-01T00:00:00', '2021-01-01T00:00:60Z']) {
      expect(parseRfc3339Ms(bad)).toBeUndefined()
    }
    expect(parseRfc3339Ms('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29))
    expect(lexError('createdAt > datetime(2021-02-30T00:00:00Z)')).toStartWith('Unexpected symbol: "datetime(2021-02-30T00:00:00Z)" at line: 1 column: 12')
  })

  it('treats datetime( as case-sensitive: DATETIME(...) is an identifier followed by a parenthesis', () => {
    expect(kinds('DATETIME(')).toEqual(['ident', 'punct', 'eof'])
  })

  it('recognises keywords in any case and leaves longer words as identifiers', () => {
    const toks = tokenize('AND Or nOt IN ConTains ICONTAINS between TRUE False NULL allof ANYOF Count ISEMPTY Sort BY Asc DESC SKIP Limit NONE From WHERE')
    expect(toks.slice(0, -1).every((t) => t.kind === 'keyword')).toBe(true)
    expect(kinds('notes andy tags.none')).toEqual(['ident', 'ident', 'ident', 'eof'])
  })

  it('reads dotted identifiers with hyphens after the first dot, and single-quoted identifiers', () => {
    const toks = tokenize("tags.service-id 'limit' 'tags.a'")
    expect(toks.map((t) => (t as { value?: unknown }).value)).toEqual(['tags.service-id', 'limit', 'tags.a', undefined])
    expect(toks[1].kind).toBe('ident')
  })

  it('does not allow digits in identifiers', () => {
    expect(lexError('tags.env2 = "x"')).toStartWith('Unexpected symbol: "2" at line: 1 column: 8')
    expect(lexError("'a1' = 1")).toStartWith(`Unexpected symbol: "'a1'"`)
  })

  it('requires whitespace between words, literals and closing brackets', () => {
    expect(lexError('a=1and b=2')).toStartWith('Unexpected symbol: "and" at line: 1 column: 3')
    expect(lexError('(a = 1)and b = 2')).toContain('symbol: and')
    expect(lexError('x > datetime(2021-01-01T00:00:00Z)sort by x')).toContain('symbol: sort')
    expect(kinds('a=1')).toEqual(['ident', 'op', 'number', 'eof'])
  })

  it('reads every comparison operator and rejects a lone !', () => {
    expect(tokenize('= != < <= > >=').slice(0, -1).map((t) => t.text)).toEqual(['=', '!=', '<', '<=', '>', '>='])
    expect(lexError('a ! b')).toContain('symbol: !')
  })

  it('reports positions as 1-based lines and 0-based columns across newlines', () => {
    const toks = tokenize('a = 1\n  and\r\n\tb')
    expect(toks.map((t) => [t.line, t.column])).toEqual([[1, 0], [1, 2], [1, 4], [2, 2], [3, 1], [3, 2]])
    expect(lexError('a = 1\n  and @')).toBe('Unexpected symbol: "@" at line: 2 column: 6. line: 2, column: 6, symbol: @')
  })

  it('throws ApiError instances with status 400', () => {
    const e = apiErrorOf(() => tokenize('#'))
    expect(e).toBeInstanceOf(ApiError)
    expect(e.status).toBe(400)
  })
})
