/**
 * Index hints: equality constraints a store index can serve, read off the top-level AND chain of a query.
 * Hints only narrow the candidates; runList still applies the whole predicate to them.
 */
import type { ListQuery, Predicate } from './query-types.ts'

/**
 * One necessary condition of a query: every matching row has `field` equal to one of `values`
 * (for a set field: at least one element equal to one of `values`).
 */
export interface IndexHint {
  readonly field: string
  readonly values: string[]
}

/**
 * The equality constraints on `indexedFields` that every match must satisfy, taken from the conjuncts of the
 * top-level AND chain (parentheses flattened):
 *
 * - `f = "x"` and `f in ["a","b"]` on a string field (a map entry such as `tags.k` is never a hint);
 * - `anyOf(s) = "x"` and `anyOf(s) in [...]` on a set field.
 *
 * Empty when there are none, or when the top is an `or`/`not` (unsafe). Hints on one field are not merged:
 * a caller may serve any one of them (e.g. the one with the fewest values) and must keep filtering with the query.
 * @example indexHints(parseListQuery('name = "a" and anyOf(roleAttributes) in ["x","y"]', S), ['name', 'roleAttributes'])
 *   // → [{ field: 'name', values: ['a'] }, { field: 'roleAttributes', values: ['x', 'y'] }]
 */
export function indexHints(q: ListQuery, indexedFields: readonly string[]): IndexHint[] {
  const indexed = new Set(indexedFields)
  const hints: IndexHint[] = []
  for (const conjunct of conjuncts(q.predicate)) {
    const hint = hintOf(conjunct)
    if (hint && indexed.has(hint.field)) hints.push(hint)
  }
  return hints
}

function conjuncts(p: Predicate): Predicate[] {
  return p.kind === 'and' ? p.items.flatMap(conjuncts) : [p]
}

function hintOf(p: Predicate): IndexHint | undefined {
  if (p.kind === 'quantified') {
    if (p.quantifier !== 'anyOf') return undefined // allOf of an empty set is true: not a necessary condition
    const values = equalityValues(p.test)
    return values && { field: p.set, values }
  }
  if ((p.kind === 'compare' || p.kind === 'in') && p.subject.kind === 'field' && p.subject.type === 'string' && p.subject.map === undefined) {
    const values = equalityValues(p)
    return values && { field: p.subject.name, values }
  }
  return undefined
}

/** The string values `p` requires equality with, when `p` is `= "x"` or a non-negated `in [strings]`. */
function equalityValues(p: Predicate): string[] | undefined {
  if (p.kind === 'compare' && p.op === '=' && p.valueType === 'string') return [p.value as string]
  if (p.kind === 'in' && !p.negated && p.valueType === 'string') return [...new Set(p.values as string[])]
  return undefined
}
