/** Revocation records → wire details and filter rows. The only place that renames revocation fields. */
import type { Revocation } from '../../domain/identity/identity-revocation.ts'
import { BASE_SYMBOLS, baseEntityRow, iso, toBaseEntity } from './common-mapper.ts'

/** The fields the filter language knows on revocations. */
export const REVOCATION_SYMBOLS = { ...BASE_SYMBOLS, type: 'string', expiresAt: 'datetime' } as const

/** The detail view (the spec's revocationDetail). */
export function toRevocationDetail(r: Revocation) {
  return { ...toBaseEntity('revocations', r), type: r.type, expiresAt: iso(r.expiresAt) }
}

/** The row the filter language sees for a revocation (see REVOCATION_SYMBOLS). */
export function toRevocationRow(r: Revocation): Record<string, unknown> {
  return { ...baseEntityRow(r), type: r.type, expiresAt: r.expiresAt }
}
