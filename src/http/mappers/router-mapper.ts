/**
 * Router records → edge router (Management) and fabric router wire details and filter rows.
 * What comes from the router's control channel on this node (isOnline/connected/online, hostname,
 * supportedProtocols, syncStatus, versionInfo, capabilities, ctrlChanListeners) is its presence (control plane
 * registry); offline: empty hostname and protocols, SYNC_UNKNOWN, empty version fields, as the real controller shows.
 * The enrollment fields show the outstanding erott enrollment, null when there is none. `fingerprint` is a string in
 * the spec (required on routerDetail): "" while the router has no certificate, never null.
 */
import type { Router } from '../../domain/policy/policy-types.ts'
import type { RouterPresence } from '../../domain/router/router-presence.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso } from './common-mapper.ts'

/** The fields the filter language knows on routers (see toRouterRow) and edge routers (toEdgeRouterRow). */
export const ROUTER_SYMBOLS = { ...BASE_SYMBOLS, name: 'string', fingerprint: 'string', cost: 'number', noTraversal: 'boolean', disabled: 'boolean', connected: 'boolean' } as const
export const EDGE_ROUTER_SYMBOLS = { ...ROUTER_SYMBOLS, roleAttributes: 'set', isVerified: 'boolean', isTunnelerEnabled: 'boolean', online: 'boolean' } as const

const EDGE_SUB_LISTS = ['edge-router-policies', 'identities', 'service-edge-router-policies', 'service-policies', 'services'] as const

function common(r: Router, p: RouterPresence) {
  return {
    id: r.id,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    tags: r.tags ?? {},
    name: r.name,
    cost: r.cost,
    disabled: r.disabled,
    noTraversal: r.noTraversal,
    isOnline: p.isOnline,
    fingerprint: r.fingerprint ?? '',
    isVerified: r.isVerified,
    enrollmentCreatedAt: r.enrollment ? iso(r.enrollment.createdAt) : null,
    enrollmentExpiresAt: r.enrollment ? iso(r.enrollment.expiresAt) : null,
    enrollmentJwt: r.enrollment?.jwt ?? null,
    enrollmentToken: r.enrollment?.token ?? null,
    unverifiedCertPem: null,
    unverifiedFingerprint: null,
    ctrlChanListeners: p.ctrlChanListeners,
  }
}

export function toEdgeRouterDetail(r: Router, p: RouterPresence) {
  const links: Record<string, { href: string }> = { ...selfLink('edge-routers', r.id) }
  for (const l of EDGE_SUB_LISTS) links[l] = { href: `./edge-routers/${r.id}/${l}` }
  return {
    ...common(r, p),
    _links: links,
    appData: r.appData ?? {},
    hostname: p.hostname,
    supportedProtocols: p.supportedProtocols,
    syncStatus: p.syncStatus,
    versionInfo: p.versionInfo,
    ...(p.capabilities.length > 0 ? { capabilities: p.capabilities } : {}),
    isTunnelerEnabled: r.isTunnelerEnabled,
    roleAttributes: r.roleAttributes ?? [],
    certPem: null,
  }
}

export function toRouterDetail(r: Router, p: RouterPresence) {
  return { ...common(r, p), _links: selfLink('routers', r.id) }
}

export function toRouterRow(r: Router, p: RouterPresence): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    tags: r.tags ?? {},
    isSystem: false,
    fingerprint: r.fingerprint,
    cost: r.cost,
    noTraversal: r.noTraversal,
    disabled: r.disabled,
    connected: p.isOnline,
  }
}

export function toEdgeRouterRow(r: Router, p: RouterPresence): Record<string, unknown> {
  return {
    ...toRouterRow(r, p),
    roleAttributes: r.roleAttributes ?? [],
    isVerified: r.isVerified,
    isTunnelerEnabled: r.isTunnelerEnabled,
    online: p.isOnline,
  }
}
