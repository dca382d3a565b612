/** API-session certificate records → wire details and the filter rows of their list (Client API). */
import type { ApiSessionCertificate } from '../../domain/session/session-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso } from './common-mapper.ts'

/** Where API-session certificates live, relative to the API root (their self links). */
export const API_SESSION_CERTIFICATES_PATH = 'current-api-session/certificates'

/** The fields the filter language knows on API-session certificates (see toApiSessionCertificateRow). */
export const API_SESSION_CERTIFICATE_SYMBOLS = {
  ...BASE_SYMBOLS,
  subject: 'string',
  fingerprint: 'string',
  validFrom: 'datetime',
  validTo: 'datetime',
} as const

export function toApiSessionCertificateDetail(c: ApiSessionCertificate) {
  return {
    id: c.id,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    _links: selfLink(API_SESSION_CERTIFICATES_PATH, c.id),
    tags: {},
    subject: c.subject,
    fingerprint: c.fingerprint,
    validFrom: iso(c.validFrom),
    validTo: iso(c.validTo),
    certificate: c.certPem,
  }
}

export function toApiSessionCertificateRow(c: ApiSessionCertificate): Record<string, unknown> {
  return {
    id: c.id,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    tags: {},
    isSystem: false,
    subject: c.subject,
    fingerprint: c.fingerprint,
    validFrom: c.validFrom,
    validTo: c.validTo,
  }
}
