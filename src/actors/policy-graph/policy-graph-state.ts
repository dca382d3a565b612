/**
 * In-memory state of the policy graph: one table per kind (by id, unique name, id order, role attributes) plus the
 * cross indexes routes and handlers need: configs by type, services by config, terminators by service and router,
 * overrides by identity/service/config, and which policies name an entity with `@id`.
 * Others read it live through `actor.snapshot()`, typed as PolicyGraphReads; only the actor's handlers see this class
 * and its put/remove methods.
 */
import type { AnyPolicy, PolicyGraphReads, PolicyRef } from '../../domain/policy/graph-reads.ts'
import { assertNever } from '../../lib/assert-never.ts'
import { ConfigSchemaCache } from '../../domain/policy/config-schema.ts'
import { splitRoles } from '../../domain/policy/policy-roles.ts'
import type {
  Config,
  ConfigType,
  EdgeRouterPolicy,
  EntityKind,
  IndexPolicy,
  PolicyKind,
  Router,
  Service,
  ServiceConfigOverride,
  ServiceEdgeRouterPolicy,
  ServicePolicy,
  Terminator,
} from '../../domain/policy/policy-types.ts'
import type { PostureCheck } from '../../domain/posture/posture-types.ts'
import { overrideKey } from './policy-graph-messages.ts'
import { EntityTable, MultiIndex, type ReadTable } from '../../lib/entity-table.ts'

export class PolicyGraphState implements PolicyGraphReads {
  /** The writable tables; the public fields below are read-only views of the same objects. */
  private readonly t = {
    configTypes: new EntityTable<ConfigType>(),
    configs: new EntityTable<Config>(),
    services: new EntityTable<Service>(),
    routers: new EntityTable<Router>(),
    edgeRouters: new EntityTable<Router>(),
    terminators: new EntityTable<Terminator>(),
    servicePolicies: new EntityTable<ServicePolicy>(),
    edgeRouterPolicies: new EntityTable<EdgeRouterPolicy>(),
    serviceEdgeRouterPolicies: new EntityTable<ServiceEdgeRouterPolicy>(),
    postureChecks: new EntityTable<PostureCheck>(),
  }
  readonly configTypes: ReadTable<ConfigType> = this.t.configTypes
  readonly configs: ReadTable<Config> = this.t.configs
  readonly services: ReadTable<Service> = this.t.services
  /** Edge and fabric routers: one name index, as in the real controller's routers store. */
  readonly routers: ReadTable<Router> = this.t.routers
  /** The edge routers only (the ones policies select). */
  readonly edgeRouters: ReadTable<Router> = this.t.edgeRouters
  readonly terminators: ReadTable<Terminator> = this.t.terminators
  readonly servicePolicies: ReadTable<ServicePolicy> = this.t.servicePolicies
  readonly edgeRouterPolicies: ReadTable<EdgeRouterPolicy> = this.t.edgeRouterPolicies
  readonly serviceEdgeRouterPolicies: ReadTable<ServiceEdgeRouterPolicy> = this.t.serviceEdgeRouterPolicies
  readonly postureChecks: ReadTable<PostureCheck> = this.t.postureChecks
  /** Compiled config type schemas (compiled on first use). */
  readonly schemas = new ConfigSchemaCache()

  private changes = 0
  private readonly configsByType = new MultiIndex()
  private readonly servicesByConfig = new MultiIndex()
  private readonly terminatorsByService = new MultiIndex()
  private readonly terminatorsByRouter = new MultiIndex()
  private readonly routerByToken = new Map<string, string>()
  private readonly routerByFingerprint = new Map<string, string>()
  private readonly overrides = new Map<string, ServiceConfigOverride>()
  private readonly overrideKeysByIdentity = new MultiIndex()
  private readonly overrideKeysByService = new MultiIndex()
  private readonly overrideKeysByConfig = new MultiIndex()
  /** Entity kind → entity id → `<policyKind>/<policyId>` of the policies naming it with `@id`. */
  private readonly refs: Record<EntityKind, MultiIndex> = {
    identity: new MultiIndex(),
    service: new MultiIndex(),
    router: new MultiIndex(),
    'posture-check': new MultiIndex(),
  }

  // --- reads (PolicyGraphReads) ---

