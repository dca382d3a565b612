/**
 * Messages and events of the policy-graph actor: the sole writer of config types, configs, services, routers,
 * terminators, the three policy kinds and per-identity service config overrides. Plain, cloneable data.
 *
 * Update messages carry `replace`: true for PUT (absent optional fields reset to their defaults), false for PATCH
 * (absent fields are left as they are).
 */
import type { ChangeContext } from '../runtime/actor-runtime.ts'
import type {
  Config,
  ConfigType,
  EdgeRouterPolicy,
  IndexPolicy,
  Router,
  RouterEnrollment,
  Service,
  ServiceConfigOverride,
  ServiceEdgeRouterPolicy,
  ServicePolicy,
  Tags,
  Terminator, EntityKind, Precedence } from '../../domain/policy/policy-types.ts'
import type { TerminatorConflict, TerminatorRefusal } from '../../domain/policy/graph-decide-terminators.ts'
import type { Writable } from '../../lib/deep-readonly.ts'
import type { PostureCheck } from '../../domain/posture/posture-types.ts'
import type { PostureCheckKindInput } from '../../domain/posture/posture-decide.ts'

/** Settable fields of a record, writable so that routes can build them field by field. */
type Fields<T, K extends keyof T> = Partial<Writable<Pick<T, K>>>

export type ConfigTypeFields = Fields<ConfigType, 'name' | 'schema' | 'target' | 'tags'>
export type ConfigFields = Fields<Config, 'name' | 'configTypeId' | 'data' | 'tags'>
export type ServiceFields = Fields<Service, 'name' | 'roleAttributes' | 'configs' | 'encryptionRequired' | 'terminatorStrategy' | 'maxIdleTimeMillis' | 'tags'>
export type RouterFields = Fields<Router, 'name' | 'roleAttributes' | 'cost' | 'noTraversal' | 'disabled' | 'isTunnelerEnabled' | 'appData' | 'tags'>
/** A router enrollment as its maker hands it over; the actor adds `createdAt`. */
export type NewRouterEnrollment = Omit<RouterEnrollment, 'createdAt'>
export type TerminatorFields = Fields<Terminator, 'serviceId' | 'routerId' | 'binding' | 'address' | 'identity' | 'identitySecret' | 'cost' | 'precedence' | 'tags'>
/**
 * A terminator a router asks for over its control channel: SDK-hosted through an edge router (`isSystem`, its id the
 * address the router chose, `hostId` the hosting identity) or router-hosted (a fabric binding; `id` empty: the graph
 * makes one).
 */
export interface RouterTerminatorInput {
  id: string
  serviceId: string
  routerId: string
  binding: string
  address: string
  /** The instance id (REST `identity`). */
  identity: string
  /** The instance secret, base64; null for none. */
  identitySecret: string | null
  peerData: Record<string, string>
  cost: number
  precedence: Precedence
  hostId: string
  isSystem: boolean
  sourceCtrl: string
}

/** What establishing a router's terminator came to (a conflict and a missing service or router write nothing). */
export type TerminatorEstablished =
  | { outcome: 'created' | 'unchanged' | 'updated'; id: string }
  | { outcome: 'conflict'; with: TerminatorConflict }
  | { outcome: 'no-service' | 'no-router' }

/** What a router's change of one of its terminators came to (a refusal writes nothing). */
export type TerminatorRouterUpdated = { outcome: 'updated' | 'unchanged' } | { outcome: 'refused'; refusal: TerminatorRefusal }

export type ServicePolicyFields = Fields<ServicePolicy, 'name' | 'type' | 'semantic' | 'identityRoles' | 'serviceRoles' | 'postureCheckRoles' | 'tags'>
export type EdgeRouterPolicyFields = Fields<EdgeRouterPolicy, 'name' | 'semantic' | 'identityRoles' | 'edgeRouterRoles' | 'tags'>
export type ServiceEdgeRouterPolicyFields = Fields<ServiceEdgeRouterPolicy, 'name' | 'semantic' | 'serviceRoles' | 'edgeRouterRoles' | 'tags'>
/** A posture check's common fields plus its kind fields (checked by the actor against `typeId`). */
export type PostureCheckFields = Partial<{ name: string; typeId: string; roleAttributes: string[] | null; tags: Tags | null }> & PostureCheckKindInput

