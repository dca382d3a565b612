/** Terminator records → wire details (service and router as entity refs) and filter rows. */
import type { Terminator } from '../../domain/policy/policy-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso, toEntityRef } from './common-mapper.ts'

/** The fields the filter language knows on terminators (see toTerminatorRow). */
export const TERMINATOR_SYMBOLS = {
  ...BASE_SYMBOLS, service: 'string', router: 'string', binding: 'string', address: 'string', identity: 'string', instanceId: 'string', cost: 'number', precedence: 'string', hostId: 'string', sourceCtrl: 'string',
} as const

export function toTerminatorDetail(t: Terminator, names: { service: string; router: string }) {
  return {
    id: t.id,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
    _links: {
      ...selfLink('terminators', t.id),
      service: { href: `./services/${t.serviceId}` },
      router: { href: `./routers/${t.routerId}` },
    },
    tags: t.tags ?? {},
    serviceId: t.serviceId,
    service: toEntityRef('services', t.serviceId, names.service),
    routerId: t.routerId,
    router: toEntityRef('routers', t.routerId, names.router),
    binding: t.binding,
    address: t.address,
    identity: t.identity,
    cost: t.cost,
    dynamicCost: t.cost,
    precedence: t.precedence,
  }
}

export function toTerminatorRow(t: Terminator): Record<string, unknown> {
  return {
    id: t.id,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    tags: t.tags ?? {},
    isSystem: t.isSystem,
    service: t.serviceId,
    router: t.routerId,
    binding: t.binding,
    address: t.address,
    identity: t.identity,
    instanceId: t.identity,
    cost: t.cost,
    precedence: t.precedence,
    hostId: t.hostId,
    sourceCtrl: t.sourceCtrl,
  }
}
