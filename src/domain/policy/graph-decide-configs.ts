/**
 * Pure checks for config types, configs, service config lists and per-identity overrides, and the built-in config
 * types the controller creates on first start.
 * - a config type's target is 'service' (default) or 'router'
 * - a service lists existing configs (by id, or by name as the real CLI sends them), at most one per config type
 * - an override names an existing service and config
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Config, ConfigType } from './policy-types.ts'

/** A built-in config type: id and name as the real controller stores them (`controller/db/migration_initialize.go`). */
export interface BuiltinConfigType {
  id: string
  name: string
  target: 'service' | 'router'
}

/**
 * The built-in config types. Their schemas are permissive objects here (the real ones are long); configs of these
 * types are therefore only checked to be objects.
 */
export const BUILTIN_CONFIG_TYPES: readonly BuiltinConfigType[] = [
  { id: 'f2dd2df0-9c04-4b84-a91e-71437ac229f1', name: 'ziti-tunneler-client.v1', target: 'service' },
  { id: 'cea49285-6c07-42cf-9f52-09a9b115c783', name: 'ziti-tunneler-server.v1', target: 'service' },
  { id: 'g7cIWbcGg', name: 'intercept.v1', target: 'service' },
  { id: 'NH5p4FpGR', name: 'host.v1', target: 'service' },
  { id: 'host.v2', name: 'host.v2', target: 'service' },
  { id: 'interfaces.v1', name: 'interfaces.v1', target: 'service' },
  { id: 'proxy.v1', name: 'proxy.v1', target: 'service' },
  { id: 'router.link.v1', name: 'router.link.v1', target: 'router' },
]

export const BUILTIN_CONFIG_SCHEMA: Record<string, unknown> = { type: 'object' }

/** 'service' (the default when absent or null) or 'router'. */
export function decideConfigTypeTarget(target: string | null | undefined): string {
  if (target === undefined || target === null) return 'service'
  if (target !== 'service' && target !== 'router') {
    throw ApiError.invalidField('target', `invalid target '${target}': must be service or router`, target)
  }
  return target
}

/** A config type schema must be a JSON object; `{}` accepts anything. Absent or null gives `{}`. */
export function decideSchemaObject(schema: unknown): Record<string, unknown> {
  if (schema === undefined || schema === null) return {}
  if (typeof schema !== 'object' || Array.isArray(schema)) throw ApiError.invalidField('schema', 'schema must be an object', schema)
  return schema as Record<string, unknown>
}

/** What the config checks read. */
export interface ConfigLookup {
  config(id: string): Config | undefined
  configIdByName(name: string): string | undefined
  configType(id: string): ConfigType | undefined
}

/**
 * The configs of a service: every entry an existing config id (or name, resolved to its id), duplicates dropped,
 * at most one config per config type. Returns the ids to store.
 */
export function decideServiceConfigs(lookup: ConfigLookup, configs: readonly string[] | null | undefined): string[] {
  if (configs === null || configs === undefined) return []
  const out: string[] = []
  const byType = new Map<string, Config>()
  for (const ref of configs) {
    const config = lookup.config(ref) ?? lookup.config(lookup.configIdByName(ref) ?? '')
    if (!config) throw ApiError.invalidField('configs', `${ref} is not a valid config id or name`, [...configs])
    if (out.includes(config.id)) continue
    const other = byType.get(config.configTypeId)
    if (other) {
      const typeName = lookup.configType(config.configTypeId)?.name ?? config.configTypeId
      throw ApiError.invalidField(
        'configs',
        `duplicate configs named ${other.name} and ${config.name} found for config type ${typeName}. Only one config of a given type is allowed per service`,
        [...configs],
      )
    }
    byType.set(config.configTypeId, config)
    out.push(config.id)
  }
  return out
}

/** The config of an override: it must exist. */
export function decideOverrideConfig(lookup: ConfigLookup, configId: string): Config {
  const config = lookup.config(configId)
  if (!config) throw ApiError.invalidField('configId', `no config found with id '${configId}'`, configId)
  return config
}