export type PolicyGraphMsg =
  | { type: 'configType.create'; input: ConfigTypeFields; change: ChangeContext }
  | { type: 'configType.update'; id: string; input: ConfigTypeFields; replace: boolean; change: ChangeContext }
  | { type: 'configType.delete'; id: string; change: ChangeContext }
  | { type: 'config.create'; input: ConfigFields; change: ChangeContext }
  | { type: 'config.update'; id: string; input: ConfigFields; replace: boolean; change: ChangeContext }
  | { type: 'config.delete'; id: string; change: ChangeContext }
  | { type: 'service.create'; input: ServiceFields; change: ChangeContext }
  | { type: 'service.update'; id: string; input: ServiceFields; replace: boolean; change: ChangeContext }
  | { type: 'service.delete'; id: string; change: ChangeContext }
  /**
   * `isEdge`: created through /edge-routers (true) or /routers (false). `id` and `enrollment`: the id the caller chose
   * so that the enrollment JWT could name it, and that enrollment (the router-identity flow always gives both; a
   * router created without one is enrollable only after a re-enroll).
   */
  | { type: 'router.create'; input: RouterFields; isEdge: boolean; id?: string; enrollment?: NewRouterEnrollment; change: ChangeContext }
  /**
   * Redeems the router enrollment holding `token` (checked again here: unknown, used or expired tokens are refused):
   * the router becomes verified with the client certificate `fingerprint`, and the enrollment is gone.
   */
  | { type: 'router.enroll'; token: string; fingerprint: string; change: ChangeContext }
  /** Replaces the router's client certificate fingerprint, if it still is `previous` (else 401 UNAUTHORIZED). */
  | { type: 'router.extend'; id: string; previous: string; fingerprint: string; change: ChangeContext }
  /** Back to unenrolled: fingerprint removed, not verified, `enrollment` replaces any outstanding one. */
  | { type: 'router.reEnroll'; id: string; enrollment: NewRouterEnrollment; change: ChangeContext }
  | { type: 'router.update'; id: string; input: RouterFields; replace: boolean; change: ChangeContext }
  | { type: 'router.delete'; id: string; change: ChangeContext }
  | { type: 'terminator.create'; input: TerminatorFields; change: ChangeContext }
  | { type: 'terminator.update'; id: string; input: TerminatorFields; replace: boolean; change: ChangeContext }
  | { type: 'terminator.delete'; id: string; change: ChangeContext }
  /**
   * A router's terminator (control plane): created, or, when one with its id exists and is the same terminator
   * (graph-decide-terminators.ts), its cost and precedence taken from the request; else a conflict, nothing written.
   */
  | { type: 'terminator.establish'; input: RouterTerminatorInput; change: ChangeContext }
  /** A router changes the cost or precedence of one of its terminators (`binding`: the one it must have). */
  | { type: 'terminator.routerUpdate'; id: string; routerId: string; binding?: string; cost?: number; precedence?: Precedence; change: ChangeContext }
  /** Removes the listed terminators that exist (and, with `routerId`, are on that router); the reply counts them. */
  | { type: 'terminator.removeMany'; ids: string[]; routerId?: string; change: ChangeContext }
  | { type: 'servicePolicy.create'; input: ServicePolicyFields; change: ChangeContext }
  | { type: 'servicePolicy.update'; id: string; input: ServicePolicyFields; replace: boolean; change: ChangeContext }
  | { type: 'servicePolicy.delete'; id: string; change: ChangeContext }
  | { type: 'edgeRouterPolicy.create'; input: EdgeRouterPolicyFields; change: ChangeContext }
  | { type: 'edgeRouterPolicy.update'; id: string; input: EdgeRouterPolicyFields; replace: boolean; change: ChangeContext }
  | { type: 'edgeRouterPolicy.delete'; id: string; change: ChangeContext }
  | { type: 'serviceEdgeRouterPolicy.create'; input: ServiceEdgeRouterPolicyFields; change: ChangeContext }
  | { type: 'serviceEdgeRouterPolicy.update'; id: string; input: ServiceEdgeRouterPolicyFields; replace: boolean; change: ChangeContext }
  | { type: 'serviceEdgeRouterPolicy.delete'; id: string; change: ChangeContext }
  /** Adds overrides; one of the same (identity, service, config type) is replaced. */
  | { type: 'overrides.add'; identityId: string; links: { serviceId: string; configId: string }[]; change: ChangeContext }
  /** Removes the listed overrides, or all of the identity's when `links` is absent. */
  | { type: 'overrides.remove'; identityId: string; links?: { serviceId: string; configId: string }[]; change: ChangeContext }
  | { type: 'postureCheck.create'; input: PostureCheckFields; change: ChangeContext }
  | { type: 'postureCheck.update'; id: string; input: PostureCheckFields; replace: boolean; change: ChangeContext }
  /** Deletes a posture check and drops its `@id` from service policies' postureCheckRoles. */
  | { type: 'postureCheck.delete'; id: string; change: ChangeContext }
  /** An identity was deleted: drop its `@id` from policy roles and its overrides. */
  | { type: 'identity.removed'; identityId: string; change: ChangeContext }
  /** Repairs found by the integrity fix (flows/integrity/integrity-run.ts); the reply counts those that changed something. */
  | { type: 'integrity.repair'; repairs: GraphRepair[]; change: ChangeContext }