  config(id: string): Config | undefined {
    return this.configs.get(id)
  }
  configIdByName(name: string): string | undefined {
    return this.configs.idByName(name)
  }
  configType(id: string): ConfigType | undefined {
    return this.configTypes.get(id)
  }
  configTypeIdByName(name: string): string | undefined {
    return this.configTypes.idByName(name)
  }
  /** Configs of a config type, in id order. */
  configsOfType(configTypeId: string): Config[] {
    return sortedRecords(this.configsByType.get(configTypeId), this.configs)
  }
  /** Services listing a config, in id order. */
  servicesUsingConfig(configId: string): Service[] {
    return sortedRecords(this.servicesByConfig.get(configId), this.services)
  }
  serviceIdsUsingConfig(configId: string): ReadonlySet<string> {
    return this.servicesByConfig.get(configId)
  }
  terminatorsOfService(serviceId: string): Terminator[] {
    return sortedRecords(this.terminatorsByService.get(serviceId), this.terminators)
  }
  routerOfEnrollmentToken(token: string): Router | undefined {
    const id = this.routerByToken.get(token)
    return id === undefined ? undefined : this.routers.get(id)
  }
  routerOfFingerprint(fingerprint: string): Router | undefined {
    const id = this.routerByFingerprint.get(fingerprint)
    return id === undefined ? undefined : this.routers.get(id)
  }
  private unindexRouter(prev: Router | undefined): void {
    if (prev?.enrollment) this.routerByToken.delete(prev.enrollment.token)
    if (prev?.fingerprint) this.routerByFingerprint.delete(prev.fingerprint)
  }
  terminatorsOfRouter(routerId: string): Terminator[] {
    return sortedRecords(this.terminatorsByRouter.get(routerId), this.terminators)
  }
  /** The identity's overrides, ordered by service id then config id. */
  overridesOf(identityId: string): ServiceConfigOverride[] {
    return this.overridesAt(this.overrideKeysByIdentity.get(identityId))
  }
  overridesOfService(serviceId: string): ServiceConfigOverride[] {
    return this.overridesAt(this.overrideKeysByService.get(serviceId))
  }
  overridesUsingConfig(configId: string): ServiceConfigOverride[] {
    return this.overridesAt(this.overrideKeysByConfig.get(configId))
  }
  override(identityId: string, serviceId: string, configTypeId: string): ServiceConfigOverride | undefined {
    return this.overrides.get(overrideKey({ identityId, serviceId }, configTypeId))
  }
  /** The config the identity uses for the service instead of the service's own config of that type, if any. */
  overrideConfig(identityId: string, serviceId: string, configTypeId: string): Config | undefined {
    const o = this.override(identityId, serviceId, configTypeId)
    return o ? this.configs.get(o.configId) : undefined
  }
  get version(): number {
    return this.changes
  }
  /** Called for every message the actor handles (policy-graph-actor.ts), whether it changes something or not. */
  noteHandled(): void {
    this.changes++
  }

  get overrideCount(): number {
    return this.overrides.size
  }
  /** Policies naming entity `id` of `kind` with `@id` in the role list for that kind. */
  policiesReferencing(kind: EntityKind, id: string): PolicyRef[] {
    return [...this.refs[kind].get(id)].sort().map((key) => {
      const slash = key.indexOf('/')
      return { kind: key.slice(0, slash) as PolicyKind, id: key.slice(slash + 1) }
    })
  }
  /** A stored policy by kind and id. */
  policy(kind: PolicyKind, id: string): AnyPolicy | undefined {
    switch (kind) {
      case 'service-policy': {
        const policy = this.servicePolicies.get(id)
        return policy && { kind, policy }
      }
      case 'edge-router-policy': {
        const policy = this.edgeRouterPolicies.get(id)
        return policy && { kind, policy }
      }
      case 'service-edge-router-policy': {
        const policy = this.serviceEdgeRouterPolicies.get(id)
        return policy && { kind, policy }
      }
      default:
        return assertNever(kind, 'policy kind')
    }
  }
  /** Every policy as the resolver indexes it (service policies, then edge router policies, then SERPs; id order). */
  indexPolicies(): IndexPolicy[] {
    return [
      ...this.servicePolicies.all().map(servicePolicyIndex),
      ...this.edgeRouterPolicies.all().map(edgeRouterPolicyIndex),
      ...this.serviceEdgeRouterPolicies.all().map(serviceEdgeRouterPolicyIndex),
    ]
  }

