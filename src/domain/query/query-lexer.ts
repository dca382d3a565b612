/**
 * The ZitiQL tokenizer: turns filter text into tokens with line/column positions.
 * Knows the lexical rules only (literals, identifiers, keywords); the grammar is query-parser.ts.
 * @see openziti/ziti controller/storage/zitiql/ZitiQl.g4 (lexer rules)
 */
import { ApiError } from '../../errors/api-error.ts'

/** The keywords of ZitiQL, lower-cased; matched case-insensitively (only `datetime(` is case-sensitive). */
export const QUERY_KEYWORDS = [
  'and', 'or', 'not', 'in', 'contains', 'icontains', 'between', 'true', 'false', 'null',
  'allof', 'anyof', 'count', 'isempty', 'sort', 'by', 'asc', 'desc', 'skip', 'limit', 'none', 'from', 'where',
] as const
/** One keyword, lower-cased. */
export type QueryKeyword = (typeof QUERY_KEYWORDS)[number]
const KEYWORDS: ReadonlySet<string> = new Set(QUERY_KEYWORDS)

/**
 * One token. `line` is 1-based and `column` 0-based, as ANTLR reports them in the real controller's messages.
 * `value` holds the decoded string, the number, the epoch ms of a datetime, or the identifier name.
 */
export type Token =
  | { readonly kind: 'keyword'; readonly keyword: QueryKeyword; readonly text: string; readonly line: number; readonly column: number }
  | { readonly kind: 'ident'; readonly value: string; readonly text: string; readonly line: number; readonly column: number }
  | { readonly kind: 'string'; readonly value: string; readonly text: string; readonly line: number; readonly column: number }
  | { readonly kind: 'number'; readonly value: number; readonly text: string; readonly line: number; readonly column: number }
  | { readonly kind: 'datetime'; readonly value: number; readonly text: string; readonly line: number; readonly column: number }
  | { readonly kind: 'op' | 'punct' | 'eof'; readonly text: string; readonly line: number; readonly column: number }

/** Where something is in the filter text, for messages. */
export interface TokenPosition {
  readonly text: string
  readonly line: number
  readonly column: number
}

/**
 * INVALID_FILTER for a token the grammar does not allow, in the real controller's (ANTLR) wording.
 * @see openziti/ziti controller/storage/zitiql/util.go (ErrorListener.SyntaxError, ParseError.Error)
 */
export function unexpectedSymbol(at: TokenPosition): ApiError {
  return ApiError.invalidFilter(
    `Unexpected symbol: "${at.text}" at line: ${at.line} column: ${at.column}. line: ${at.line}, column: ${at.column}, symbol: ${at.text}`,
  )
}

/** INVALID_FILTER for a well-formed query that is wrong (unknown symbol, type mismatch), with the position appended. */
export function invalidAt(message: string, at: TokenPosition): ApiError {
  return ApiError.invalidFilter(`${message}. line: ${at.line}, column: ${at.column}, symbol: ${at.text}`)
}

const WORD = /[A-Za-z][A-Za-z_]*(?:\.[A-Za-z][A-Za-z_-]*)*/y
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?(?:0|[1-9][0-9]*))?/y
const DATETIME = /datetime\([ \t\r\n]*([^ \t\r\n()]*)[ \t\r\n]*\)/y
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/
const IDENT_ONLY = /^[A-Za-z][A-Za-z_]*(?:\.[A-Za-z][A-Za-z_-]*)*$/
const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', f: '\f', n: '\n', r: '\r', t: '\t' }

/**
 * Epoch ms of an RFC 3339 date-time (`T`/`t`, `Z`/`z` accepted; fractions beyond ms are truncated),
 * or undefined when it is not one or names a day that does not exist.
 */
export function parseRfc3339Ms(text: string): number | undefined {
  const m = RFC3339.exec(text)
  if (!m) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number)
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() // leap-year-agnostic upper bound
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  if (day > daysInMonth || (month === 2 && day === 29 && !leap)) return undefined
  let offsetMin = 0
  if (!m[8]) {
    const oh = Number(m[10])
    const om = Number(m[11])
    if (oh > 23 || om > 59) return undefined
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om)
  }
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day) // unlike Date.UTC, keeps years 0-99 as written
  d.setUTCHours(hour, minute, second, ms)
  return d.getTime() - offsetMin * 60_000
}

