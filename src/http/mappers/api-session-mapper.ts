/**
 * API session records → wire details. Only the SHA-256 of a session's token is stored, so `token` (required by the
 * spec) is known only for the caller's own session, from the authenticate answer or the `zt-session` it presented;
 * any other session shows "" (a README difference). `isCertExtendRequested` and `isCertKeyRollRequested` are read
 * from the session's authenticator when it is rendered (a cert authenticator an admin asked to extend), as the real
 * controller reads them for a legacy session.
 */
import type { ApiSession } from '../../domain/session/session-types.ts'
import type { Authenticator, Identity } from '../../domain/identity/identity-types.ts'
import { selfLink } from '../http-envelope.ts'
import type { AuthQuery } from '../../flows/authenticate/auth-api-session.ts'
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

/**
 * The token an answer may show for `s`: the one the caller presented when `s` is the caller's own session (its
 * `zt-session`, or the access token of an OIDC session), else "".
 */
export function visibleToken(s: ApiSession, caller: { session: ApiSession; bearer?: { token: string } }, request: Request): string {
  if (s.id !== caller.session.id) return ''
  return caller.bearer?.token ?? request.headers.get('zt-session') ?? ''
}

/** What a session shows of its authenticator: an early extension asked of its certificate. */
export interface SessionAuthenticatorView {
  authenticator?: Pick<Authenticator, 'method' | 'isExtendRequested' | 'isKeyRollRequested'>
}

export function toApiSessionDetail(
  s: ApiSession,
  identity: Identity | undefined,
  token: string,
  authQueries: readonly AuthQuery[] = [],
  { authenticator }: SessionAuthenticatorView = {},
) {
  const cert = authenticator?.method === 'cert' ? authenticator : undefined
  return {
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
    isCertExtendRequested: cert?.isExtendRequested ?? false,
    isCertKeyRollRequested: cert?.isKeyRollRequested ?? false,
    lastActivityAt: iso(s.lastActivityAt),
    cachedLastActivityAt: iso(s.lastActivityAt),
    token,
  }
}

export function toCurrentApiSessionDetail(
  s: ApiSession,
  identity: Identity | undefined,
  timeoutMs: number,
  token: string,
  authQueries: readonly AuthQuery[] = [],
  view: SessionAuthenticatorView = {},
) {
  return {
    ...toApiSessionDetail(s, identity, token, authQueries, view),
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