  // --- writes (the actor's handlers only) ---

  putConfigType(next: ConfigType): void {
    const prev = this.configTypes.get(next.id)
    if (prev && prev.schema !== next.schema) this.schemas.forget(next.id)
    this.t.configTypes.put(next)
  }
  removeConfigType(id: string): void {
    this.t.configTypes.remove(id)
    this.schemas.forget(id)
  }
  putConfig(next: Config): void {
    const prev = this.configs.get(next.id)
    if (prev) this.configsByType.delete(prev.configTypeId, prev.id)
    this.t.configs.put(next)
    this.configsByType.add(next.configTypeId, next.id)
  }
  removeConfig(id: string): void {
    const prev = this.t.configs.remove(id)
    if (prev) this.configsByType.delete(prev.configTypeId, id)
  }
  putService(next: Service): void {
    const prev = this.services.get(next.id)
    for (const c of prev?.configs ?? []) this.servicesByConfig.delete(c, next.id)
    this.t.services.put(next)
    for (const c of next.configs) this.servicesByConfig.add(c, next.id)
  }
  removeService(id: string): void {
    const prev = this.t.services.remove(id)
    for (const c of prev?.configs ?? []) this.servicesByConfig.delete(c, id)
  }
  putRouter(next: Router): void {
    this.unindexRouter(this.routers.get(next.id))
    if (next.enrollment) this.routerByToken.set(next.enrollment.token, next.id)
    if (next.fingerprint) this.routerByFingerprint.set(next.fingerprint, next.id)
    this.t.routers.put(next)
    if (next.isEdge) this.t.edgeRouters.put(next)
    else this.t.edgeRouters.remove(next.id)
  }
  removeRouter(id: string): void {
    this.unindexRouter(this.routers.get(id))
    this.t.routers.remove(id)
    this.t.edgeRouters.remove(id)
  }
  putTerminator(next: Terminator): void {
    const prev = this.terminators.get(next.id)
    if (prev) {
      this.terminatorsByService.delete(prev.serviceId, prev.id)
      this.terminatorsByRouter.delete(prev.routerId, prev.id)
    }
    this.t.terminators.put(next)
    this.terminatorsByService.add(next.serviceId, next.id)
    this.terminatorsByRouter.add(next.routerId, next.id)
  }
  removeTerminator(id: string): void {
    const prev = this.t.terminators.remove(id)
    if (!prev) return
    this.terminatorsByService.delete(prev.serviceId, id)
    this.terminatorsByRouter.delete(prev.routerId, id)
  }
  putServicePolicy(next: ServicePolicy): void {
    this.unref('service-policy', this.servicePolicies.get(next.id))
    this.t.servicePolicies.put(next)
    this.ref('service-policy', next)
  }
  removeServicePolicy(id: string): void {
    this.unref('service-policy', this.t.servicePolicies.remove(id))
  }
  putEdgeRouterPolicy(next: EdgeRouterPolicy): void {
    this.unref('edge-router-policy', this.edgeRouterPolicies.get(next.id))
    this.t.edgeRouterPolicies.put(next)
    this.ref('edge-router-policy', next)
  }
  removeEdgeRouterPolicy(id: string): void {
    this.unref('edge-router-policy', this.t.edgeRouterPolicies.remove(id))
  }
  putServiceEdgeRouterPolicy(next: ServiceEdgeRouterPolicy): void {
    this.unref('service-edge-router-policy', this.serviceEdgeRouterPolicies.get(next.id))
    this.t.serviceEdgeRouterPolicies.put(next)
    this.ref('service-edge-router-policy', next)
  }
  removeServiceEdgeRouterPolicy(id: string): void {
    this.unref('service-edge-router-policy', this.t.serviceEdgeRouterPolicies.remove(id))
  }
  putPostureCheck(next: PostureCheck): void {
    this.t.postureChecks.put(next)
  }
  removePostureCheck(id: string): void {
    this.t.postureChecks.remove(id)
  }
  /** Stores an override under its (identity, service, config type) key; `configTypeId` is the config's type. */
  putOverride(o: ServiceConfigOverride, configTypeId: string): void {
    const key = overrideKey(o, configTypeId)
    this.removeOverrideKey(key)
    this.overrides.set(key, o)
    this.overrideKeysByIdentity.add(o.identityId, key)
    this.overrideKeysByService.add(o.serviceId, key)
    this.overrideKeysByConfig.add(o.configId, key)
  }
  /** Removes the override stored under `key`; returns it. */
  removeOverrideKey(key: string): ServiceConfigOverride | undefined {
    const prev = this.overrides.get(key)
    if (!prev) return undefined
    this.overrides.delete(key)
    this.overrideKeysByIdentity.delete(prev.identityId, key)
    this.overrideKeysByService.delete(prev.serviceId, key)
    this.overrideKeysByConfig.delete(prev.configId, key)
    return prev
  }
  /** Storage keys of overrides, for handlers that delete them. */
  overrideKeysOf(by: 'identity' | 'service' | 'config', id: string): string[] {
    const index = by === 'identity' ? this.overrideKeysByIdentity : by === 'service' ? this.overrideKeysByService : this.overrideKeysByConfig
    return [...index.get(id)].sort()
  }

