/**
 * Handlers of config types, configs, services and per-identity service config overrides.
 * Each decides first (all checks, may throw), then applies: state, staged writes, events.
 */
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import { compileConfigSchema } from '../../domain/policy/config-schema.ts'
import { decideName, decideNotSystem, referencedEntity } from '../../domain/policy/graph-decide.ts'
import {
  decideConfigTypeTarget,
  decideOverrideConfig,
  decideSchemaObject,
  decideServiceConfigs,
} from '../../domain/policy/graph-decide-configs.ts'
import { decideEntityRoleAttributes } from '../../domain/policy/policy-roles.ts'
import type { Config, ConfigType, Service, ServiceConfigOverride } from '../../domain/policy/policy-types.ts'
import { overrideKey, type ConfigFields, type ConfigTypeFields, type ServiceFields } from './policy-graph-messages.ts'
import { pick, stripReferences, type BuildCtx, type GraphCtx } from './policy-graph-policies.ts'

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

export function saveConfigType(ctx: GraphCtx, id: string | undefined, input: ConfigTypeFields, replace: boolean): { id: string } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.configTypes.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  if (prev) decideNotSystem(prev, 'configType', 'update')
  const name = input.name !== undefined || !prev ? decideName('configTypes', input.name, (n) => s.configTypes.idByName(n), prev?.id) : prev.name
  let schema = prev?.schema ?? {}
  if (input.schema !== undefined || !prev || replace) {
    schema = decideSchemaObject(input.schema)
    compileConfigSchema(schema)
  }
  const next: ConfigType = {
    id: prev?.id ?? newShortId(),
    name,
    schema,
    target: input.target !== undefined || !prev || replace ? decideConfigTypeTarget(input.target) : prev.target,
    isSystem: false,
    tags: pick(input.tags, replace, {}, prev?.tags ?? {}),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  s.putConfigType(next)
  ctx.tx.put('config-types', next.id, next)
  ctx.tx.emit({ type: 'graph.configType.put', configType: next, ...(prev ? { previous: prev } : {}) })
  if (prev && prev.name !== next.name) {
    // clients see configs keyed by type name: every service and override using a config of this type changed
    const serviceIds = new Set<string>()
    const identityIds = new Set<string>()
    for (const c of s.configsOfType(next.id)) {
      for (const sid of s.serviceIdsUsingConfig(c.id)) serviceIds.add(sid)
      for (const o of s.overridesUsingConfig(c.id)) identityIds.add(o.identityId)
    }
    touched(ctx, serviceIds, identityIds)
  }
  return { id: next.id }
}

export function deleteConfigType(ctx: GraphCtx, id: string): void {
  const prev = ctx.state.configTypes.get(id)
  if (!prev) throw ApiError.notFound()
  decideNotSystem(prev, 'configType', 'delete')
  const configs = ctx.state.configsOfType(id)
  if (configs.length > 0) throw referencedEntity('configTypes', 'configs', 'type', configs.map((c) => c.id))
  ctx.state.removeConfigType(id)
  ctx.tx.remove('config-types', id)
  ctx.tx.emit({ type: 'graph.configType.deleted', configType: prev })
}

export function saveConfig(ctx: GraphCtx, id: string | undefined, input: ConfigFields, replace: boolean): { id: string } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.configs.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  const name = input.name !== undefined || !prev ? decideName('configs', input.name, (n) => s.configs.idByName(n), prev?.id) : prev.name
  // the type of a config is fixed at create
  let type: ConfigType | undefined
  if (prev) type = s.configTypes.get(prev.configTypeId)
  else {
    const ref = input.configTypeId ?? ''
    type = s.configTypes.get(ref) ?? s.configTypes.byName(ref)
    if (!type) throw ApiError.invalidField('configTypeId', `no config type found with id '${ref}'`, ref)
  }
  let data = prev?.data
  if (input.data !== undefined || !prev) {
    if (input.data === undefined || input.data === null) throw ApiError.invalidField('data', 'data is required', null)
    if (typeof input.data !== 'object' || Array.isArray(input.data)) throw ApiError.invalidField('data', 'data must be an object', input.data)
    if (type) s.schemas.checkFor(type.id, type.schema)(input.data)
    data = input.data
  }
  const next: Config = {
    id: prev?.id ?? newShortId(),
    name,
    configTypeId: prev?.configTypeId ?? type!.id,
    data: data!,
    tags: pick(input.tags, replace, {}, prev?.tags ?? {}),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  s.putConfig(next)
  ctx.tx.put('configs', next.id, next)
  ctx.tx.emit({ type: 'graph.config.put', config: next, ...(prev ? { previous: prev } : {}) })
  if (prev && (prev.name !== next.name || !sameJson(prev.data, next.data))) {
    touched(ctx, s.serviceIdsUsingConfig(next.id), s.overridesUsingConfig(next.id).map((o) => o.identityId))
  }
  return { id: next.id }
}

export function deleteConfig(ctx: GraphCtx, id: string): void {
  const s = ctx.state
  const prev = s.configs.get(id)
  if (!prev) throw ApiError.notFound()
  const services = [...s.serviceIdsUsingConfig(id)].sort()
  if (services.length > 0) throw referencedEntity('configs', 'services', 'id', services)
  const identityIds = dropOverrides(ctx, s.overrideKeysOf('config', id))
  s.removeConfig(id)
  ctx.tx.remove('configs', id)
  ctx.tx.emit({ type: 'graph.config.deleted', config: prev })
  touched(ctx, [], identityIds)
}

