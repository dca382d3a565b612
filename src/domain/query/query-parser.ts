/**
 * The ZitiQL parser: filter text + symbol table → a type-checked ListQuery. Pure; throws ApiError only.
 *
 * - Grammar: `[boolExpr] [sort by f [asc|desc], ...] [skip N] [limit N|none]`; empty filter = `true`.
 * - `and` binds tighter than `or`; `not` applies to the whole `and` chain that follows it (parenthesise).
 * - Unknown symbols, set symbols outside set functions and operand type mismatches are INVALID_FILTER.
 * - Subqueries (`from <set> where ...`) are rejected.
 * @see openziti/ziti controller/storage/zitiql/ZitiQl.g4, controller/storage/ast/*
 */
import { ApiError } from '../../errors/api-error.ts'
import { invalidAt, tokenize, unexpectedSymbol, type QueryKeyword, type Token } from './query-lexer.ts'
import { checkOperands, subjectTypeName, toLiteral, type Literal } from './query-operands.ts'
import type { FieldSubject, ListQuery, Predicate, SortKey, Subject, SymbolTable } from './query-types.ts'

/** The real controller uses at most this many sort keys. @see openziti/ziti controller/storage/boltz/query.go SortMax */
export const SORT_MAX = 5

const TRUE: Predicate = { kind: 'const', value: true }

/** Deepest nesting of parentheses and `not` accepted, so a hostile filter cannot exhaust the stack. */
export const MAX_NESTING = 200

/**
 * Parses and type-checks a filter against the list's symbols.
 *
 * `opts.sort` is the `sort` query parameter (e.g. `"name desc, createdAt"`), read as the keys of a `sort by`
 * clause (nothing else may follow them); a `sort by` inside the filter wins over it, but a malformed parameter is
 * rejected either way. A blank parameter counts as absent.
 *
 * @throws ApiError INVALID_FILTER for any problem in `filter`; the message names the line, column and token.
 * @throws ApiError INVALID_SORT_IDENTIFIER for any problem in `opts.sort`.
 * @example parseListQuery('name contains "web" and not isAdmin sort by createdAt desc limit 20', IDENTITY_SYMBOLS)
 */
export function parseListQuery(filter: string | undefined, symbols: SymbolTable, opts: { sort?: string } = {}): ListQuery {
  const parsed = filter === undefined || filter.trim() === '' ? { predicate: TRUE } : new Parser(tokenize(filter), symbols).query()
  const paramSort = opts.sort === undefined || opts.sort.trim() === '' ? undefined : parseSortParam(opts.sort, symbols)
  const requested = parsed.sort ?? paramSort ?? []
  return {
    predicate: parsed.predicate,
    sort: effectiveSort(requested, symbols),
    ...(parsed.skip !== undefined ? { skip: parsed.skip } : {}),
    ...(parsed.limit !== undefined ? { limit: parsed.limit } : {}),
  }
}

function parseSortParam(sort: string, symbols: SymbolTable): SortKey[] {
  try {
    return new Parser(tokenize(sort), symbols).sortParam()
  } catch (e) {
    if (e instanceof ApiError && e.code === 'INVALID_FILTER' && e.apiCause?.kind === 'api') {
      throw new ApiError('INVALID_SORT_IDENTIFIER', { cause: { kind: 'api', code: 'UNHANDLED', message: e.apiCause.message } })
    }
    throw e
  }
}

/** First 5 keys; a leading `id` key alone; otherwise `id asc` appended as tie-breaker (boltz newRowComparator). */
function effectiveSort(requested: readonly SortKey[], symbols: SymbolTable): SortKey[] {
  const keys = requested.slice(0, SORT_MAX)
  const idType = symbols.id === 'number' ? 'number' : 'string'
  if (keys.length === 0) return [{ field: 'id', type: idType, ascending: true }]
  if (keys[0].field === 'id') return [keys[0]]
  return [...keys, { field: 'id', type: idType, ascending: true }]
}

