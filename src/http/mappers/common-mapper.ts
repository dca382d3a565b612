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

/** The members every entity view starts with (the spec's `baseEntity`), for a record stored with epoch ms times. */
export function toBaseEntity(entityPath: string, r: { id: string; createdAt: number; updatedAt: number; tags: Record<string, unknown> | null }) {
  return { id: r.id, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt), _links: selfLink(entityPath, r.id), tags: r.tags ?? {} }
}

/** Every stored entity's filterable fields, to which each resource's mapper adds its own. */
export const BASE_SYMBOLS = { id: 'string', createdAt: 'datetime', updatedAt: 'datetime', tags: 'map', isSystem: 'boolean' } as const

/** What a stored entity's detail opens with (the spec's baseEntity): id, times, its self link, tags. */
export function baseEntityView(entity: string, e: { id: string; createdAt: number; updatedAt: number; tags: Record<string, unknown> }) {
  return { id: e.id, createdAt: iso(e.createdAt), updatedAt: iso(e.updatedAt), _links: selfLink(entity, e.id), tags: e.tags }
}

/** The BASE_SYMBOLS members of a stored entity's filter row (a user-made entity: isSystem false). */
export function baseEntityRow(e: { id: string; createdAt: number; updatedAt: number; tags: Record<string, unknown> }): Record<string, unknown> {
  return { id: e.id, createdAt: e.createdAt, updatedAt: e.updatedAt, tags: e.tags, isSystem: false }
}
