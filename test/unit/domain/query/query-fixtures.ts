/** Shared symbols and helpers for the query domain tests. */
import { ApiError } from '../../../../src/errors/api-error.ts'
import { parseListQuery, type SymbolTable } from '../../../../src/domain/query/index.ts'

/** An identity-like list: every field type once. */
export const SYMBOLS: SymbolTable = {
  id: 'string',
  name: 'string',
  externalId: 'string',
  isAdmin: 'boolean',
  cost: 'number',
  createdAt: 'datetime',
  roleAttributes: 'set',
  tags: 'map',
}

/** The ApiError a call throws; fails the test when it throws nothing or something else. */
export function apiErrorOf(fn: () => unknown): ApiError {
  try {
    fn()
  } catch (e) {
    if (e instanceof ApiError) return e
    throw e
  }
  throw new Error('expected an ApiError, nothing was thrown')
}

/** The cause message of an ApiError with an api cause. */
export function causeMessage(e: ApiError): string {
  if (e.apiCause?.kind !== 'api') throw new Error(`expected an api cause, got ${JSON.stringify(e.apiCause)}`)
  return e.apiCause.message
}

/** The INVALID_FILTER cause message for a filter; fails when the filter parses or fails otherwise. */
export function filterError(filter: string, symbols: SymbolTable = SYMBOLS): string {
  const e = apiErrorOf(() => parseListQuery(filter, symbols))
  if (e.code !== 'INVALID_FILTER') throw new Error(`expected INVALID_FILTER, got ${e.code}`)
  return causeMessage(e)
}

/** A seeded linear congruential generator (32-bit state), so random tests are reproducible. Returns [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 4294967296
  }
}
