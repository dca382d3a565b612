/**
 * The list engine every list endpoint uses: filter candidates, count all matches, return one sorted page.
 *
 * - Paging: default limit 10, max 500, `-1`/`limit none` = all, `0` or `< -1` = 10; offset 0..100000.
 * - `skip`/`limit` written in the filter win over the `offset`/`limit` parameters.
 * - A page is selected with a bounded top-K heap, never by sorting every match.
 * @see openziti/ziti controller/models/base_model.go (checkLimits), controller/storage/boltz/query_scanners.go
 */
import { ApiError } from '../../errors/api-error.ts'
import { compareSortValues, compiledTest, sortValues, type Row, type SortValue } from './query-eval.ts'
import { TopK } from './query-top-k.ts'
import type { ListQuery } from './query-types.ts'

/** Default page size. */
export const LIST_LIMIT_DEFAULT = 10
/** Largest page size; larger requests are clamped to it. */
export const LIST_LIMIT_MAX = 500
/** Largest offset; larger offsets are clamped to it. */
export const LIST_OFFSET_MAX = 100_000

/**
 * The `limit` reported for an unlimited page. The real controller reports Go's MaxInt64, 9223372036854775807,
 * which a double cannot hold: this is 2^63, its nearest double. `JSON.stringify` prints it as
 * `9223372036854776000`, which Go clients decoding into int64 reject as out of range, so render pagination with
 * {@link toPaginationJson}, which writes the exact digits.
 * @see openziti/ziti controller/storage/boltz/query_scanners.go (setPaging)
 */
export const UNLIMITED_LIMIT = 2 ** 63
/** The exact JSON text of the unlimited limit. */
export const UNLIMITED_LIMIT_JSON = '9223372036854775807'

/** The raw `limit` and `offset` query parameters, as the HTTP layer received them (strings) or already as numbers. */
export interface Paging {
  limit?: string | number
  offset?: string | number
}

/** One page of a list: `totalCount` counts every match; `limit`/`offset` are the applied values. */
export interface ListResult<T> {
  items: T[]
  totalCount: number
  /** The applied page size, or {@link UNLIMITED_LIMIT} when all matches were asked for. */
  limit: number
  offset: number
}

/** Options of {@link runList}. */
export interface RunListOptions {
  /**
   * The candidates come in ascending id order. When the query's order is `id asc`, matches are then collected
   * in arrival order and collection stops after offset+limit (counting continues, for `totalCount`).
   */
  presortedById?: boolean
}

/**
 * The applied paging of a query: the filter's `skip`/`limit` if written, else the parameters, then clamped.
 * @throws ApiError COULD_NOT_VALIDATE (field `limit`/`offset`) when a parameter is not an int64. The real controller
 *   answers its swagger 601 status there; we answer 400.
 */
export function resolvePaging(q: Pick<ListQuery, 'skip' | 'limit'>, paging: Paging): { limit: number; offset: number } {
  const rawLimit = q.limit ?? parseParam('limit', paging.limit)
  const rawOffset = q.skip ?? parseParam('offset', paging.offset)
  let limit: number
  if (rawLimit === -1) limit = UNLIMITED_LIMIT
  else if (rawLimit === undefined || rawLimit === 0 || rawLimit < -1) limit = LIST_LIMIT_DEFAULT
  else limit = Math.min(rawLimit, LIST_LIMIT_MAX)
  const offset = rawOffset === undefined || rawOffset < 0 ? 0 : Math.min(rawOffset, LIST_OFFSET_MAX)
  return { limit, offset }
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function parseParam(field: 'limit' | 'offset', raw: string | number | undefined): number | undefined {
  if (raw === undefined) return undefined
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw) || Math.abs(raw) > 2 ** 63) throw ApiError.invalidField(field, `${field} in query must be of type int64`, raw)
    return raw
  }
  if (raw === '') return undefined
  if (!/^[+-]?[0-9]+$/.test(raw)) throw ApiError.invalidField(field, `${field} in query must be of type int64`, raw)
  const big = BigInt(raw)
  if (big < INT64_MIN || big > INT64_MAX) throw ApiError.invalidField(field, `${field} in query must be of type int64`, raw)
  return Number(big) // beyond 2^53 only the clamps matter
}

interface Entry<T> {
  readonly item: T
  readonly keys: SortValue[]
}

