/** API session records → wire details (the token is shown only in the authenticate answer). */
import type { ApiSession } from '../../domain/session/session-types.ts'
import type { Identity } from '../../domain/identity/identity-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso, toEntityRef } from './common-mapper.ts'

/** The fields the filter language knows on API sessions (see toApiSessionRow). */
export const API_SESSION_SYMBOLS = {
  ...BASE_SYMBOLS,
  identity: 'string',
  identityId: 'string',
  authenticatorId: 'string',
  ipAddress: 'string',
  lastActivityAt: 'datetime',
} as const

export function toApiSessionDetail(s: ApiSession, identity: Identity | undefined, token?: string) {
  const out: Record<string, unknown> = {
    id: s.id,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    _links: selfLink('api-sessions', s.id),
    tags: s.tags,
    identity: toEntityRef('identities', s.identityId, identity?.name ?? ''),
    identityId: s.identityId,
    authenticatorId: s.authenticatorId,
    configTypes: s.configTypes,
    ipAddress: s.ipAddress,
    authQueries: [],
    isMfaRequired: s.isMfaRequired,
    isMfaComplete: s.isMfaComplete,
    isCertExtendable: s.isCertExtendable,
    lastActivityAt: iso(s.lastActivityAt),
    cachedLastActivityAt: iso(s.lastActivityAt),
  }
  if (token !== undefined) out.token = token
  return out
}

export function toCurrentApiSessionDetail(s: ApiSession, identity: Identity | undefined, timeoutMs: number, token?: string) {
  return {
    ...toApiSessionDetail(s, identity, token),
    expiresAt: iso(s.lastActivityAt + timeoutMs),
    expirationSeconds: Math.floor(timeoutMs / 1000),
  }
}

export function toApiSessionRow(s: ApiSession): Record<string, unknown> {
  return {
    id: s.id,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    tags: s.tags,
    isSystem: false,
    identity: s.identityId,
    identityId: s.identityId,
    authenticatorId: s.authenticatorId,
    ipAddress: s.ipAddress,
    lastActivityAt: s.lastActivityAt,
  }
}
