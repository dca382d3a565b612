/** Enrollment records → wire details and filter rows. */
import type { Enrollment } from '../../domain/enrollment/enrollment-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso, toEntityRef } from './common-mapper.ts'

/** The fields the filter language knows on enrollments (see toEnrollmentRow). */
export const ENROLLMENT_SYMBOLS = {
  ...BASE_SYMBOLS,
  method: 'string',
  token: 'string',
  expiresAt: 'datetime',
  identity: 'string',
  identityId: 'string',
  caId: 'string',
  username: 'string',
} as const

/** @see edge-api management.yml enrollmentDetail */
export function toEnrollmentDetail(e: Enrollment, identityName: string) {
  return {
    id: e.id,
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
    _links: { ...selfLink('enrollments', e.id), identities: { href: `./identities/${e.identityId}` } },
    tags: {},
    method: e.method,
    token: e.token,
    jwt: e.jwt,
    expiresAt: iso(e.expiresAt),
    identityId: e.identityId,
    identity: toEntityRef('identities', e.identityId, identityName),
    caId: e.caId,
    ...(e.username !== null ? { username: e.username } : {}),
  }
}

export function toEnrollmentRow(e: Enrollment): Record<string, unknown> {
  return {
    id: e.id,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
    tags: {},
    isSystem: false,
    method: e.method,
    token: e.token,
    expiresAt: e.expiresAt,
    identity: e.identityId,
    identityId: e.identityId,
    caId: e.caId,
    username: e.username,
  }
}
