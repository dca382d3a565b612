/**
 * What every mapper shares: the wire date format, entity references, and the filterable fields of every stored
 * entity. Resource-specific renaming stays in each resource's mapper.
 */
import { selfLink } from '../http-envelope.ts'

/** A stored timestamp (ms since the epoch) as the wire's RFC 3339 date-time. */
export const iso = (ms: number): string => new Date(ms).toISOString()
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms))

/** The spec's `entityRef`: a link, the entity path, its id and its name. */
export function toEntityRef(entity: string, id: string, name: string) {
  return { _links: selfLink(entity, id), entity, id, name }
}

/** The fields every entity view starts with (`baseEntity`): id, dates, self link, tags. */
export function toBaseEntity(r: { id: string; createdAt: number; updatedAt: number; tags?: Record<string, unknown> | null }, entity: string) {
  return { id: r.id, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt), _links: selfLink(entity, r.id), tags: r.tags ?? {} }
}

/** Every stored entity's filterable fields, to which each resource's mapper adds its own. */
export const BASE_SYMBOLS = { id: 'string', createdAt: 'datetime', updatedAt: 'datetime', tags: 'map', isSystem: 'boolean' } as const
