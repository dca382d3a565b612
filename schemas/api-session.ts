/**
 * API session wire shapes.
 * @see edge-api management.yml apiSessionDetail, currentApiSessionDetail, authQueryDetail
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, EntityRef, Links } from './common.ts'

export const AuthQueryDetail = Type.Object({
  typeId: Type.Optional(Type.String()),
  provider: Type.String(),
  format: Type.Optional(Type.String()),
  httpMethod: Type.Optional(Type.String()),
  httpUrl: Type.Optional(Type.String()),
  minLength: Type.Optional(Type.Integer()),
  maxLength: Type.Optional(Type.Integer()),
  id: Type.Optional(Type.String()),
  clientId: Type.Optional(Type.String()),
  scopes: Type.Optional(Type.Array(Type.String())),
})

export const ApiSessionDetail = Type.Object({
  ...BaseEntity,
  /** The caller's own session only; "" for any other (only the token's hash is stored). */
  token: Type.String(),
  identity: EntityRef,
  identityId: Type.String(),
  authenticatorId: Type.String(),
  configTypes: Type.Array(Type.String()),
  ipAddress: Type.String(),
  authQueries: Type.Array(AuthQueryDetail),
  isMfaRequired: Type.Boolean(),
  isMfaComplete: Type.Boolean(),
  isCertExtendable: Type.Boolean(),
  /** An admin asked the holder of the session's cert authenticator to extend it (and with a new key). */
  isCertExtendRequested: Type.Boolean(),
  isCertKeyRollRequested: Type.Boolean(),
  lastActivityAt: Type.String({ format: 'date-time' }),
  cachedLastActivityAt: Type.String({ format: 'date-time' }),
})

export const CurrentApiSessionDetail = Type.Object({
  ...ApiSessionDetail.properties,
  expiresAt: Type.String({ format: 'date-time' }),
  expirationSeconds: Type.Integer(),
})

/** Body of `POST /current-api-session/certificates`. @see client.yml currentApiSessionCertificateCreate */
export const ApiSessionCertificateCreate = Type.Object({ csr: Type.String() })

/** An API-session certificate. @see client.yml currentApiSessionCertificateDetail */
export const ApiSessionCertificateDetail = Type.Object({
  ...BaseEntity,
  subject: Type.String(),
  fingerprint: Type.String(),
  validFrom: Type.String({ format: 'date-time' }),
  validTo: Type.String({ format: 'date-time' }),
  certificate: Type.String(),
})

/** Answer of a create: the new certificate and the CA certificates. @see client.yml currentApiSessionCertificateCreateResponse */
export const ApiSessionCertificateCreated = Type.Object({
  id: Type.String(),
  _links: Links,
  certificate: Type.String(),
  cas: Type.String(),
})