/**
 * Filters `candidates` with the query, counts every match and returns the requested page in the query's order.
 *
 * `toRow` maps a candidate to the plain row the filter and sort read (see {@link Row}). Cost: one `toRow` and one
 * predicate evaluation per candidate, plus O(log(offset+limit)) per match for the page heap.
 * @throws ApiError COULD_NOT_VALIDATE for a non-integer `limit`/`offset` parameter.
 * @example runList(store.all(), toIdentityRow, parseListQuery(filter, IDENTITY_SYMBOLS, { sort }), { limit, offset })
 */
/**
 * Candidates that hand out a range without producing the rest: an array, or ids whose records are looked up on
 * demand (`recordsOf`). An unfiltered list in their order touches only the page.
 */
export interface Sliceable<T> extends Iterable<T> {
  readonly length: number
  slice(start: number, end?: number): T[]
}

function isSliceable<T>(c: Iterable<T>): c is Sliceable<T> {
  return Array.isArray(c) || c instanceof RecordsOf
}

class RecordsOf<T> implements Sliceable<T> {
  constructor(
    private readonly ids: readonly string[],
    private readonly get: (id: string) => T | undefined,
  ) {}
  get length(): number {
    return this.ids.length
  }
  slice(start: number, end?: number): T[] {
    const out: T[] = []
    for (const id of this.ids.slice(start, end)) {
      const t = this.get(id)
      if (t !== undefined) out.push(t)
    }
    return out
  }
  *[Symbol.iterator](): Iterator<T> {
    for (const id of this.ids) {
      const t = this.get(id)
      if (t !== undefined) yield t
    }
  }
}

/** The records of `ids` (every id must resolve while the list runs), looked up only where the list reads them. */
export function recordsOf<T>(ids: readonly string[], get: (id: string) => T | undefined): Sliceable<T> {
  return new RecordsOf(ids, get)
}

export function runList<T>(
  candidates: Iterable<T>,
  toRow: (t: T) => Row,
  q: ListQuery,
  paging: Paging,
  opts: RunListOptions = {},
): ListResult<T> {
  const { limit, offset } = resolvePaging(q, paging)
  const test = compiledTest(q.predicate)
  const keys = q.sort
  const pageEnd = limit === UNLIMITED_LIMIT ? Infinity : offset + limit
  let totalCount = 0

  if (opts.presortedById && keys.length === 1 && keys[0].field === 'id' && keys[0].ascending) {
    // no filter over an array: the page is a slice and the count its length, no row is built
    if (q.predicate.kind === 'const' && q.predicate.value === true && isSliceable(candidates)) {
      return { items: candidates.slice(offset, pageEnd === Infinity ? undefined : pageEnd), totalCount: candidates.length, limit, offset }
    }
    const items: T[] = []
    for (const c of candidates) {
      if (!test(toRow(c), undefined)) continue
      if (totalCount >= offset && totalCount < pageEnd) items.push(c)
      totalCount++
    }
    return { items, totalCount, limit, offset }
  }

  const compare = (a: Entry<T>, b: Entry<T>): number => compareSortValues(keys, a.keys, b.keys)
  let sorted: Entry<T>[]
  if (pageEnd === Infinity) {
    const all: Entry<T>[] = []
    for (const c of candidates) {
      const row = toRow(c)
      if (!test(row, undefined)) continue
      all.push({ item: c, keys: sortValues(keys, row) })
      totalCount++
    }
    sorted = all.sort(compare)
  } else {
    const top = new TopK<Entry<T>>(pageEnd, compare)
    for (const c of candidates) {
      const row = toRow(c)
      if (!test(row, undefined)) continue
      top.offer({ item: c, keys: sortValues(keys, row) })
      totalCount++
    }
    sorted = top.drainSorted()
  }
  return { items: sorted.slice(offset).map((e) => e.item), totalCount, limit, offset }
}

/**
 * The exact JSON text of `meta.pagination` (`{"limit":…,"offset":…,"totalCount":…}`), writing the unlimited
 * limit as 9223372036854775807 like the real controller.
 */
export function toPaginationJson(r: Pick<ListResult<unknown>, 'limit' | 'offset' | 'totalCount'>): string {
  const limit = r.limit === UNLIMITED_LIMIT ? UNLIMITED_LIMIT_JSON : String(r.limit)
  return `{"limit":${limit},"offset":${r.offset},"totalCount":${r.totalCount}}`
}
