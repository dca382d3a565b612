/** Identity and identity-type records → wire details. The only place that renames identity fields. */
import { isDisabled, type Authenticator, type Identity } from '../../domain/identity/identity-types.ts'
import type { Enrollment } from '../../domain/enrollment/enrollment-types.ts'
import { selfLink } from '../http-envelope.ts'
import { BASE_SYMBOLS, iso, isoOrNull, toEntityRef } from './common-mapper.ts'

/** The fields the filter language knows on identities (see toIdentityRow). */
export const IDENTITY_SYMBOLS = {
  ...BASE_SYMBOLS,
  name: 'string',
  roleAttributes: 'set',
  externalId: 'string',
  type: 'string',
  authPolicyId: 'string',
  isAdmin: 'boolean',
  isDefaultAdmin: 'boolean',
} as const

export const IDENTITY_TYPE_SYMBOLS = { ...BASE_SYMBOLS, name: 'string' } as const

export interface IdentityViewContext {
  authenticators: Iterable<Authenticator>
  /** The identity's outstanding enrollments. */
  enrollments: Iterable<Enrollment>
  hasApiSession: boolean
  /** A verified TOTP exists (domain/identity/identity-mfa.ts isMfaEnabled). */
  isMfaEnabled: boolean
  now: number
  /** The name of a third-party CA, for an ottca enrollment's `ca` reference (its id when unknown). */
  caName?: (caId: string) => string | undefined
  /** The name of an auth policy, for the `authPolicy` reference (its id when unknown). */
  authPolicyName?: (policyId: string) => string | undefined
}

export function toIdentityDetail(i: Identity, ctx: IdentityViewContext) {
  const authenticators: Record<string, unknown> = {}
  for (const a of ctx.authenticators) {
    if (a.method === 'updb') authenticators.updb = { id: a.id, username: a.username ?? '' }
    else if (a.method === 'cert') authenticators.cert = { id: a.id, fingerprint: a.fingerprint ?? '' }
  }
  const enrollment: Record<string, unknown> = {}
  for (const e of ctx.enrollments) {
    enrollment[e.method] = {
      id: e.id,
      jwt: e.jwt,
      token: e.token,
      expiresAt: iso(e.expiresAt),
      ...(e.caId !== null ? { caId: e.caId, ca: toEntityRef('cas', e.caId, ctx.caName?.(e.caId) ?? e.caId) } : {}),
    }
  }
  return {
    id: i.id,
    createdAt: iso(i.createdAt),
    updatedAt: iso(i.updatedAt),
    _links: {
      ...selfLink('identities', i.id),
      'auth-policies': { href: `./auth-policies/${i.authPolicyId}` },
      authenticators: { href: `./identities/${i.id}/authenticators` },
      enrollments: { href: `./identities/${i.id}/enrollments` },
      'edge-router-policies': { href: `./identities/${i.id}/edge-router-policies` },
      'edge-routers': { href: `./identities/${i.id}/edge-routers` },
      'service-policies': { href: `./identities/${i.id}/service-policies` },
      services: { href: `./identities/${i.id}/services` },
    },
    tags: i.tags ?? {},
    name: i.name,
    type: toEntityRef('identity-types', i.typeId, i.typeId),
    typeId: i.typeId,
    isAdmin: i.isAdmin,
    isDefaultAdmin: i.isDefaultAdmin,
    isMfaEnabled: ctx.isMfaEnabled,
    authenticators,
    enrollment,
    envInfo: i.envInfo,
    sdkInfo: i.sdkInfo,
    roleAttributes: i.roleAttributes ?? [],
    hasApiSession: ctx.hasApiSession,
    hasEdgeRouterConnection: false,
    edgeRouterConnectionStatus: 'offline',
    defaultHostingCost: i.defaultHostingCost,
    defaultHostingPrecedence: i.defaultHostingPrecedence,
    serviceHostingCosts: i.serviceHostingCosts,
    serviceHostingPrecedences: i.serviceHostingPrecedences,
    authPolicyId: i.authPolicyId,
    authPolicy: toEntityRef('auth-policies', i.authPolicyId, ctx.authPolicyName?.(i.authPolicyId) ?? i.authPolicyId),
    externalId: i.externalId,
    appData: i.appData ?? {},
    disabled: isDisabled(i, ctx.now),
    disabledAt: isoOrNull(i.disabledAt),
    disabledUntil: isoOrNull(i.disabledUntil),
    permissions: [],
  }
}

/** The row the filter language sees for an identity. */
export function toIdentityRow(i: Identity): Record<string, unknown> {
  return {
    id: i.id,
    name: i.name,
    createdAt: i.createdAt,
    updatedAt: i.updatedAt,
    tags: i.tags ?? {},
    isSystem: false,
    roleAttributes: i.roleAttributes ?? [],
    externalId: i.externalId,
    type: i.typeId,
    authPolicyId: i.authPolicyId,
    isAdmin: i.isAdmin,
    isDefaultAdmin: i.isDefaultAdmin,
  }
}

export function toIdentityTypeDetail(id: string, createdAt: number) {
  return { id, name: id, createdAt: iso(createdAt), updatedAt: iso(createdAt), _links: selfLink('identity-types', id), tags: {} }
}