interface ParsedQuery {
  predicate: Predicate
  sort?: SortKey[]
  skip?: number
  limit?: number
}

type Resolved =
  | { kind: 'scalar'; subject: FieldSubject }
  | { kind: 'set' }
  | { kind: 'map' }

class Parser {
  private pos = 0
  private depth = 0

  constructor(
    private readonly tokens: readonly Token[],
    private readonly symbols: SymbolTable,
  ) {}

  query(): ParsedQuery {
    const out: ParsedQuery = { predicate: TRUE }
    if (!this.atKeyword('sort', 'skip', 'limit')) out.predicate = this.orExpr()
    if (this.atKeyword('sort')) out.sort = this.sortClause()
    if (this.atKeyword('skip')) {
      this.next()
      out.skip = this.integer('skip')
    }
    if (this.atKeyword('limit')) {
      this.next()
      if (this.atKeyword('none')) {
        this.next()
        out.limit = -1
      } else {
        out.limit = this.integer('limit')
      }
    }
    this.expectEof()
    return out
  }

  sortParam(): SortKey[] {
    const keys = this.sortFields()
    this.expectEof()
    return keys
  }

  // ---- boolean structure

  private orExpr(): Predicate {
    const items = [this.andExpr()]
    while (this.atKeyword('or')) {
      this.next()
      items.push(this.andExpr())
    }
    return items.length === 1 ? items[0] : { kind: 'or', items }
  }

  private andExpr(): Predicate {
    const items = [this.unary()]
    while (this.atKeyword('and')) {
      this.next()
      items.push(this.unary())
    }
    return items.length === 1 ? items[0] : { kind: 'and', items }
  }

  private unary(): Predicate {
    if (!this.atKeyword('not')) return this.primary()
    const t = this.next()
    const expr = this.nested(t, () => this.andExpr())
    return { kind: 'not', expr }
  }

  private primary(): Predicate {
    const t = this.next()
    if (t.kind === 'punct' && t.text === '(') {
      const inner = this.nested(t, () => this.orExpr())
      this.expectPunct(')')
      return inner
    }
    if (t.kind === 'ident') {
      const resolved = this.resolve(t.value, t)
      if (resolved.kind !== 'scalar') throw this.notScalar(t.value, resolved.kind, t)
      if (this.atOperator()) return this.operation(resolved.subject, t.value, t)
      if (!this.atExpressionEnd()) throw unexpectedSymbol(this.peek())
      if (resolved.subject.type !== 'boolean' && resolved.subject.type !== 'any') {
        throw invalidAt(`symbol '${t.value}' of type ${resolved.subject.type} cannot be used as a boolean expression`, t)
      }
      return { kind: 'truthy', subject: resolved.subject }
    }
    if (t.kind !== 'keyword') throw unexpectedSymbol(t)
    switch (t.keyword) {
      case 'true':
      case 'false':
        return { kind: 'const', value: t.keyword === 'true' }
      case 'isempty':
        return { kind: 'isEmpty', set: this.setArgument('isEmpty') }
      case 'anyof':
      case 'allof': {
        const name = t.keyword === 'anyof' ? 'anyOf' : 'allOf'
        const set = this.setArgument(name)
        if (!this.atOperator()) throw unexpectedSymbol(this.peek())
        const test = this.operation({ kind: 'element', set }, `${name}(${set})`, t)
        return { kind: 'quantified', quantifier: name, set, test }
      }
      case 'count': {
        const set = this.setArgument('count')
        if (!this.atOperator()) throw unexpectedSymbol(this.peek())
        return this.operation({ kind: 'count', set }, `count(${set})`, t)
      }
      case 'from':
        throw this.subquery(t)
      default:
        throw unexpectedSymbol(t)
    }
  }

  private nested<R>(at: Token, parse: () => R): R {
    if (++this.depth > MAX_NESTING) throw invalidAt(`filter nests parentheses or not deeper than ${MAX_NESTING} levels`, at)
    try {
      return parse()
    } finally {
      this.depth--
    }
  }

