/**
 * Types of a parsed ZitiQL list query: the symbol table a list declares and the typed predicate tree.
 * Data only; parsing lives in query-parser.ts, evaluation in query-eval.ts.
 */

/**
 * The type of one filterable field of a list.
 *
 * - `string`, `number`, `boolean`: plain scalars.
 * - `datetime`: an instant; row values are ISO-8601 strings or epoch-ms numbers.
 * - `set`: an array of strings (e.g. `roleAttributes`), usable only inside `anyOf()`, `allOf()`, `count()`, `isEmpty()`.
 * - `map`: a plain object (e.g. `tags`); `tags.<key>` is then a symbol whose value may be a string, number, boolean or null.
 */
export type FieldType = 'string' | 'number' | 'boolean' | 'datetime' | 'set' | 'map'

/**
 * The public symbols of one list: field name → type. A name missing here is an `unknown symbol` in a filter.
 * @see openziti/ziti controller/storage/boltz/store_query.go (public symbols, map symbols)
 */
export type SymbolTable = Readonly<Record<string, FieldType>>

/** A type a single value can have (what a sort key or a comparison works on). */
export type ScalarType = 'string' | 'number' | 'boolean' | 'datetime'

/** A comparison operator of ZitiQL. */
export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>='

/**
 * Where the left-hand value of a comparison comes from.
 *
 * - `field`: a row field; `type: 'any'` for a map entry such as `tags.owner` (its type is decided by the literal).
 *   `map`/`key` are set for map entries: the value is `row[map][key]`.
 * - `element`: the current element of a set inside `anyOf(set)` / `allOf(set)` (always a string).
 * - `count`: the number of elements of a set (`count(set)`); a missing set counts 0.
 */
export type Subject =
  | { readonly kind: 'field'; readonly name: string; readonly type: ScalarType | 'any'; readonly map?: string; readonly key?: string }
  | { readonly kind: 'element'; readonly set: string }
  | { readonly kind: 'count'; readonly set: string }

/** A subject that reads a row field (plain or map entry). */
export type FieldSubject = Extract<Subject, { kind: 'field' }>

/**
 * The typed predicate tree. Datetime literals are stored as epoch milliseconds.
 *
 * Null semantics follow the real controller: any comparison against a missing value is false, except `!=`
 * and the negated forms (`not contains`, `not in`, `not between`), which are true.
 * @see openziti/ziti controller/storage/ast/node_expr.go
 */
export type Predicate =
  | { readonly kind: 'const'; readonly value: boolean }
  | { readonly kind: 'and'; readonly items: readonly Predicate[] }
  | { readonly kind: 'or'; readonly items: readonly Predicate[] }
  | { readonly kind: 'not'; readonly expr: Predicate }
  /** A bare boolean symbol: true only when the value is `true`. */
  | { readonly kind: 'truthy'; readonly subject: FieldSubject }
  /** `x = null` (negated: `x != null`). */
  | { readonly kind: 'isNull'; readonly subject: FieldSubject; readonly negated: boolean }
  | {
      readonly kind: 'compare'
      readonly subject: Subject
      readonly op: CompareOp
      readonly valueType: ScalarType
      readonly value: string | number | boolean
    }
  /** `contains` / `icontains`; a number literal is compared through its decimal text. */
  | {
      readonly kind: 'contains'
      readonly subject: Subject
      readonly value: string
      readonly caseInsensitive: boolean
      readonly negated: boolean
    }
  | {
      readonly kind: 'in'
      readonly subject: Subject
      readonly valueType: 'string' | 'number' | 'datetime'
      readonly values: readonly (string | number)[]
      readonly negated: boolean
    }
  /** Half-open like the real controller: `low <= v < high`. */
  | {
      readonly kind: 'between'
      readonly subject: Subject
      readonly valueType: 'number' | 'datetime'
      readonly low: number
      readonly high: number
      readonly negated: boolean
    }
  /** `anyOf(set) <op> v` / `allOf(set) <op> v`; `test` reads the element subject. `allOf` of an empty set is true. */
  | { readonly kind: 'quantified'; readonly quantifier: 'anyOf' | 'allOf'; readonly set: string; readonly test: Predicate }
  | { readonly kind: 'isEmpty'; readonly set: string }

/** One sort key; `type` tells how row values are compared. Missing values sort first ascending, last descending. */
export interface SortKey {
  readonly field: string
  readonly type: ScalarType
  readonly ascending: boolean
}

/**
 * A parsed, type-checked list query.
 *
 * - `predicate`: the filter; `{kind:'const', value:true}` for an empty filter.
 * - `sort`: the effective order. At most 5 requested keys, then `id asc` as tie-breaker; a leading `id` key
 *   stands alone (ids are unique). Default `[id asc]`.
 * - `skip`/`limit`: as written in the filter (`limit none` → -1); they win over the paging parameters.
 */
export interface ListQuery {
  readonly predicate: Predicate
  readonly sort: readonly SortKey[]
  readonly skip?: number
  readonly limit?: number
}
