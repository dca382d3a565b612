/**
 * Service wire shapes (Management API): create, update (put), patch and detail.
 * @see edge-api management.yml definitions serviceCreate, serviceUpdate, servicePatch, serviceDetail
 */
import { Type } from '@sinclair/typebox'
import { AnyObject } from './config.ts'
import { Attributes, BaseEntity, Tags } from './common.ts'

const Name = Type.String({ minLength: 1, maxLength: 255 })
const ConfigIds = Type.Array(Type.String(), { maxItems: 1000 })
const MaxIdle = Type.Integer({ minimum: 0 })

const settable = {
  configs: Type.Optional(ConfigIds),
  maxIdleTimeMillis: Type.Optional(MaxIdle),
  roleAttributes: Type.Optional(Attributes),
  tags: Type.Optional(Tags),
  terminatorStrategy: Type.Optional(Type.String({ maxLength: 255 })),
}

export const ServiceCreate = Type.Object({ ...settable, name: Name, encryptionRequired: Type.Boolean() })

/** encryptionRequired is read-only after create: accepted and ignored on put and patch. */
export const ServiceUpdate = Type.Object({ ...settable, name: Name, encryptionRequired: Type.Optional(Type.Boolean()) })

export const ServicePatch = Type.Object({ ...settable, name: Type.Optional(Name), encryptionRequired: Type.Optional(Type.Boolean()) })

export const DialBind = Type.Union([Type.Literal('Dial'), Type.Literal('Bind')])

export const ServiceDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  maxIdleTimeMillis: Type.Integer(),
  terminatorStrategy: Type.String(),
  roleAttributes: Attributes,
  /** The calling identity's permissions on the service; `["Invalid"]` on the Management API when it has none. */
  permissions: Type.Array(Type.String()),
  configs: Type.Array(Type.String()),
  /** Config data keyed by config type name; `{}` unless config types were asked for. */
  config: Type.Record(Type.String(), AnyObject),
  encryptionRequired: Type.Boolean(),
  postureQueries: Type.Array(AnyObject),
})
