/** Config type, config and service-config link records → wire details and filter rows. */
import type { Config, ConfigType } from '../../domain/policy/policy-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso, toEntityRef } from './common-mapper.ts'

/** The fields the filter language knows on config types (toConfigTypeRow) and configs (toConfigRow). */
export const CONFIG_TYPE_SYMBOLS = { ...BASE_SYMBOLS, name: 'string', schema: 'map', target: 'string' } as const
/** `type` is the config type's id; `data.<path>` reads the config's data (a map symbol, as in the real controller). */
export const CONFIG_SYMBOLS = { ...BASE_SYMBOLS, name: 'string', type: 'string', data: 'map' } as const

export function toConfigTypeDetail(t: ConfigType) {
  return {
    id: t.id,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
    _links: { ...selfLink('config-types', t.id), configs: { href: `./config-types/${t.id}/configs` } },
    tags: t.tags ?? {},
    name: t.name,
    schema: t.schema,
    target: t.target,
  }
}

export function toConfigTypeRow(t: ConfigType): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    tags: t.tags ?? {},
    isSystem: t.isSystem,
    schema: t.schema,
    target: t.target,
  }
}

export function toConfigDetail(c: Config, configTypeName: string) {
  return {
    id: c.id,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    _links: { ...selfLink('configs', c.id), 'config-type': { href: `./config-types/${c.configTypeId}` } },
    tags: c.tags ?? {},
    name: c.name,
    configTypeId: c.configTypeId,
    configType: toEntityRef('config-types', c.configTypeId, configTypeName),
    data: c.data,
  }
}

export function toConfigRow(c: Config): Record<string, unknown> {
  return { id: c.id, name: c.name, createdAt: c.createdAt, updatedAt: c.updatedAt, tags: c.tags ?? {}, isSystem: false, type: c.configTypeId, data: c.data }
}

export function toServiceConfigDetail(link: { serviceId: string; configId: string }, serviceName: string, configName: string) {
  return {
    serviceId: link.serviceId,
    service: toEntityRef('services', link.serviceId, serviceName),
    configId: link.configId,
    config: toEntityRef('configs', link.configId, configName),
  }
}
