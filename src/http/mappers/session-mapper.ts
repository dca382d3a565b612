/** Service session records → the filter rows and filterable fields of session lists (both APIs). */
import type { ServiceSession } from '../../domain/session/service-session-types.ts'
import { BASE_SYMBOLS } from './common-mapper.ts'

/** The fields the filter language knows on sessions (see toSessionRow). */
export const SESSION_SYMBOLS = {
  ...BASE_SYMBOLS,
  apiSession: 'string',
  apiSessionId: 'string',
  identity: 'string',
  identityId: 'string',
  service: 'string',
  serviceId: 'string',
  type: 'string',
} as const

export function toSessionRow(s: ServiceSession): Record<string, unknown> {
  return {
    id: s.id,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    tags: s.tags ?? {},
    isSystem: false,
    apiSession: s.apiSessionId,
    apiSessionId: s.apiSessionId,
    identity: s.identityId,
    identityId: s.identityId,
    service: s.serviceId,
    serviceId: s.serviceId,
    type: s.type,
  }
}
