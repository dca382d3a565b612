/**
 * External JWT signer records → wire details (Management API), the Client API's list item, and filter rows. The only
 * place that renames signer fields. Fields the spec requires as strings show "" when the signer has none (a JWKS
 * signer's certificate facts, an unset kid, clientId or externalAuthUrl); a JWKS signer's notBefore/notAfter are
 * the real controller's zero time.
 * @see edge-api management.yml externalJwtSignerDetail; client.yml clientExternalJwtSignerDetail
 */
import type { ExternalJwtSigner } from '../../domain/ca/ca-jwt-signer-types.ts'
import { BASE_SYMBOLS, baseEntityRow, baseEntityView, iso } from './common-mapper.ts'

/** The filterable fields of an external JWT signer (the real controller's ext-jwt signer store). */
export const EXTERNAL_JWT_SIGNER_SYMBOLS = {
  ...BASE_SYMBOLS,
  name: 'string',
  issuer: 'string',
  audience: 'string',
  enabled: 'boolean',
  kid: 'string',
  claimsProperty: 'string',
  useExternalId: 'boolean',
  externalAuthUrl: 'string',
  clientId: 'string',
} as const

/** Go's zero time, what the real controller shows for a signer without a certificate. */
const ZERO_TIME = '0001-01-01T00:00:00.000Z'

const base = (s: ExternalJwtSigner) => baseEntityView('external-jwt-signers', s)

export function toExternalJwtSignerDetail(s: ExternalJwtSigner) {
  return {
    ...base(s),
    name: s.name,
    certPem: s.certPem,
    jwksEndpoint: s.jwksEndpoint,
    enabled: s.enabled,
    fingerprint: s.fingerprint,
    commonName: s.commonName,
    notBefore: s.notBefore === null ? ZERO_TIME : iso(s.notBefore),
    notAfter: s.notAfter === null ? ZERO_TIME : iso(s.notAfter),
    externalAuthUrl: s.externalAuthUrl ?? '',
    claimsProperty: s.claimsProperty,
    useExternalId: s.useExternalId,
    kid: s.kid ?? '',
    issuer: s.issuer,
    audience: s.audience,
    clientId: s.clientId ?? '',
    scopes: s.scopes,
    targetToken: s.targetToken,
    enrollToCertEnabled: s.enrollToCertEnabled,
    enrollToTokenEnabled: s.enrollToTokenEnabled,
    enrollNameClaimsSelector: s.enrollNameClaimsSelector,
    enrollAttributeClaimsSelector: s.enrollAttributeClaimsSelector,
    enrollAuthPolicyId: s.enrollAuthPolicyId,
  }
}

/** What an SDK needs to offer a login with this signer: where to get a token, for which client and scopes. */
export function toClientExternalJwtSignerDetail(s: ExternalJwtSigner) {
  return {
    ...base(s),
    name: s.name,
    externalAuthUrl: s.externalAuthUrl ?? '',
    audience: s.audience,
    clientId: s.clientId,
    scopes: s.scopes,
    targetToken: s.targetToken,
    enrollToCertEnabled: s.enrollToCertEnabled,
    enrollToTokenEnabled: s.enrollToTokenEnabled,
  }
}

/** The row the filter language sees for a signer (see EXTERNAL_JWT_SIGNER_SYMBOLS). */
export function toExternalJwtSignerRow(s: ExternalJwtSigner): Record<string, unknown> {
  return {
    ...baseEntityRow(s),
    name: s.name,
    issuer: s.issuer,
    audience: s.audience,
    enabled: s.enabled,
    kid: s.kid,
    claimsProperty: s.claimsProperty,
    useExternalId: s.useExternalId,
    externalAuthUrl: s.externalAuthUrl,
    clientId: s.clientId,
  }
}
