/** Third-party CA records → wire details and filter rows. The only place that renames CA fields. */
import type { ThirdPartyCa } from '../../domain/ca/ca-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso } from './common-mapper.ts'

/** The fields the filter language knows on CAs, as the real controller's CA store declares them. */
export const CA_SYMBOLS = {
  ...BASE_SYMBOLS,
  name: 'string',
  fingerprint: 'string',
  isVerified: 'boolean',
  verificationToken: 'string',
  isAutoCaEnrollmentEnabled: 'boolean',
  isOttCaEnrollmentEnabled: 'boolean',
  isAuthEnabled: 'boolean',
  identityRoles: 'set',
} as const

/** The detail view; `_links` offer `verify` while the CA is unverified and `jwt` when it enrolls automatically. */
export function toCaDetail(ca: ThirdPartyCa) {
  return {
    id: ca.id,
    createdAt: iso(ca.createdAt),
    updatedAt: iso(ca.updatedAt),
    _links: {
      ...selfLink('cas', ca.id),
      ...(ca.isVerified ? {} : { verify: { href: `./cas/${ca.id}/verify` } }),
      ...(ca.isAutoCaEnrollmentEnabled ? { jwt: { href: `./cas/${ca.id}/jwt` } } : {}),
    },
    tags: ca.tags,
    name: ca.name,
    certPem: ca.certPem,
    fingerprint: ca.fingerprint,
    isVerified: ca.isVerified,
    verificationToken: ca.verificationToken,
    isAutoCaEnrollmentEnabled: ca.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: ca.isOttCaEnrollmentEnabled,
    isAuthEnabled: ca.isAuthEnabled,
    identityRoles: ca.identityRoles,
    identityNameFormat: ca.identityNameFormat,
    ...(ca.externalIdClaim ? { externalIdClaim: ca.externalIdClaim } : {}),
  }
}

/** The row the filter language sees for a CA (see CA_SYMBOLS). */
export function toCaRow(ca: ThirdPartyCa): Record<string, unknown> {
  return {
    id: ca.id,
    createdAt: ca.createdAt,
    updatedAt: ca.updatedAt,
    tags: ca.tags,
    isSystem: false,
    name: ca.name,
    fingerprint: ca.fingerprint,
    isVerified: ca.isVerified,
    verificationToken: ca.verificationToken,
    isAutoCaEnrollmentEnabled: ca.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: ca.isOttCaEnrollmentEnabled,
    isAuthEnabled: ca.isAuthEnabled,
    identityRoles: ca.identityRoles,
  }
}