  private overridesAt(keys: ReadonlySet<string>): ServiceConfigOverride[] {
    return [...keys]
      .map((k) => this.overrides.get(k)!)
      .sort((a, b) => cmp(a.serviceId, b.serviceId) || cmp(a.configId, b.configId))
  }

  private ref(kind: PolicyKind, p: RoleFields): void {
    this.eachRef(kind, p, (entityKind, id) => this.refs[entityKind].add(id, `${kind}/${p.id}`))
  }
  private unref(kind: PolicyKind, p: RoleFields | undefined): void {
    if (p) this.eachRef(kind, p, (entityKind, id) => this.refs[entityKind].delete(id, `${kind}/${p.id}`))
  }
  private eachRef(kind: PolicyKind, p: RoleFields, fn: (entityKind: EntityKind, id: string) => void): void {
    for (const [field, entityKind] of ROLE_FIELDS[kind]) {
      for (const id of splitRoles(p[field] ?? []).ids) fn(entityKind, id)
    }
  }
}

/** The role fields of each policy kind and the entity kind each selects. */
export const ROLE_FIELDS: Record<PolicyKind, readonly (readonly [RoleField, EntityKind])[]> = {
  'service-policy': [
    ['identityRoles', 'identity'],
    ['serviceRoles', 'service'],
    ['postureCheckRoles', 'posture-check'],
  ],
  'edge-router-policy': [
    ['identityRoles', 'identity'],
    ['edgeRouterRoles', 'router'],
  ],
  'service-edge-router-policy': [
    ['serviceRoles', 'service'],
    ['edgeRouterRoles', 'router'],
  ],
}

export type RoleField = 'identityRoles' | 'serviceRoles' | 'postureCheckRoles' | 'edgeRouterRoles'
type RoleFields = { id: string } & Partial<Record<RoleField, readonly string[]>>

export function servicePolicyIndex(p: ServicePolicy): IndexPolicy {
  return {
    id: p.id,
    kind: 'service-policy',
    type: p.type,
    semantic: p.semantic,
    identityRoles: p.identityRoles,
    serviceRoles: p.serviceRoles,
    postureCheckRoles: p.postureCheckRoles,
  }
}
export function edgeRouterPolicyIndex(p: EdgeRouterPolicy): IndexPolicy {
  return { id: p.id, kind: 'edge-router-policy', semantic: p.semantic, identityRoles: p.identityRoles, edgeRouterRoles: p.edgeRouterRoles }
}
export function serviceEdgeRouterPolicyIndex(p: ServiceEdgeRouterPolicy): IndexPolicy {
  return { id: p.id, kind: 'service-edge-router-policy', semantic: p.semantic, serviceRoles: p.serviceRoles, edgeRouterRoles: p.edgeRouterRoles }
}

function sortedRecords<T extends { id: string }>(ids: ReadonlySet<string>, t: ReadTable<T>): T[] {
  return [...ids].sort().map((id) => t.get(id)!)
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
