/**
 * Evaluates a parsed ListQuery against plain rows: the predicate (compiled once to closures) and the sort keys.
 * Rows are plain records; nothing here throws for odd row data: a value of the wrong type counts as missing.
 */
import type { ListQuery, Predicate, ScalarType, SortKey, Subject } from './query-types.ts'

/** A plain row: field name → value (string, number, boolean, null/undefined, string[] for sets, object for maps). */
export type Row = Record<string, unknown>

type Test = (row: Row, element: unknown) => boolean
type Reader = (row: Row, element: unknown) => unknown

const compiled = new WeakMap<Predicate, Test>()

/**
 * Whether a row satisfies the query's predicate. Sort, skip and limit play no part.
 *
 * Datetime fields accept ISO-8601 strings (give an offset or `Z`: `Date.parse` reads a date-time without one as
 * local time) or epoch-ms numbers, and compare as instants at millisecond precision.
 * A map entry (`tags.k`) compared with a string literal also matches a number or boolean tag through its text.
 */
export function matches(q: ListQuery, row: Row): boolean {
  return compiledTest(q.predicate)(row, undefined)
}

/** The compiled form of a predicate, cached per predicate object. */
export function compiledTest(p: Predicate): (row: Row, element: unknown) => boolean {
  let test = compiled.get(p)
  if (!test) {
    test = compile(p)
    compiled.set(p, test)
  }
  return test
}

function compile(p: Predicate): Test {
  switch (p.kind) {
    case 'const': {
      const v = p.value
      return () => v
    }
    case 'and': {
      const items = p.items.map(compile)
      return (row, e) => {
        for (const t of items) if (!t(row, e)) return false
        return true
      }
    }
    case 'or': {
      const items = p.items.map(compile)
      return (row, e) => {
        for (const t of items) if (t(row, e)) return true
        return false
      }
    }
    case 'not': {
      const inner = compile(p.expr)
      return (row, e) => !inner(row, e)
    }
    case 'truthy': {
      const read = reader(p.subject)
      return (row, e) => read(row, e) === true
    }
    case 'isNull': {
      const read = reader(p.subject)
      const negated = p.negated
      return (row, e) => {
        const v = read(row, e)
        return (v === null || v === undefined) !== negated
      }
    }
    case 'compare': {
      const read = converted(p.subject, p.valueType)
      const lit = p.value
      const compare = COMPARE[p.op]
      const onMissing = p.op === '!='
      return (row, e) => {
        const v = read(row, e)
        return v === null ? onMissing : compare(v, lit)
      }
    }
    case 'contains': {
      const read = converted(p.subject, 'string')
      const ci = p.caseInsensitive
      const needle = ci ? p.value.toUpperCase() : p.value
      const negated = p.negated
      return (row, e) => {
        const v = read(row, e) as string | null
        const found = v !== null && (ci ? v.toUpperCase() : v).includes(needle)
        return found !== negated
      }
    }
    case 'in': {
      const read = converted(p.subject, p.valueType)
      const values = new Set<unknown>(p.values)
      const negated = p.negated
      return (row, e) => {
        const v = read(row, e)
        return (v !== null && values.has(v)) !== negated
      }
    }
    case 'between': {
      const read = converted(p.subject, p.valueType)
      const { low, high, negated } = p
      return (row, e) => {
        const v = read(row, e) as number | null
        return (v !== null && v >= low && v < high) !== negated
      }
    }
    case 'quantified': {
      const test = compile(p.test)
      const set = p.set
      if (p.quantifier === 'anyOf') {
        return (row) => {
          const arr = row[set]
          return Array.isArray(arr) && arr.some((el) => test(row, el))
        }
      }
      return (row) => {
        const arr = row[set]
        return !Array.isArray(arr) || arr.every((el) => test(row, el))
      }
    }
    case 'isEmpty': {
      const set = p.set
      return (row) => {
        const arr = row[set]
        return !Array.isArray(arr) || arr.length === 0
      }
    }
  }
}

