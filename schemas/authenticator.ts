/**
 * Authenticator and authentication wire shapes.
 * @see edge-api management.yml authenticatorCreate/Update/Patch(/WithCurrent), authenticatorDetail, authenticate
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, EntityRef, Tags } from './common.ts'
import { EnvInfo, SdkInfo } from './identity.ts'

export const Username = Type.String({ minLength: 4, maxLength: 100 })
export const Password = Type.String({ minLength: 5, maxLength: 100 })

export const AuthenticatorCreate = Type.Object({
  identityId: Type.String({ minLength: 1 }),
  method: Type.String({ minLength: 1 }),
  username: Type.Optional(Username),
  password: Type.Optional(Password),
  certPem: Type.Optional(Type.String()),
  tags: Type.Optional(Tags),
})

export const AuthenticatorUpdate = Type.Object({ username: Username, password: Password, tags: Type.Optional(Tags) })
export const AuthenticatorPatch = Type.Object({
  username: Type.Optional(Type.Union([Username, Type.Null()])),
  password: Type.Optional(Type.Union([Password, Type.Null()])),
  tags: Type.Optional(Tags),
})
export const AuthenticatorUpdateWithCurrent = Type.Object({
  username: Username,
  password: Password,
  currentPassword: Password,
  tags: Type.Optional(Tags),
})
export const AuthenticatorPatchWithCurrent = Type.Object({
  username: Type.Optional(Type.Union([Username, Type.Null()])),
  password: Type.Optional(Type.Union([Password, Type.Null()])),
  currentPassword: Password,
  tags: Type.Optional(Tags),
})

export const AuthenticatorDetail = Type.Object({
  ...BaseEntity,
  method: Type.String(),
  identityId: Type.String(),
  identity: EntityRef,
  username: Type.Optional(Type.String()),
  certPem: Type.Optional(Type.String()),
  fingerprint: Type.Optional(Type.String()),
  isIssuedByNetwork: Type.Boolean(),
  /** cert only: an admin asked the holder to extend early (`request-extend`), with a new key, and when. */
  isExtendRequested: Type.Optional(Type.Boolean()),
  isKeyRollRequested: Type.Optional(Type.Boolean()),
  extendRequestedAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  /** cert only: whether the last verified extension changed the key. */
  lastExtendRolledKeys: Type.Optional(Type.Boolean()),
})

/** Body of `POST /authenticators/{id}/request-extend`. @see management.yml requestExtendAuthenticator */
export const RequestExtendAuthenticator = Type.Object({ rollKeys: Type.Optional(Type.Boolean()) })

export const AuthenticateBody = Type.Object({
  username: Type.Optional(Username),
  password: Type.Optional(Password),
  configTypes: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 })),
  envInfo: Type.Optional(EnvInfo),
  sdkInfo: Type.Optional(SdkInfo),
})

export const AuthenticateQuery = Type.Object(
  { method: Type.Union([Type.Literal('password'), Type.Literal('cert'), Type.Literal('ext-jwt')]) },
  { additionalProperties: true },
)

/** Body of `POST /current-identity/authenticators/{id}/extend`. @see client.yml identityExtendEnrollmentRequest */
export const IdentityExtendRequest = Type.Object({ clientCertCsr: Type.String() })

/** Body of `POST /current-identity/authenticators/{id}/extend-verify`. @see client.yml identityExtendValidateEnrollmentRequest */
export const IdentityExtendVerifyRequest = Type.Object({ clientCert: Type.String() })

/** Answer of an extension: the CA certificates and the new client certificate (PEM). @see client.yml identityExtendCerts */
export const IdentityExtendCerts = Type.Object({ ca: Type.String(), clientCert: Type.String() })