/** Whether a string is a plain ZitiQL identifier (what a quoted identifier may contain). */
export function isIdentifier(text: string): boolean {
  return IDENT_ONLY.test(text)
}

/**
 * Splits a filter into tokens, ending with one `eof` token.
 *
 * Rules beyond the obvious ones: whitespace is space, tab, CR and LF only; words, numbers, strings and datetimes
 * must be separated by whitespace from a preceding word, literal, `)` or `]` (the grammar requires `WS+` there);
 * identifiers contain no digits.
 * @throws ApiError INVALID_FILTER at the first character that cannot start a token.
 */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  let line = 1
  let lineStart = 0
  let prevEnd = -1
  let prevJoins = false // previous token is a word, literal, ')' or ']'

  const at = (start: number, text: string): TokenPosition => ({ text, line, column: start - lineStart })

  while (i < src.length) {
    const c = src[i]
    if (c === ' ' || c === '\t' || c === '\r') {
      i++
      continue
    }
    if (c === '\n') {
      i++
      line++
      lineStart = i
      continue
    }
    const start = i
    const column = start - lineStart
    let token: Token

    if (c === 'd' && src.startsWith('datetime(', i)) {
      DATETIME.lastIndex = i
      const m = DATETIME.exec(src)
      const ms = m ? parseRfc3339Ms(m[1]) : undefined
      if (!m || ms === undefined) throw unexpectedSymbol(at(start, m ? m[0] : src.slice(i, i + 9)))
      token = { kind: 'datetime', value: ms, text: m[0], line, column }
    } else if (/[A-Za-z]/.test(c)) {
      WORD.lastIndex = i
      const text = WORD.exec(src)![0]
      const lower = text.toLowerCase()
      token = KEYWORDS.has(lower)
        ? { kind: 'keyword', keyword: lower as QueryKeyword, text, line, column }
        : { kind: 'ident', value: text, text, line, column }
    } else if (c === "'") {
      const close = src.indexOf("'", i + 1)
      const inner = close < 0 ? '' : src.slice(i + 1, close)
      if (close < 0 || !isIdentifier(inner)) throw unexpectedSymbol(at(start, close < 0 ? src.slice(i) : src.slice(i, close + 1)))
      token = { kind: 'ident', value: inner, text: src.slice(i, close + 1), line, column }
    } else if (c === '"') {
      token = { ...readString(src, i, at(start, src.slice(i))), line, column }
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i
      const m = NUMBER.exec(src)
      if (!m) throw unexpectedSymbol(at(start, c))
      token = { kind: 'number', value: Number(m[0]), text: m[0], line, column }
    } else if (c === '!' || c === '<' || c === '>' || c === '=') {
      const two = src.slice(i, i + 2)
      const text = two === '!=' || two === '<=' || two === '>=' ? two : c
      if (text === '!') throw unexpectedSymbol(at(start, c))
      token = { kind: 'op', text, line, column }
    } else if (c === '(' || c === ')' || c === '[' || c === ']' || c === ',') {
      token = { kind: 'punct', text: c, line, column }
    } else {
      throw unexpectedSymbol(at(start, String.fromCodePoint(src.codePointAt(i)!)))
    }

    const joins = token.kind === 'keyword' || token.kind === 'ident' || token.kind === 'string' || token.kind === 'number' || token.kind === 'datetime'
    if (joins && prevJoins && prevEnd === start) throw unexpectedSymbol(token)
    tokens.push(token)
    i += token.text.length
    prevEnd = i
    prevJoins = joins || token.text === ')' || token.text === ']'
  }
  tokens.push({ kind: 'eof', text: '<EOF>', line, column: i - lineStart })
  return tokens
}

function readString(src: string, start: number, where: TokenPosition): { kind: 'string'; value: string; text: string } {
  let value = ''
  let i = start + 1
  while (i < src.length) {
    const c = src[i]
    if (c === '"') return { kind: 'string', value, text: src.slice(start, i + 1) }
    if (c.charCodeAt(0) < 0x20) break
    if (c === '\\') {
      const decoded = ESCAPES[src[i + 1]]
      if (decoded === undefined) {
        i++ // name the bad escape in the message
        break
      }
      value += decoded
      i += 2
      continue
    }
    value += c
    i++
  }
  throw unexpectedSymbol({ ...where, text: src.slice(start, Math.min(i + 1, src.length)) })
}
