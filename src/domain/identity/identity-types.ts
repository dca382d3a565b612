/**
 * Identity and authenticator records as stored, and the fixed catalogues (identity types, the default auth policy).
 * Times are epoch milliseconds; the mapper renders them as ISO strings.
 * @see edge-api management.yml definitions identityDetail, authenticatorDetail
 */
import type { DeepReadonly } from '../../lib/deep-readonly.ts'

/** The identity types the seed names; stored ids equal their names. */
export const IDENTITY_TYPES = ['User', 'Device', 'Service', 'Router', 'Default'] as const
export type IdentityTypeId = (typeof IDENTITY_TYPES)[number]

/** The built-in authentication policy every identity names unless it names another (created by migration 1 → 2). */
export const DEFAULT_AUTH_POLICY = { id: 'default', name: 'Default' } as const

export const HOSTING_PRECEDENCES = ['default', 'required', 'failed'] as const
export type HostingPrecedence = (typeof HOSTING_PRECEDENCES)[number]

export type Tags = Record<string, unknown> | null

export interface EnvInfo {
  arch?: string
  domain?: string
  hostname?: string
  os?: string
  osRelease?: string
  osVersion?: string
}

export interface SdkInfo {
  appId?: string
  appVersion?: string
  branch?: string
  revision?: string
  type?: string
  version?: string
}

/** A stored identity: replaced on every change, never mutated (hence deeply read-only). */
export type Identity = DeepReadonly<{
  id: string
  name: string
  typeId: IdentityTypeId
  isAdmin: boolean
  isDefaultAdmin: boolean
  /**
   * The identity of a tunneler-enabled edge router (its id is the router's id): created, renamed and deleted only by
   * the router-identity flow (flows/routers/router-identity.ts). Absent on every other identity.
   */
  isRouterIdentity?: true
  roleAttributes: string[] | null
  externalId: string | null
  authPolicyId: string
  appData: Tags
  tags: Tags
  defaultHostingCost: number
  defaultHostingPrecedence: HostingPrecedence
  serviceHostingCosts: Record<string, number>
  serviceHostingPrecedences: Record<string, HostingPrecedence>
  envInfo: EnvInfo
  sdkInfo: SdkInfo
  disabledAt: number | null
  disabledUntil: number | null
  createdAt: number
  updatedAt: number
}>

/**
 * A stored authenticator, deeply read-only like identities. `passwordHash` is an argon2id PHC string (it carries its
 * own salt and parameters).
 */
export type Authenticator = DeepReadonly<{
  id: string
  identityId: string
  method: 'updb' | 'cert'
  username?: string
  passwordHash?: string
  certPem?: string
  /** cert: SHA-1 of the certificate's DER, lowercase hex (how certificate login finds the authenticator). */
  fingerprint?: string
  /** cert: the controller's own CA issued the certificate (an ott enrollment), rather than a third party. */
  isIssuedByNetwork?: boolean
  /**
   * cert: a certificate issued by an extension (`POST /current-identity/authenticators/{id}/extend`) and not yet
   * proven by extend-verify. It logs nobody in; verification makes it the authenticator's certificate.
   */
  unverifiedCertPem?: string
  unverifiedFingerprint?: string
  /**
   * cert: the third-party CA (`/cas`) the certificate chains to, when it came through one (ottca, CA auto-enrollment,
   * an admin's create); deleting that CA deletes the authenticator, and a re-enroll makes an ottca enrollment of it.
   */
  caId?: string
  /**
   * cert: an admin asked the holder to extend the certificate early (`POST /authenticators/{id}/request-extend`), and
   * with `isKeyRollRequested` to use a new key; `extendRequestedAt` is when. A verified extension clears all three.
   * Absent: false, false, null (records written before request-extend existed).
   */
  isExtendRequested?: boolean
  isKeyRollRequested?: boolean
  extendRequestedAt?: number | null
  /** cert: whether the last verified extension changed the key (absent: no extension verified yet, false). */
  lastExtendRolledKeys?: boolean
  tags: Tags
  createdAt: number
  updatedAt: number
}>

/** True while an identity is disabled: disabledAt is set and disabledUntil is unset or in the future. */
export function isDisabled(identity: Identity, now: number): boolean {
  return identity.disabledAt !== null && (identity.disabledUntil === null || identity.disabledUntil > now)
}

/** Admin access: isAdmin or isDefaultAdmin. */
export function isAdminIdentity(identity: Identity): boolean {
  return identity.isAdmin || identity.isDefaultAdmin
}
