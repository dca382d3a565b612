/**
 * Router wire shapes: edge routers (Management view) and fabric routers.
 * @see edge-api management.yml definitions edgeRouterCreate/Update/Patch/Detail, commonEdgeRouterProperties,
 *   routerCreate/Update/Patch/Detail
 */
import { Type } from '@sinclair/typebox'
import { Attributes, BaseEntity, TagMap, Tags } from './common.ts'

const Name = Type.String({ minLength: 1, maxLength: 255 })
export const RouterCost = Type.Integer({ minimum: 0, maximum: 65535 })
const NullableCost = Type.Union([RouterCost, Type.Null()])
const NullableBool = Type.Union([Type.Boolean(), Type.Null()])
const NullableString = Type.Union([Type.String(), Type.Null()])
const NullableDate = Type.Union([Type.String({ format: 'date-time' }), Type.Null()])

const routerSettable = {
  /** Read so that a non-empty list is refused, never dropped: routers take no configs until they connect. */
  configs: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 }), Type.Null()])),
  /** Likewise for bootstrap control channel listeners (address → groups). */
  ctrlChanListeners: Type.Optional(
    Type.Union([Type.Record(Type.String(), Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 }), Type.Null()])), Type.Null()]),
  ),
  cost: Type.Optional(NullableCost),
  disabled: Type.Optional(NullableBool),
  noTraversal: Type.Optional(NullableBool),
  tags: Type.Optional(Tags),
}

const edgeSettable = {
  ...routerSettable,
  appData: Type.Optional(Tags),
  isTunnelerEnabled: Type.Optional(Type.Boolean()),
  roleAttributes: Type.Optional(Attributes),
}

export const EdgeRouterCreate = Type.Object({ ...edgeSettable, name: Name })
export const EdgeRouterUpdate = Type.Object({ ...edgeSettable, name: Name })
export const EdgeRouterPatch = Type.Object({ ...edgeSettable, name: Type.Optional(Type.Union([Name, Type.Null()])) })

export const RouterCreate = Type.Object({ ...routerSettable, name: Name })
export const RouterUpdate = Type.Object({ ...routerSettable, name: Name })
export const RouterPatch = Type.Object({ ...routerSettable, name: Type.Optional(Name) })

/**
 * Enrollment and certificate fields both router views carry: the outstanding enrollment (null when none). The spec types
 * `fingerprint` as a plain string (required on routerDetail): "" until the router has a certificate.
 */
const enrollmentFields = {
  enrollmentCreatedAt: NullableDate,
  enrollmentExpiresAt: NullableDate,
  enrollmentJwt: NullableString,
  enrollmentToken: NullableString,
  fingerprint: Type.String(),
  isVerified: Type.Boolean(),
  unverifiedCertPem: NullableString,
  unverifiedFingerprint: NullableString,
}

export const RouterDetail = Type.Object({
  ...BaseEntity,
  ...enrollmentFields,
  name: Type.String(),
  cost: RouterCost,
  disabled: Type.Boolean(),
  noTraversal: Type.Boolean(),
  isOnline: Type.Boolean(),
  ctrlChanListeners: Type.Record(Type.String(), Type.Array(Type.String())),
})

export const EdgeRouterDetail = Type.Object({
  ...BaseEntity,
  ...enrollmentFields,
  name: Type.String(),
  appData: TagMap,
  cost: RouterCost,
  disabled: Type.Boolean(),
  noTraversal: Type.Boolean(),
  hostname: Type.String(),
  isOnline: Type.Boolean(),
  supportedProtocols: Type.Record(Type.String(), Type.String()),
  syncStatus: Type.String(),
  isTunnelerEnabled: Type.Boolean(),
  roleAttributes: Attributes,
  certPem: NullableString,
  ctrlChanListeners: Type.Record(Type.String(), Type.Array(Type.String())),
})
