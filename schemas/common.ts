/**
 * Wire building blocks shared by every resource: tags, links, entity references, meta, pagination, errors.
 * @see edge-api management.yml definitions tags, links, entityRef, meta, pagination, apiError
 */
import { Type, type Static, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox'

/** User-defined name → null | string | boolean map (the seed's allowed value types), as answers show it: never null. */
export const TagMap = Type.Record(Type.String(), Type.Union([Type.Null(), Type.String(), Type.Boolean()]))

/** Tags in a request body: the map may also be null (stored as an empty map). */
export const Tags = Type.Union([TagMap, Type.Null()])

/** A union of string literals, keeping the literal types (Type.Union over a mapped array would widen them). */
export function StringEnum<const T extends readonly string[]>(values: T): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v))) as never
}

/** A set of role attributes; may be null. */
export const Attributes = Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 }), Type.Null()])

export const Link = Type.Object({ href: Type.String(), method: Type.Optional(Type.String()), comment: Type.Optional(Type.String()) })
export const Links = Type.Record(Type.String(), Link)

export const EntityRef = Type.Object({
  _links: Links,
  entity: Type.String(),
  id: Type.String(),
  name: Type.String(),
})
export type EntityRef = Static<typeof EntityRef>

/** Fields every stored entity shows. */
export const BaseEntity = {
  id: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  _links: Links,
  tags: TagMap,
}

export const Pagination = Type.Object({ limit: Type.Number(), offset: Type.Number(), totalCount: Type.Number() })

export const Meta = Type.Object({
  apiEnrollmentVersion: Type.Optional(Type.String()),
  apiVersion: Type.Optional(Type.String()),
  filterableFields: Type.Optional(Type.Array(Type.String())),
  pagination: Type.Optional(Pagination),
})

/** `{data, meta}` around a schema. */
export const Envelope = <T extends TSchema>(data: T) => Type.Object({ data, meta: Meta })

/** `{data:[...], meta:{pagination, filterableFields}}`. */
export const ListEnvelope = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), meta: Meta })

export const CreatedData = Type.Object({ _links: Links, id: Type.String() })
export const Empty = Type.Object({})

export const ApiErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    requestId: Type.String(),
    cause: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
  meta: Type.Object({ apiEnrollmentVersion: Type.String(), apiVersion: Type.String() }),
})

/** Query parameters of every list: raw strings, parsed and clamped by the list engine. */
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.String()),
    offset: Type.Optional(Type.String()),
    filter: Type.Optional(Type.String()),
    sort: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

/** Lists that also take roleFilter (repeatable) and roleSemantic. */
export const RoleListQuery = Type.Object(
  {
    ...ListQuery.properties,
    roleFilter: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    roleSemantic: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

/** Lists of services: also `configTypes` (repeatable, or comma separated), the config types whose data `config` shows. */
export const ServiceListQuery = Type.Object(
  { ...RoleListQuery.properties, configTypes: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])) },
  { additionalProperties: true },
)

/**
 * The Management API's list of services: also `asIdentity`, an identity's id or name whose permissions, configs and
 * posture the rows show (not in the spec; the real controller reads it, the CLI sends it for `--as-identity`).
 */
export const ManagementServiceListQuery = Type.Object(
  { ...ServiceListQuery.properties, asIdentity: Type.Optional(Type.String()) },
  { additionalProperties: true },
)

/** The identity↔service lists: also `policyType` (Dial or Bind), the permission the listed entities must hold. */
export const PolicyTypeListQuery = Type.Object({ ...ListQuery.properties, policyType: Type.Optional(Type.String()) }, { additionalProperties: true })
