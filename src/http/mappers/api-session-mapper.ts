/** API session records → wire details (the token is shown only in the authenticate answer). */
import type { ApiSession } from '../../domain/session/session-types.ts'
import type { Identity } from '../../domain/identity/identity-types.ts'
import { selfLink } from '../http-envelope.ts'
import type { AuthQuery } from '../../flows/authenticate/auth-api-session.ts'
import { iso, toEntityRef } from './identity-mapper.ts'

export function toApiSessionDetail(s: ApiSession, identity: Identity | undefined, token?: string, authQueries: readonly AuthQuery[] = []) {
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
    authQueries,
    isMfaRequired: s.isMfaRequired,
    isMfaComplete: s.isMfaComplete,
    isCertExtendable: s.isCertExtendable,
    lastActivityAt: iso(s.lastActivityAt),
    cachedLastActivityAt: iso(s.lastActivityAt),
  }
  if (token !== undefined) out.token = token
  return out
}

export function toCurrentApiSessionDetail(
  s: ApiSession,
  identity: Identity | undefined,
  timeoutMs: number,
  token?: string,
  authQueries: readonly AuthQuery[] = [],
) {
  return {
    ...toApiSessionDetail(s, identity, token, authQueries),
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