/**
 * One repair of the integrity fix (idempotent):
 * - `references.drop`: an entity named by `@id` in policy roles is gone: the roles (and an identity's overrides) go;
 * - `override.drop`: an override whose identity, service or config is gone;
 * - `service.dropConfig`: a service names a config that is gone;
 * - `terminator.drop`: a terminator whose service or router is gone.
 */
export type GraphRepair =
  | { kind: 'references.drop'; entityKind: EntityKind; id: string }
  | { kind: 'override.drop'; key: string }
  | { kind: 'service.dropConfig'; serviceId: string; configId: string }
  | { kind: 'terminator.drop'; id: string }

export interface PolicyGraphReplies {
  'configType.create': { id: string }
  'configType.update': void
  'configType.delete': void
  'config.create': { id: string }
  'config.update': void
  'config.delete': void
  'service.create': { id: string }
  'service.update': void
  'service.delete': void
  'router.create': { id: string }
  'router.update': void
  'router.delete': void
  'router.enroll': { id: string }
  'router.extend': void
  'router.reEnroll': void
  'terminator.create': { id: string }
  'terminator.update': void
  'terminator.delete': void
  'terminator.establish': TerminatorEstablished
  'terminator.routerUpdate': TerminatorRouterUpdated
  'terminator.removeMany': { removed: number }
  'servicePolicy.create': { id: string }
  'servicePolicy.update': void
  'servicePolicy.delete': void
  'edgeRouterPolicy.create': { id: string }
  'edgeRouterPolicy.update': void
  'edgeRouterPolicy.delete': void
  'serviceEdgeRouterPolicy.create': { id: string }
  'serviceEdgeRouterPolicy.update': void
  'serviceEdgeRouterPolicy.delete': void
  'overrides.add': void
  'overrides.remove': void
  'identity.removed': void
  'integrity.repair': number
  'postureCheck.create': { id: string }
  'postureCheck.update': void
  'postureCheck.delete': void
}

/**
 * Events, published synchronously before the reply (the policy resolver consumes them so that the very next request
 * after a 2xx answer sees the change).
 */
export type PolicyGraphEvent =
  | { type: 'graph.service.put'; service: Service; previous?: Service }
  | { type: 'graph.service.deleted'; service: Service }
  | { type: 'graph.router.put'; router: Router; previous?: Router }
  | { type: 'graph.router.deleted'; router: Router }
  | { type: 'graph.policy.put'; policy: IndexPolicy; previous?: IndexPolicy }
  | { type: 'graph.policy.deleted'; policy: IndexPolicy }
  /** Data clients read changed without a change of who sees what: these services' config (or configs) changed. */
  | { type: 'graph.services.touched'; serviceIds: string[] }
  | { type: 'graph.configType.put'; configType: ConfigType; previous?: ConfigType }
  | { type: 'graph.configType.deleted'; configType: ConfigType }
  | { type: 'graph.config.put'; config: Config; previous?: Config }
  | { type: 'graph.config.deleted'; config: Config }
  | { type: 'graph.postureCheck.put'; check: PostureCheck; previous?: PostureCheck }
  | { type: 'graph.postureCheck.deleted'; check: PostureCheck }
  /** These identities' overrides changed. */
  | { type: 'graph.overrides.changed'; identityIds: string[] }
  /** A terminator was created (any way: the Management API, a router): the control plane validates it with its router. */
  | { type: 'graph.terminator.created'; terminator: Terminator }

export type OverrideKey = string
/** Storage key of an override: identity, service and config type of the config (one per type). */
export const overrideKey = (o: { identityId: string; serviceId: string }, configTypeId: string): OverrideKey =>
  `${o.identityId}/${o.serviceId}/${configTypeId}`

export type { ServiceConfigOverride, Tags }
