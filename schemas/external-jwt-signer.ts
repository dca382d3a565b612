/**
 * External JWT signer wire shapes: create, update (put), patch and detail on the Management API, and the Client API's
 * list item that an SDK reads before it logs in.
 * @see edge-api management.yml externalJwtSignerCreate, externalJwtSignerUpdate, externalJwtSignerPatch,
 *   externalJwtSignerDetail; client.yml clientExternalJwtSignerDetail
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { BaseEntity, StringEnum, Tags } from './common.ts'

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const opt = Type.Optional

const Name = Type.String({ minLength: 1, maxLength: 255 })
const Text = Type.String({ maxLength: 1024 })
/** One PEM certificate (a few KiB; 64 KiB leaves room for large extensions). */
const CertPem = Type.String({ maxLength: 65536 })
const Url = Type.String({ maxLength: 2048 })
const Scopes = Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 })
export const TargetToken = StringEnum(['ACCESS', 'ID'])

/** The members every write may carry, each optional and (where the spec allows) null. */
const writable = {
  certPem: opt(nullable(CertPem)),
  jwksEndpoint: opt(nullable(Url)),
  kid: opt(nullable(Text)),
  claimsProperty: opt(nullable(Text)),
  useExternalId: opt(nullable(Type.Boolean())),
  externalAuthUrl: opt(nullable(Url)),
  clientId: opt(nullable(Text)),
  scopes: opt(nullable(Scopes)),
  targetToken: opt(nullable(TargetToken)),
  enrollToCertEnabled: opt(nullable(Type.Boolean())),
  enrollToTokenEnabled: opt(nullable(Type.Boolean())),
  enrollNameClaimsSelector: opt(nullable(Text)),
  enrollAttributeClaimsSelector: opt(nullable(Text)),
  enrollAuthPolicyId: opt(nullable(Text)),
  tags: opt(Tags),
}

/** Create and PUT: name, enabled, issuer and audience required (audience may not be null: see the README). */
export const ExternalJwtSignerCreate = Type.Object({
  ...writable,
  name: Name,
  enabled: Type.Boolean(),
  issuer: Text,
  audience: nullable(Text),
})
export const ExternalJwtSignerUpdate = ExternalJwtSignerCreate

/** PATCH: any subset; null clears a nullable field and leaves the others as they are. */
export const ExternalJwtSignerPatch = Type.Object({
  ...writable,
  name: opt(nullable(Name)),
  enabled: opt(nullable(Type.Boolean())),
  issuer: opt(nullable(Text)),
  audience: opt(nullable(Text)),
})

export const ExternalJwtSignerDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  certPem: nullable(Type.String()),
  jwksEndpoint: nullable(Type.String()),
  enabled: Type.Boolean(),
  fingerprint: Type.String(),
  commonName: Type.String(),
  notBefore: Type.String({ format: 'date-time' }),
  notAfter: Type.String({ format: 'date-time' }),
  externalAuthUrl: Type.String(),
  claimsProperty: Type.String(),
  useExternalId: Type.Boolean(),
  kid: Type.String(),
  issuer: Type.String(),
  audience: Type.String(),
  clientId: Type.String(),
  scopes: Type.Array(Type.String()),
  targetToken: TargetToken,
  enrollToCertEnabled: Type.Boolean(),
  enrollToTokenEnabled: Type.Boolean(),
  enrollNameClaimsSelector: Type.String(),
  enrollAttributeClaimsSelector: Type.String(),
  enrollAuthPolicyId: Type.String(),
})

/** What the Client API lists, without a session. */
export const ClientExternalJwtSignerDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  externalAuthUrl: Type.String(),
  audience: Type.String(),
  clientId: nullable(Type.String()),
  scopes: Type.Array(Type.String()),
  targetToken: TargetToken,
  enrollToCertEnabled: Type.Boolean(),
  enrollToTokenEnabled: Type.Boolean(),
})
