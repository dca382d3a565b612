/** Authenticator records → wire details. Password hashes never leave this layer. */
import type { Authenticator, Identity } from '../../domain/identity/identity-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso, toEntityRef } from './common-mapper.ts'

/** The fields the filter language knows on authenticators (see toAuthenticatorRow). */
export const AUTHENTICATOR_SYMBOLS = {
  ...BASE_SYMBOLS,
  method: 'string',
  identity: 'string',
  identityId: 'string',
  username: 'string',
  fingerprint: 'string',
} as const

export function toAuthenticatorDetail(a: Authenticator, identity: Identity | undefined) {
  const out: Record<string, unknown> = {
    id: a.id,
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
    _links: selfLink('authenticators', a.id),
    tags: a.tags ?? {},
    method: a.method,
    identityId: a.identityId,
    identity: toEntityRef('identities', a.identityId, identity?.name ?? ''),
    isIssuedByNetwork: a.isIssuedByNetwork ?? false,
  }
  if (a.method === 'updb') out.username = a.username ?? ''
  if (a.method === 'cert') {
    out.certPem = a.certPem ?? ''
    out.fingerprint = a.fingerprint ?? ''
    out.isExtendRequested = a.isExtendRequested ?? false
    out.isKeyRollRequested = a.isKeyRollRequested ?? false
    out.extendRequestedAt = a.extendRequestedAt ? iso(a.extendRequestedAt) : null
    out.lastExtendRolledKeys = a.lastExtendRolledKeys ?? false
  }
  return out
}

export function toAuthenticatorRow(a: Authenticator): Record<string, unknown> {
  return {
    id: a.id,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    tags: a.tags ?? {},
    isSystem: false,
    method: a.method,
    identity: a.identityId,
    identityId: a.identityId,
    username: a.username ?? null,
    fingerprint: a.fingerprint ?? null,
  }
}
