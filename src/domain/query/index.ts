/**
 * The public surface of the query domain: ZitiQL filters, the list engine and role filters.
 * List endpoints import from here, not from the individual files.
 */
export type { FieldType, SymbolTable, ScalarType, CompareOp, Subject, FieldSubject, Predicate, SortKey, ListQuery } from './query-types.ts'
export { parseListQuery, SORT_MAX } from './query-parser.ts'
export { matches, type Row } from './query-eval.ts'
