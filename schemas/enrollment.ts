/**
 * Enrollment resource wire shapes (Management API).
 * @see edge-api management.yml enrollmentCreate, enrollmentRefresh, enrollmentDetail
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, EntityRef, StringEnum } from './common.ts'

/** `expiresAt` is an RFC 3339 date-time; the flow parses it and refuses a past one. */
export const EnrollmentCreate = Type.Object({
  identityId: Type.String({ minLength: 1 }),
  method: StringEnum(['ott', 'ottca', 'updb'] as const),
  expiresAt: Type.String({ minLength: 1 }),
  caId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  username: Type.Optional(Type.Union([Type.String(), Type.Null()])),
})

export const EnrollmentRefresh = Type.Object({ expiresAt: Type.String({ minLength: 1 }) })

export const EnrollmentDetail = Type.Object({
  ...BaseEntity,
  method: Type.String(),
  token: Type.String(),
  jwt: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  identityId: Type.String(),
  identity: EntityRef,
  caId: Type.Union([Type.String(), Type.Null()]),
  username: Type.Optional(Type.String()),
})
