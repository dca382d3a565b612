/**
 * Revocation wire shapes: the create body and the detail of the Management API.
 * @see edge-api management.yml definitions revocationCreate, revocationDetail, revocationTypeEnum
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, StringEnum, Tags } from './common.ts'

/** What a revocation's id names: a token's jti, an identity, or an API session (a token's z_asid). */
export const RevocationType = StringEnum(['JTI', 'IDENTITY', 'API_SESSION'])

/** POST /revocations: the id is a UUID (JTI, API_SESSION) or an identity id (IDENTITY). */
export const RevocationCreate = Type.Object({
  id: Type.String({ maxLength: 255 }),
  type: RevocationType,
  tags: Type.Optional(Tags),
})

export const RevocationDetail = Type.Object({
  ...BaseEntity,
  type: RevocationType,
  expiresAt: Type.String({ format: 'date-time' }),
})
