/**
 * Identity wire shapes: create, update (put), patch and detail; identity types.
 * @see edge-api management.yml definitions identityCreate, identityUpdate, identityPatch, identityDetail
 */
import { Type } from '@sinclair/typebox'
import { Attributes, BaseEntity, EntityRef, StringEnum, TagMap, Tags } from './common.ts'

export const IdentityTypeName = StringEnum(['User', 'Device', 'Service', 'Router', 'Default'])
export const TerminatorCost = Type.Integer({ minimum: 0, maximum: 65535 })
export const TerminatorPrecedence = StringEnum(['default', 'required', 'failed'])
export const TerminatorCostMap = Type.Record(Type.String(), TerminatorCost)
export const TerminatorPrecedenceMap = Type.Record(Type.String(), TerminatorPrecedence)
const Name = Type.String({ minLength: 1, maxLength: 255 })
const NullableString = Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])

export const EnvInfo = Type.Object({
  arch: Type.Optional(Type.String({ maxLength: 255 })),
  domain: Type.Optional(Type.String({ maxLength: 253 })),
  hostname: Type.Optional(Type.String({ maxLength: 253 })),
  os: Type.Optional(Type.String({ maxLength: 255 })),
  osRelease: Type.Optional(Type.String({ maxLength: 255 })),
  osVersion: Type.Optional(Type.String({ maxLength: 255 })),
})

export const SdkInfo = Type.Object({
  appId: Type.Optional(Type.String({ maxLength: 255 })),
  appVersion: Type.Optional(Type.String({ maxLength: 255 })),
  branch: Type.Optional(Type.String({ maxLength: 255 })),
  revision: Type.Optional(Type.String({ maxLength: 255 })),
  type: Type.Optional(Type.String({ maxLength: 255 })),
  version: Type.Optional(Type.String({ maxLength: 255 })),
})

const settable = {
  appData: Type.Optional(Tags),
  authPolicyId: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
  defaultHostingCost: Type.Optional(TerminatorCost),
  defaultHostingPrecedence: Type.Optional(TerminatorPrecedence),
  externalId: Type.Optional(NullableString),
  /** Entity-level permissions: read so that a non-empty list is refused (edgeplane has none), never stored. */
  permissions: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 }), Type.Null()])),
  roleAttributes: Type.Optional(Attributes),
  serviceHostingCosts: Type.Optional(TerminatorCostMap),
  serviceHostingPrecedences: Type.Optional(TerminatorPrecedenceMap),
  tags: Type.Optional(Tags),
}

export const IdentityCreate = Type.Object({
  ...settable,
  name: Name,
  type: IdentityTypeName,
  isAdmin: Type.Boolean(),
  enrollment: Type.Optional(
    Type.Object({ ott: Type.Optional(Type.Boolean()), ottca: Type.Optional(Type.String()), updb: Type.Optional(Type.String()) }),
  ),
})

export const IdentityUpdate = Type.Object({ ...settable, name: Name, type: IdentityTypeName, isAdmin: Type.Boolean() })

export const IdentityPatch = Type.Object({
  ...settable,
  name: Type.Optional(Type.Union([Name, Type.Null()])),
  type: Type.Optional(IdentityTypeName),
  isAdmin: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
})

export const IdentityDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  type: EntityRef,
  typeId: Type.String(),
  isAdmin: Type.Boolean(),
  isDefaultAdmin: Type.Boolean(),
  isMfaEnabled: Type.Boolean(),
  authenticators: Type.Object({
    cert: Type.Optional(Type.Object({ fingerprint: Type.String(), id: Type.String() })),
    updb: Type.Optional(Type.Object({ id: Type.String(), username: Type.String() })),
  }),
  enrollment: Type.Object({}, { additionalProperties: true }),
  envInfo: EnvInfo,
  sdkInfo: SdkInfo,
  roleAttributes: Attributes,
  hasApiSession: Type.Boolean(),
  hasEdgeRouterConnection: Type.Boolean(),
  edgeRouterConnectionStatus: Type.Union([Type.Literal('online'), Type.Literal('offline'), Type.Literal('unknown')]),
  defaultHostingCost: TerminatorCost,
  defaultHostingPrecedence: TerminatorPrecedence,
  serviceHostingCosts: TerminatorCostMap,
  serviceHostingPrecedences: TerminatorPrecedenceMap,
  authPolicyId: Type.String(),
  authPolicy: EntityRef,
  externalId: Type.Union([Type.String(), Type.Null()]),
  appData: TagMap,
  disabled: Type.Boolean(),
  disabledAt: Type.Union([Type.String(), Type.Null()]),
  disabledUntil: Type.Union([Type.String(), Type.Null()]),
  permissions: Type.Array(Type.String()),
})

export const IdentityTypeDetail = Type.Object({ ...BaseEntity, name: Type.String() })

/** A data-flow trace request; every member optional as in the spec (`enabled` absent means off). */
export const TraceSpec = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  duration: Type.Optional(Type.String({ maxLength: 64 })),
  traceId: Type.Optional(Type.String({ maxLength: 255 })),
  channels: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })),
})

export const TraceDetail = Type.Object({
  enabled: Type.Boolean(),
  traceId: Type.Optional(Type.String()),
  until: Type.Optional(Type.String()),
})
