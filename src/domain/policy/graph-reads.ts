/**
 * What the policy graph shows everyone but its own actor: one read-only table per kind and the cross indexes
 * (configs by type, services by config, terminators by service and router, overrides, `@id` references). Routes,
 * flows and the resolver read through this (the actor's snapshot), never through the state class and its mutators.
 * Records are deeply read-only and replaced on every change; arrays answered must not be changed.
 */
import type { ConfigLookup } from './graph-decide-configs.ts'
import type {
  Config,
  ConfigType,
  EdgeRouterPolicy,
  IndexPolicy,
  PolicyKind,
  EntityKind,
  Router,
  Service,
  ServiceConfigOverride,
  ServiceEdgeRouterPolicy,
  ServicePolicy,
  Terminator,
} from './policy-types.ts'
import type { ReadTable } from '../../lib/entity-table.ts'
import type { PostureCheck } from '../posture/posture-types.ts'

/** A policy of any kind, as stored. */
export type AnyPolicy =
  | { kind: 'service-policy'; policy: ServicePolicy }
  | { kind: 'edge-router-policy'; policy: EdgeRouterPolicy }
  | { kind: 'service-edge-router-policy'; policy: ServiceEdgeRouterPolicy }

/** A reference from a policy: its kind and id. */
export interface PolicyRef {
  kind: PolicyKind
  id: string
}

/** The policy graph's reads: what the policy-graph actor's `snapshot()` answers. */
export interface PolicyGraphReads extends ConfigLookup {
  readonly configTypes: ReadTable<ConfigType>
  readonly configs: ReadTable<Config>
  readonly services: ReadTable<Service>
  /** Edge and fabric routers: one name index, as in the real controller's routers store. */
  readonly routers: ReadTable<Router>
  /** The edge routers only (the ones policies select). */
  readonly edgeRouters: ReadTable<Router>
  readonly terminators: ReadTable<Terminator>
  readonly servicePolicies: ReadTable<ServicePolicy>
  readonly edgeRouterPolicies: ReadTable<EdgeRouterPolicy>
  readonly serviceEdgeRouterPolicies: ReadTable<ServiceEdgeRouterPolicy>
  readonly postureChecks: ReadTable<PostureCheck>

  /** Id of the config type holding this name. */
  configTypeIdByName(name: string): string | undefined
  /** Configs of a config type, in id order. */
  configsOfType(configTypeId: string): readonly Config[]
  /** Services listing a config, in id order. */
  servicesUsingConfig(configId: string): readonly Service[]
  serviceIdsUsingConfig(configId: string): ReadonlySet<string>
  terminatorsOfService(serviceId: string): readonly Terminator[]
  terminatorsOfRouter(routerId: string): readonly Terminator[]
  /** The router whose outstanding enrollment has this token. */
  routerOfEnrollmentToken(token: string): Router | undefined
  /** The router whose current client certificate has this SHA-1 fingerprint. */
  routerOfFingerprint(fingerprint: string): Router | undefined
  /** The identity's overrides, ordered by service id then config id. */
  overridesOf(identityId: string): readonly ServiceConfigOverride[]
  overridesOfService(serviceId: string): readonly ServiceConfigOverride[]
  overridesUsingConfig(configId: string): readonly ServiceConfigOverride[]
  override(identityId: string, serviceId: string, configTypeId: string): ServiceConfigOverride | undefined
  /** The config the identity uses for the service instead of the service's own config of that type, if any. */
  overrideConfig(identityId: string, serviceId: string, configTypeId: string): Config | undefined
  readonly overrideCount: number
  /**
   * Grows with every message the policy-graph actor handles: an answer rendered from these reads is current while
   * the number stays the same.
   */
  readonly version: number
  /** Policies naming entity `id` of `kind` with `@id` in the role list for that kind, sorted. */
  policiesReferencing(kind: EntityKind, id: string): readonly PolicyRef[]
  /** A stored policy by kind and id. */
  policy(kind: PolicyKind, id: string): AnyPolicy | undefined
  /** Every policy as the resolver indexes it (service policies, then edge router policies, then SERPs; id order). */
  indexPolicies(): readonly IndexPolicy[]
}