const COMPARE: Readonly<Record<string, (a: unknown, b: unknown) => boolean>> = {
  '=': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => (a as number) < (b as number),
  '<=': (a, b) => (a as number) <= (b as number),
  '>': (a, b) => (a as number) > (b as number),
  '>=': (a, b) => (a as number) >= (b as number),
}

function reader(s: Subject): Reader {
  switch (s.kind) {
    case 'element':
      return (_row, e) => e
    case 'count': {
      const set = s.set
      return (row) => {
        const arr = row[set]
        return Array.isArray(arr) ? arr.length : 0
      }
    }
    case 'field': {
      if (s.map !== undefined) {
        const map = s.map
        const key = s.key!
        // `data.a.b`: the member `a.b`, else the member `b` of the object `a` (config data nests; the real controller's
        // map symbols walk nested maps)
        const path = key.split('.')
        return (row) => {
          let m = row[map]
          if (m === null || typeof m !== 'object') return undefined
          if (Object.hasOwn(m, key)) return (m as Record<string, unknown>)[key]
          for (const part of path) {
            if (m === null || typeof m !== 'object' || Array.isArray(m) || !Object.hasOwn(m, part)) return undefined
            m = (m as Record<string, unknown>)[part]
          }
          return m
        }
      }
      const name = s.name
      return (row) => row[name]
    }
  }
}

/** Reads the subject and converts it to the operation's type; null when missing or of another type. */
function converted(s: Subject, as: ScalarType): (row: Row, e: unknown) => string | number | boolean | null {
  const read = reader(s)
  const textual = s.kind === 'count' || (s.kind === 'field' && (s.type === 'number' || s.type === 'any'))
  switch (as) {
    case 'string':
      return textual ? (row, e) => toText(read(row, e)) : (row, e) => stringValue(read(row, e))
    case 'number':
      return (row, e) => numberValue(read(row, e))
    case 'boolean':
      return (row, e) => booleanValue(read(row, e))
    case 'datetime':
      return (row, e) => instantValue(read(row, e))
  }
}

function stringValue(v: unknown): string | null {
  return typeof v === 'string' ? v : null
}

function toText(v: unknown): string | null {
  if (typeof v === 'string') return v
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  if (typeof v === 'boolean') return String(v)
  return null
}

function numberValue(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null
}

function booleanValue(v: unknown): boolean | null {
  return typeof v === 'boolean' ? v : null
}

/** Epoch ms of an ISO-8601 string, an epoch-ms number or a Date; null otherwise. */
export function instantValue(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null
  if (typeof v === 'string') {
    const ms = Date.parse(v)
    return Number.isNaN(ms) ? null : ms
  }
  if (v instanceof Date) {
    const ms = v.getTime()
    return Number.isNaN(ms) ? null : ms
  }
  return null
}

/** A sort key value: strings and numbers as-is, booleans as 0/1, datetimes as epoch ms; null when missing. */
export type SortValue = string | number | null

/** Extracts the values of the sort keys from a row, in key order. */
export function sortValues(keys: readonly SortKey[], row: Row): SortValue[] {
  const out = new Array<SortValue>(keys.length)
  for (let i = 0; i < keys.length; i++) {
    const v = row[keys[i].field]
    switch (keys[i].type) {
      case 'string':
        out[i] = stringValue(v)
        break
      case 'number':
        out[i] = numberValue(v)
        break
      case 'boolean':
        out[i] = typeof v === 'boolean' ? (v ? 1 : 0) : null
        break
      case 'datetime':
        out[i] = instantValue(v)
        break
    }
  }
  return out
}

/**
 * Compares two sort-value tuples under the keys' directions: missing values first when ascending
 * (last when descending), as the real controller's row comparator does. Strings compare by UTF-16 code units.
 * @see openziti/ziti controller/storage/boltz/query_sort.go
 */
export function compareSortValues(keys: readonly SortKey[], a: readonly SortValue[], b: readonly SortValue[]): number {
  for (let i = 0; i < keys.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x === y) continue
    let c: number
    if (x === null) c = -1
    else if (y === null) c = 1
    else c = x < y ? -1 : 1
    return keys[i].ascending ? c : -c
  }
  return 0
}
