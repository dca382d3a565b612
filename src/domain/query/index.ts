/**
 * The public surface of the query domain: ZitiQL filters, the list engine and role filters.
 * List endpoints import from here, not from the individual files.
 */
export type { FieldType, SymbolTable, ScalarType, CompareOp, Subject, FieldSubject, Predicate, SortKey, ListQuery } from './query-types.ts'
export { parseListQuery, SORT_MAX, MAX_NESTING } from './query-parser.ts'
export { matches, type Row } from './query-eval.ts'
export {
  runList,
  recordsOf,
  type Sliceable,
  resolvePaging,
  toPaginationJson,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_OFFSET_MAX,
  UNLIMITED_LIMIT,
  UNLIMITED_LIMIT_JSON,
  type Paging,
  type ListResult,
  type RunListOptions,
} from './query-list.ts'
export { indexHints, type IndexHint } from './query-index-hints.ts'
export { parseRoleFilter, matchesRoleFilter, type RoleFilter } from './query-role-filter.ts'