/** Decides the service a create (no id), put (`replace`) or patch would store, and the one it replaces; writes nothing. */
export function buildService(ctx: BuildCtx, id: string | undefined, input: ServiceFields, replace: boolean): { next: Service; prev: Service | undefined } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.services.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  const name = input.name !== undefined || !prev ? decideName('services', input.name, (n) => s.services.idByName(n), prev?.id) : prev.name
  const roleAttributes =
    input.roleAttributes !== undefined || !prev || replace ? decideEntityRoleAttributes(input.roleAttributes) : prev.roleAttributes
  const configs = input.configs !== undefined || !prev || replace ? decideServiceConfigs(s, input.configs) : prev.configs
  const maxIdle = pick(input.maxIdleTimeMillis, replace, 0, prev?.maxIdleTimeMillis ?? 0)
  if (!Number.isInteger(maxIdle) || maxIdle < 0) {
    throw ApiError.invalidField('maxIdleTimeMillis', 'maxIdleTimeMillis must be a non-negative integer', maxIdle)
  }
  const next: Service = {
    id: prev?.id ?? newShortId(),
    name,
    roleAttributes,
    configs,
    // read-only after create
    encryptionRequired: prev ? prev.encryptionRequired : (input.encryptionRequired ?? true),
    terminatorStrategy: input.terminatorStrategy || (replace || !prev ? 'smartrouting' : prev.terminatorStrategy),
    maxIdleTimeMillis: maxIdle,
    tags: pick(input.tags, replace, {}, prev?.tags ?? {}),
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
  }
  return { next, prev }
}

export function saveService(ctx: GraphCtx, id: string | undefined, input: ServiceFields, replace: boolean): { id: string } {
  const { next, prev } = buildService(ctx, id, input, replace)
  const s = ctx.state
  s.putService(next)
  ctx.tx.put('services', next.id, next)
  ctx.tx.emit({ type: 'graph.service.put', service: next, ...(prev ? { previous: prev } : {}) })
  return { id: next.id }
}

/** Deletes a service with its terminators and overrides, and drops its `@id` from policies. */
export function deleteService(ctx: GraphCtx, id: string): void {
  const s = ctx.state
  const prev = s.services.get(id)
  if (!prev) throw ApiError.notFound()
  for (const t of s.terminatorsOfService(id)) {
    s.removeTerminator(t.id)
    ctx.tx.remove('terminators', t.id)
  }
  const identityIds = dropOverrides(ctx, s.overrideKeysOf('service', id))
  s.removeService(id)
  ctx.tx.remove('services', id)
  ctx.tx.emit({ type: 'graph.service.deleted', service: prev })
  stripReferences(ctx, 'service', id)
  touched(ctx, [], identityIds)
}

/** Adds overrides; one of the same (identity, service, config type) is replaced. */
export function addOverrides(ctx: GraphCtx, identityId: string, links: readonly { serviceId: string; configId: string }[]): void {
  const s = ctx.state
  if (!ctx.lookups.identityExists(identityId)) throw ApiError.notFound()
  const wanted = new Map<string, { o: ServiceConfigOverride; typeId: string }>()
  for (const link of links) {
    if (!s.services.has(link.serviceId)) {
      throw ApiError.invalidField('serviceId', `no service found with id '${link.serviceId}'`, link.serviceId)
    }
    const config = decideOverrideConfig(s, link.configId)
    const o = { identityId, serviceId: link.serviceId, configId: config.id }
    wanted.set(overrideKey(o, config.configTypeId), { o, typeId: config.configTypeId })
  }
  let changed = false
  for (const [key, { o, typeId }] of wanted) {
    if (s.override(identityId, o.serviceId, typeId)?.configId === o.configId) continue
    s.putOverride(o, typeId)
    ctx.tx.put('service-config-overrides', key, o)
    changed = true
  }
  if (changed) touched(ctx, [], [identityId])
}

/** Removes the listed overrides (those naming that config), or all of the identity's when `links` is absent. */
export function removeOverrides(ctx: GraphCtx, identityId: string, links?: readonly { serviceId: string; configId: string }[]): void {
  const s = ctx.state
  let keys: string[]
  if (!links) keys = s.overrideKeysOf('identity', identityId)
  else {
    keys = []
    for (const link of links) {
      const config = s.configs.get(link.configId)
      if (!config) continue
      const key = overrideKey({ identityId, serviceId: link.serviceId }, config.configTypeId)
      if (s.override(identityId, link.serviceId, config.configTypeId)?.configId === config.id) keys.push(key)
    }
  }
  touched(ctx, [], dropOverrides(ctx, keys))
}

/** Removes overrides by key; returns the identities that had them. */
export function dropOverrides(ctx: GraphCtx, keys: readonly string[]): Set<string> {
  const identityIds = new Set<string>()
  for (const key of keys) {
    const o = ctx.state.removeOverrideKey(key)
    if (!o) continue
    ctx.tx.remove('service-config-overrides', key)
    identityIds.add(o.identityId)
  }
  return identityIds
}

/** Emits graph.services.touched / graph.overrides.changed for non-empty id sets (sorted). */
export function touched(ctx: GraphCtx, serviceIds: Iterable<string>, identityIds: Iterable<string>): void {
  const services = [...new Set(serviceIds)].sort()
  const identities = [...new Set(identityIds)].sort()
  if (services.length > 0) ctx.tx.emit({ type: 'graph.services.touched', serviceIds: services })
  if (identities.length > 0) ctx.tx.emit({ type: 'graph.overrides.changed', identityIds: identities })
}
