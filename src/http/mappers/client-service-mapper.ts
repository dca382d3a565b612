/**
 * The Client API's service view: what an SDK reads for each service it may use — permissions, the `config` map of
 * the config types it asked for (per-identity overrides win), and the posture queries per granting policy.
 * @see edge-api client.yml serviceDetail, postureQueries; controller-behaviour.md §8
 */
import type { Permission } from '../../domain/policy/policy-reads.ts'
import type { Config, ConfigType, Router, Service } from '../../domain/policy/policy-types.ts'
import type { RouterPresence } from '../../domain/router/router-presence.ts'
import { selfLink } from '../http-envelope.ts'
import { iso } from './common-mapper.ts'

/** What the config selection needs from the policy graph. */
export interface ConfigLookups {
  config(id: string): Config | undefined
  configType(id: string): ConfigType | undefined
  configTypeIdByName(name: string): string | undefined
  overrideConfig(identityId: string, serviceId: string, configTypeId: string): Config | undefined
}

/** Config types a client asked for: `'all'`, or a set of type ids (names and ids accepted; unknown ones ignored). */
export type ConfigTypeSelection = 'all' | ReadonlySet<string>

export function selectConfigTypes(asked: readonly string[], lookups: Pick<ConfigLookups, 'configType' | 'configTypeIdByName'>): ConfigTypeSelection {
  const ids = new Set<string>()
  for (const raw of asked) {
    for (const v of raw.split(',').map((x) => x.trim()).filter(Boolean)) {
      if (v === 'all') return 'all'
      if (lookups.configType(v)) ids.add(v)
      else {
        const id = lookups.configTypeIdByName(v)
        if (id) ids.add(id)
      }
    }
  }
  return ids
}

/** The `config` map: config type name → data, for the selected types; an identity's override of a type wins. */
export function configMap(service: Service, identityId: string, selection: ConfigTypeSelection, lookups: ConfigLookups): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (selection !== 'all' && selection.size === 0) return out
  const seen = new Set<string>()
  for (const configId of service.configs) {
    const c = lookups.config(configId)
    if (!c) continue
    seen.add(c.configTypeId)
    if (selection !== 'all' && !selection.has(c.configTypeId)) continue
    const type = lookups.configType(c.configTypeId)
    if (!type) continue
    out[type.name] = (lookups.overrideConfig(identityId, service.id, c.configTypeId) ?? c).data
  }
  return out
}

export interface PostureQueryEntry {
  policyId: string
  policyType: Permission
  isPassing: boolean
  postureQueries: unknown[]
}

/**
 * The service's postureQueries while no posture check exists anywhere: one placeholder per permission, as the real
 * controller (with checks, flows/posture evaluates them and posture-mapper.ts renders the entries).
 */
export function postureQueries(permissions: readonly Permission[]): PostureQueryEntry[] {
  return permissions.map((type) => ({ policyId: `dummy ${type.toLowerCase()} policy: no posture checks defined`, policyType: type, isPassing: true, postureQueries: [] }))
}

export function toClientServiceDetail(
  s: Service,
  view: { permissions: readonly Permission[]; config: Record<string, unknown>; postureQueries: PostureQueryEntry[] },
) {
  return {
    id: s.id,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    _links: {
      ...selfLink('services', s.id),
      'edge-routers': { href: `./services/${s.id}/edge-routers` },
      terminators: { href: `./services/${s.id}/terminators` },
    },
    tags: s.tags ?? {},
    name: s.name,
    terminatorStrategy: s.terminatorStrategy,
    roleAttributes: s.roleAttributes,
    configs: s.configs,
    config: view.config,
    encryptionRequired: s.encryptionRequired,
    maxIdleTimeMillis: s.maxIdleTimeMillis,
    permissions: view.permissions,
    postureQueries: view.postureQueries,
  }
}

/**
 * An edge router as a client sees it (routers it may use), its connection state from its presence on this node.
 * @see client.yml commonEdgeRouterProperties
 */
export function toClientEdgeRouterProps(r: Router, p: RouterPresence) {
  return {
    name: r.name,
    hostname: p.hostname,
    isOnline: p.isOnline,
    cost: r.cost,
    disabled: r.disabled,
    noTraversal: r.noTraversal,
    appData: r.appData ?? {},
    supportedProtocols: p.supportedProtocols,
    syncStatus: p.syncStatus,
    ...(p.capabilities.length > 0 ? { capabilities: p.capabilities } : {}),
    ...(p.versionInfo.version !== '' ? { version: p.versionInfo.version } : {}),
  }
}

/**
 * The current identity's edge router detail: base entity fields plus the client properties; its hostname is always
 * empty, as the real controller renders it here (current_identity_api_model.go).
 */
export function toClientEdgeRouterDetail(r: Router, p: RouterPresence) {
  return { id: r.id, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt), _links: selfLink('edge-routers', r.id), tags: r.tags ?? {}, ...toClientEdgeRouterProps(r, p), hostname: '' }
}
