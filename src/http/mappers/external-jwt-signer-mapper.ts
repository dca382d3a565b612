/**
 * External JWT signers on the wire: the fields the filter language knows on them. The signers themselves (their
 * store, create and update) arrive with the ext-jwt issue; until then the collection is empty.
 * @see edge-api management.yml externalJwtSignerDetail; client.yml clientExternalJwtSignerDetail
 */
import { BASE_SYMBOLS } from './common-mapper.ts'

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