  /** Whether the next token may follow a complete boolean expression. */
  private atExpressionEnd(): boolean {
    const t = this.peek()
    return t.kind === 'eof' || (t.kind === 'punct' && t.text === ')') || this.atKeyword('and', 'or', 'sort', 'skip', 'limit')
  }

  /** `(<set symbol>)` after a set function name; returns the set's name. */
  private setArgument(fn: string): string {
    this.expectPunct('(')
    const t = this.next()
    if (t.kind === 'keyword' && t.keyword === 'from') throw this.subquery(t)
    if (t.kind !== 'ident') throw unexpectedSymbol(t)
    const resolved = this.resolve(t.value, t)
    if (resolved.kind !== 'set') throw invalidAt(`symbol '${t.value}' is not a set symbol and cannot be used in ${fn}()`, t)
    this.expectPunct(')')
    return t.value
  }

  // ---- operations

  private atOperator(): boolean {
    const t = this.peek()
    return t.kind === 'op' || this.atKeyword('in', 'not', 'contains', 'icontains', 'between')
  }

  /** `<subject> <op> <rhs>`; the subject has been read, the operator is next. */
  private operation(subject: Subject, lhsText: string, lhsAt: Token): Predicate {
    const opTok = this.next()
    if (opTok.kind === 'op') return this.comparison(subject, lhsText, opTok)
    if (opTok.kind !== 'keyword') throw unexpectedSymbol(opTok)
    const negated = opTok.keyword === 'not'
    const op = negated ? this.next() : opTok
    const keyword = op.kind === 'keyword' ? op.keyword : undefined
    const opText = (negated ? 'not ' : '') + keyword
    switch (keyword) {
      case 'in': {
        const values = this.literalList()
        checkOperands(subject, lhsText, opText, values[0], values, lhsAt)
        const valueType = values[0].type as 'string' | 'number' | 'datetime'
        return { kind: 'in', subject, valueType, values: values.map((v) => v.value as string | number), negated }
      }
      case 'contains':
      case 'icontains': {
        const lit = this.literal(['string', 'number'])
        checkOperands(subject, lhsText, opText, lit, [lit], lhsAt)
        return { kind: 'contains', subject, value: String(lit.value), caseInsensitive: keyword === 'icontains', negated }
      }
      case 'between': {
        const low = this.literal(['number', 'datetime'])
        this.expectKeyword('and')
        const high = this.literal([low.type])
        checkOperands(subject, lhsText, opText, low, [low, high], lhsAt)
        const valueType = low.type as 'number' | 'datetime'
        return { kind: 'between', subject, valueType, low: low.value as number, high: high.value as number, negated }
      }
      default:
        throw unexpectedSymbol(op)
    }
  }

  private comparison(subject: Subject, lhsText: string, opTok: Token): Predicate {
    const op = opTok.text as '=' | '!=' | '<' | '<=' | '>' | '>='
    const equality = op === '=' || op === '!='
    const t = this.peek()
    if (t.kind === 'keyword' && t.keyword === 'null') {
      this.next()
      if (!equality || subject.kind !== 'field') {
        throw invalidAt(`operation ${lhsText} ${op} null is not supported with operands types ${subjectTypeName(subject)}, null`, t)
      }
      return { kind: 'isNull', subject, negated: op === '!=' }
    }
    const lit = this.literal(equality ? ['string', 'number', 'datetime', 'boolean'] : ['string', 'number', 'datetime'])
    checkOperands(subject, lhsText, op, lit, [lit], t)
    return { kind: 'compare', subject, op, valueType: lit.type, value: lit.value }
  }

  private literal(allowed: readonly Literal['type'][]): Literal {
    const t = this.next()
    const lit = toLiteral(t)
    if (!lit || !allowed.includes(lit.type)) throw unexpectedSymbol(t)
    return lit
  }

