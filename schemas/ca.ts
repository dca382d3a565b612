/**
 * Third-party CA wire shapes: create, update (put), patch and detail, and the externalIdClaim inside them.
 * @see edge-api management.yml definitions caCreate, caUpdate, caPatch, caDetail, externalIdClaim, externalIdClaimPatch
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { Attributes, BaseEntity, StringEnum, Tags } from './common.ts'

const Name = Type.String({ minLength: 1, maxLength: 255 })
const NullableString = Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const opt = Type.Optional

export const ExternalIdLocation = StringEnum(['COMMON_NAME', 'SAN_URI', 'SAN_EMAIL'])
export const ExternalIdMatcher = StringEnum(['ALL', 'PREFIX', 'SUFFIX', 'SCHEME'])
export const ExternalIdParser = StringEnum(['NONE', 'SPLIT'])

/** A claim in a request: every member may be absent or null (the CA's rules say which combinations work). */
export const ExternalIdClaimInput = Type.Object({
  location: opt(nullable(ExternalIdLocation)),
  matcher: opt(nullable(ExternalIdMatcher)),
  matcherCriteria: opt(NullableString),
  parser: opt(nullable(ExternalIdParser)),
  parserCriteria: opt(NullableString),
  index: opt(nullable(Type.Integer())),
})

/** A claim as answers show it: every member present. */
export const ExternalIdClaim = Type.Object({
  location: ExternalIdLocation,
  matcher: ExternalIdMatcher,
  matcherCriteria: Type.String(),
  parser: ExternalIdParser,
  parserCriteria: Type.String(),
  index: Type.Integer(),
})

/** The PEM of one CA certificate (a certificate is a few KiB; 64 KiB leaves room for long chains of extensions). */
const CertPem = Type.String({ minLength: 1, maxLength: 65536 })

const flags = {
  isAuthEnabled: Type.Boolean(),
  isAutoCaEnrollmentEnabled: Type.Boolean(),
  isOttCaEnrollmentEnabled: Type.Boolean(),
}

export const CaCreate = Type.Object({
  name: Name,
  certPem: CertPem,
  ...flags,
  identityRoles: Attributes,
  identityNameFormat: opt(Type.String({ maxLength: 1024 })),
  externalIdClaim: opt(nullable(ExternalIdClaimInput)),
  tags: opt(Tags),
})

/** PUT: every field but the certificate, which never changes. */
export const CaUpdate = Type.Object({
  name: Name,
  ...flags,
  identityRoles: Attributes,
  identityNameFormat: Type.String({ maxLength: 1024 }),
  externalIdClaim: opt(nullable(ExternalIdClaimInput)),
  tags: opt(Tags),
})

/** PATCH: any subset; a null scalar leaves the field as it is. */
export const CaPatch = Type.Object({
  name: opt(nullable(Name)),
  isAuthEnabled: opt(nullable(Type.Boolean())),
  isAutoCaEnrollmentEnabled: opt(nullable(Type.Boolean())),
  isOttCaEnrollmentEnabled: opt(nullable(Type.Boolean())),
  identityRoles: opt(Attributes),
  identityNameFormat: opt(nullable(Type.String({ maxLength: 1024 }))),
  externalIdClaim: opt(nullable(ExternalIdClaimInput)),
  tags: opt(Tags),
})

export const CaDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  certPem: Type.String(),
  fingerprint: Type.String(),
  isVerified: Type.Boolean(),
  verificationToken: Type.String({ format: 'uuid' }),
  ...flags,
  identityRoles: Type.Array(Type.String()),
  identityNameFormat: Type.String(),
  externalIdClaim: opt(ExternalIdClaim),
})

/** `POST /cas/{id}/verify`: a PEM certificate as text/plain. */
export const CaVerifyBody = Type.String({ description: 'a PEM certificate signed by the CA, whose common name is the verificationToken' })
