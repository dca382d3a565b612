/**
 * Shared list plumbing: parse `filter`/`sort`/paging/roleFilter, let the caller pick candidates (by an index hint
 * when one serves), run the list engine, and render the list envelope with pagination and filterable fields.
 */
import {
  indexHints,
  matchesRoleFilter,
  parseListQuery,
  parseRoleFilter,
  runList,
  type ListQuery,
  type SymbolTable,
} from '../domain/query/index.ts'
import { list } from './http-envelope.ts'

export interface ListParams {
  limit?: string
  offset?: string
  filter?: string
  sort?: string
  roleFilter?: string | string[]
  roleSemantic?: string
}

export interface ListSpec<T> {
  symbols: SymbolTable
  /** Fields an index can serve, most selective first; the candidates callback receives the hint it may use. */
  indexed?: readonly string[]
  /** All entities (in id order when `presortedById`), or those an index hint selects. */
  candidates(hint: { field: string; values: string[] } | undefined): Iterable<T>
  presortedById?: boolean
  toRow(t: T): Record<string, unknown>
  toView(t: T): unknown
  /** For lists that honour roleFilter/roleSemantic. */
  roleOf?(t: T): { id: string; roleAttributes?: readonly string[] | null }
}

export function respondList<T>(params: ListParams, spec: ListSpec<T>): Response {
  const page = listPage(params, spec)
  return list(page.items, page.result, Object.keys(spec.symbols))
}

/** The page of views a list query selects, with its pagination, for answers that are not a plain list envelope. */
export function listPage<T>(params: ListParams, spec: ListSpec<T>): { items: unknown[]; result: { limit: number; offset: number; totalCount: number } } {
  const { page, result } = selectPage(params, spec)
  return { items: page.map(spec.toView), result }
}

/** The records of the page a list query selects (for lists that render their rows themselves), with its pagination. */
export function selectPage<T>(params: ListParams, spec: Omit<ListSpec<T>, 'toView'>): { page: T[]; result: { limit: number; offset: number; totalCount: number } } {
  const q: ListQuery = parseListQuery(params.filter, spec.symbols, { sort: params.sort })
  const rf = spec.roleOf ? parseRoleFilter(params.roleFilter, params.roleSemantic) : undefined
  const hints = spec.indexed ? indexHints(q, spec.indexed) : []
  const hint = hints.length > 0 ? hints[0] : undefined
  let candidates: Iterable<T> = spec.candidates(hint)
  if (rf && spec.roleOf) {
    const roleOf = spec.roleOf
    const source = candidates
    candidates = (function* () {
      for (const t of source) if (matchesRoleFilter(rf, roleOf(t))) yield t
    })()
  }
  const result = runList(candidates, spec.toRow, q, { limit: params.limit, offset: params.offset }, {
    presortedById: (spec.presortedById ?? false) && hint === undefined,
  })
  return { page: result.items, result }
}