  /** A non-empty `[...]` of strings, numbers or datetimes, all of one kind. */
  private literalList(): Literal[] {
    this.expectPunct('[')
    const first = this.literal(['string', 'number', 'datetime'])
    const out = [first]
    while (this.peek().text === ',' && this.peek().kind === 'punct') {
      this.next()
      out.push(this.literal([first.type]))
    }
    this.expectPunct(']')
    return out
  }

  // ---- trailing clauses

  private sortClause(): SortKey[] {
    this.expectKeyword('sort')
    this.expectKeyword('by')
    return this.sortFields()
  }

  private sortFields(): SortKey[] {
    const keys = [this.sortField()]
    while (this.peek().kind === 'punct' && this.peek().text === ',') {
      this.next()
      keys.push(this.sortField())
    }
    return keys
  }

  private sortField(): SortKey {
    const t = this.next()
    if (t.kind !== 'ident') throw unexpectedSymbol(t)
    const type = Object.hasOwn(this.symbols, t.value) ? this.symbols[t.value] : undefined
    if (type === undefined) {
      const dot = t.value.indexOf('.')
      if (dot > 0 && Object.hasOwn(this.symbols, t.value.slice(0, dot)) && this.symbols[t.value.slice(0, dot)] === 'map') throw invalidAt(`no such sort field: ${t.value}`, t)
      throw invalidAt(`unknown symbol '${t.value}'`, t)
    }
    if (type === 'set' || type === 'map') throw invalidAt(`invalid sort field: ${t.value}`, t)
    let ascending = true
    if (this.atKeyword('asc', 'desc')) ascending = (this.next() as { keyword: QueryKeyword }).keyword === 'asc'
    return { field: t.value, type, ascending }
  }

  private integer(clause: 'skip' | 'limit'): number {
    const t = this.next()
    if (t.kind !== 'number') throw unexpectedSymbol(t)
    if (!/^-?\d+$/.test(t.text)) throw invalidAt(`${clause} must be an integer`, t)
    return t.value
  }

  // ---- symbols

  private resolve(name: string, at: Token): Resolved {
    const type = Object.hasOwn(this.symbols, name) ? this.symbols[name] : undefined
    if (type === 'set' || type === 'map') return { kind: type }
    if (type !== undefined) return { kind: 'scalar', subject: { kind: 'field', name, type } }
    const dot = name.indexOf('.')
    if (dot > 0) {
      const map = name.slice(0, dot)
      if (Object.hasOwn(this.symbols, map) && this.symbols[map] === 'map') {
        return { kind: 'scalar', subject: { kind: 'field', name, type: 'any', map, key: name.slice(dot + 1) } }
      }
    }
    throw invalidAt(`unknown symbol '${name}'`, at)
  }

  private notScalar(name: string, kind: 'set' | 'map', at: Token): ApiError {
    if (kind === 'set') return invalidAt(`symbol '${name}' is a set symbol but is used in non-set function context`, at)
    return invalidAt(`symbol '${name}' is a map symbol; filter on one of its keys, e.g. ${name}.<key>`, at)
  }

  private subquery(at: Token): ApiError {
    return invalidAt('subqueries (from <set> where <query>) are not supported', at)
  }

  // ---- token helpers

  private peek(): Token {
    return this.tokens[this.pos]
  }

  private next(): Token {
    const t = this.tokens[this.pos]
    if (t.kind !== 'eof') this.pos++
    return t
  }

  private atKeyword(...keywords: QueryKeyword[]): boolean {
    const t = this.peek()
    return t.kind === 'keyword' && keywords.includes(t.keyword)
  }

  private expectKeyword(keyword: QueryKeyword): void {
    const t = this.next()
    if (t.kind !== 'keyword' || t.keyword !== keyword) throw unexpectedSymbol(t)
  }

  private expectPunct(p: string): void {
    const t = this.next()
    if (t.kind !== 'punct' || t.text !== p) throw unexpectedSymbol(t)
  }

  private expectEof(): void {
    const t = this.peek()
    if (t.kind === 'keyword' && t.keyword === 'from') throw this.subquery(t)
    if (t.kind !== 'eof') throw unexpectedSymbol(t)
  }
}
