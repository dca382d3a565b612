/**
 * Config type and config wire shapes, and the per-identity service config links.
 * @see edge-api management.yml definitions configTypeCreate/Update/Patch/Detail, configCreate/Update/Patch/Detail,
 *   serviceConfigsAssignList, serviceConfigDetail
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, EntityRef, StringEnum, Tags } from './common.ts'

const Name = Type.String({ minLength: 1, maxLength: 255 })
/** A JSON object of any shape (a JSON schema, config data). */
export const AnyObject = Type.Object({}, { additionalProperties: true })

export const ConfigTypeTarget = Type.Union([StringEnum(['service', 'router']), Type.Null()])

export const ConfigTypeCreate = Type.Object({
  name: Name,
  schema: Type.Optional(AnyObject),
  target: Type.Optional(ConfigTypeTarget),
  tags: Type.Optional(Tags),
})

export const ConfigTypeUpdate = Type.Object({ name: Name, schema: Type.Optional(AnyObject), tags: Type.Optional(Tags) })

export const ConfigTypePatch = Type.Object({
  name: Type.Optional(Name),
  schema: Type.Optional(AnyObject),
  tags: Type.Optional(Tags),
})

export const ConfigTypeDetail = Type.Object({ ...BaseEntity, name: Type.String(), schema: AnyObject, target: ConfigTypeTarget })

export const ConfigCreate = Type.Object({
  name: Name,
  configTypeId: Type.String({ minLength: 1 }),
  data: AnyObject,
  tags: Type.Optional(Tags),
})

export const ConfigUpdate = Type.Object({ name: Name, data: AnyObject, tags: Type.Optional(Tags) })

export const ConfigPatch = Type.Object({ name: Type.Optional(Name), data: Type.Optional(AnyObject), tags: Type.Optional(Tags) })

export const ConfigDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  configTypeId: Type.String(),
  configType: EntityRef,
  data: AnyObject,
})

/** One (service, config) pair of an identity's service config overrides. */
export const ServiceConfigAssign = Type.Object({ serviceId: Type.String({ minLength: 1 }), configId: Type.String({ minLength: 1 }) })
export const ServiceConfigsAssignList = Type.Array(ServiceConfigAssign)

export const ServiceConfigDetail = Type.Object({
  serviceId: Type.String(),
  service: EntityRef,
  configId: Type.String(),
  config: EntityRef,
})
