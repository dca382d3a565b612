/** Service records → Management wire details and filter rows. */
import type { Service } from '../../domain/policy/policy-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso } from './common-mapper.ts'

/** The fields the filter language knows on services (see toServiceRow). */
export const SERVICE_SYMBOLS = { ...BASE_SYMBOLS, name: 'string', terminatorStrategy: 'string', roleAttributes: 'set', isFabricOnly: 'boolean', configs: 'set' } as const

export interface ServiceViewContext {
  /** The caller's permissions; `["Invalid"]` when it has none (the Management API's placeholder). */
  permissions: readonly string[]
  /** Config data keyed by config type name (only the requested types). */
  config?: Record<string, Record<string, unknown>>
  /** The caller's posture query entries for the service (client-service-mapper postureQueries, posture-mapper). */
  postureQueries?: unknown[]
}

const SUB_LISTS = ['configs', 'service-edge-router-policies', 'service-policies', 'terminators', 'identities', 'edge-routers'] as const

export function toServiceDetail(s: Service, ctx: ServiceViewContext) {
  const links: Record<string, { href: string }> = { ...selfLink('services', s.id) }
  for (const l of SUB_LISTS) links[l] = { href: `./services/${s.id}/${l}` }
  return {
    id: s.id,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    _links: links,
    tags: s.tags ?? {},
    name: s.name,
    maxIdleTimeMillis: s.maxIdleTimeMillis,
    terminatorStrategy: s.terminatorStrategy,
    roleAttributes: s.roleAttributes,
    permissions: ctx.permissions.length > 0 ? [...ctx.permissions] : ['Invalid'],
    configs: s.configs,
    config: ctx.config ?? {},
    encryptionRequired: s.encryptionRequired,
    postureQueries: ctx.postureQueries ?? [],
  }
}

export function toServiceRow(s: Service): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    tags: s.tags ?? {},
    isSystem: false,
    terminatorStrategy: s.terminatorStrategy,
    roleAttributes: s.roleAttributes ?? [],
    isFabricOnly: false,
    configs: s.configs,
  }
}
