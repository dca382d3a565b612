/**
 * Records of the policy graph as stored: config types, configs, services, routers (edge and fabric), terminators,
 * the three policy kinds and per-identity service config overrides. Times are epoch milliseconds.
 * @see edge-api management.yml definitions serviceDetail, edgeRouterDetail, routerDetail, terminatorDetail,
 *   servicePolicyDetail, edgeRouterPolicyDetail, serviceEdgeRouterPolicyDetail, configDetail, configTypeDetail
 * Records are replaced on every change, never mutated in place (caches key on record objects), so each record type
 * is deeply read-only.
 */
import type { DeepReadonly } from '../../lib/deep-readonly.ts'

export type Semantic = 'AllOf' | 'AnyOf'
export const SEMANTICS = ['AllOf', 'AnyOf'] as const

export type PolicyType = 'Dial' | 'Bind'
export const POLICY_TYPES = ['Dial', 'Bind'] as const

export type Precedence = 'default' | 'required' | 'failed'

/** null | string | boolean values; the map itself may be null on the wire, stored as {} then. */
export type Tags = Record<string, unknown>

/** Fields every stored entity has (read-only, as the records). */
export type Stored = DeepReadonly<StoredFields>
interface StoredFields {
  id: string
  createdAt: number
  updatedAt: number
  tags: Tags
}

export type ConfigType = DeepReadonly<StoredFields & {
  name: string
  /** A JSON schema; configs of this type are validated against it. `{}` accepts anything. */
  schema: Record<string, unknown>
  /** 'service' for service configs, 'router' for router configs (router.link.v1). */
  target: string | null
  /** Built-in types cannot be changed or deleted. */
  isSystem: boolean
}>

export type Config = DeepReadonly<StoredFields & {
  name: string
  configTypeId: string
  data: Record<string, unknown>
}>

export type Service = DeepReadonly<StoredFields & {
  name: string
  roleAttributes: string[] | null
  /** Config ids, at most one per config type. */
  configs: string[]
  encryptionRequired: boolean
  terminatorStrategy: string
  maxIdleTimeMillis: number
}>

/**
 * A router. Edge routers (created through /edge-routers) carry the edge fields; fabric-only routers
 * (created through /routers) have `isEdge` false and take part in no policy.
 */
export type Router = DeepReadonly<StoredFields & {
  name: string
  isEdge: boolean
  roleAttributes: string[] | null
  cost: number
  noTraversal: boolean
  disabled: boolean
  isTunnelerEnabled: boolean
  appData: Record<string, unknown> | null
  /** SHA-1 of the router's current client certificate (lowercase hex); null until enrolled or after a re-enroll. */
  fingerprint: string | null
  /** True once the router redeemed an enrollment; false again after a re-enroll. */
  isVerified: boolean
  /** The outstanding router enrollment (erott), null once redeemed. At most one per router. */
  enrollment: RouterEnrollment | null
}>

/**
 * A router's outstanding enrollment: its one-time token, the JWT carrying it (em erott) and its expiry. Part of the
 * router record: a router has at most one, it shows in the router's view, and redeeming it changes the same record.
 */
export type RouterEnrollment = DeepReadonly<{
  token: string
  jwt: string
  createdAt: number
  expiresAt: number
}>

export type Terminator = DeepReadonly<StoredFields & {
  serviceId: string
  routerId: string
  binding: string
  address: string
  /**
   * The instance id (the REST `identity`; the real controller's InstanceId): free text an admin sets, or the instance
   * an addressable SDK binds as; empty for most.
   */
  identity: string
  /** The instance secret, base64 (REST `identitySecret`); null for none. */
  identitySecret: string | null
  cost: number
  precedence: Precedence
  /** The identity hosting it (an SDK's Bind relayed by its edge router); empty for one an admin or a router made. */
  hostId: string
  /**
   * Made by the controller for an edge router (CreateTerminatorV2): admins may delete it but not update it, as the
   * real controller's system entity constraint allows (its terminator store deletes in a system context).
   */
  isSystem: boolean
  /** Peer data the terminator hands every circuit's dialer: header id (decimal) → base64 bytes. */
  peerData: Record<string, string>
  /** The controller (this node's id, or a cluster node's name) that created it for a router; empty otherwise. */
  sourceCtrl: string
}>

export type ServicePolicy = DeepReadonly<StoredFields & {
  name: string
  type: PolicyType
  semantic: Semantic
  identityRoles: string[]
  serviceRoles: string[]
  postureCheckRoles: string[]
}>

export type EdgeRouterPolicy = DeepReadonly<StoredFields & {
  name: string
  semantic: Semantic
  identityRoles: string[]
  edgeRouterRoles: string[]
  /** The policy a tunneler-enabled edge router gets (id = router id); admins cannot change or delete it. */
  isSystem: boolean
}>

export type ServiceEdgeRouterPolicy = DeepReadonly<StoredFields & {
  name: string
  semantic: Semantic
  serviceRoles: string[]
  edgeRouterRoles: string[]
}>

/** Per-identity override: for this identity, use `configId` for `serviceId` instead of the service's config of that type. */
export type ServiceConfigOverride = DeepReadonly<{
  identityId: string
  serviceId: string
  configId: string
}>

/** The entity kinds policies select. */
export type EntityKind = 'identity' | 'service' | 'router' | 'posture-check'

/** A policy as the resolver sees it: which kinds it joins, with which roles. */
export type IndexPolicy =
  | { id: string; kind: 'service-policy'; type: PolicyType; semantic: Semantic; identityRoles: readonly string[]; serviceRoles: readonly string[]; postureCheckRoles: readonly string[] }
  | { id: string; kind: 'edge-router-policy'; semantic: Semantic; identityRoles: readonly string[]; edgeRouterRoles: readonly string[] }
  | { id: string; kind: 'service-edge-router-policy'; semantic: Semantic; serviceRoles: readonly string[]; edgeRouterRoles: readonly string[] }

export type PolicyKind = IndexPolicy['kind']
