/**
 * Shared plumbing of the policy-graph Management routes: the five CRUD operations of a resource, sub-lists of ids
 * taken from the policy index or the graph, and the list spec of every entity kind those lists show.
 * It owns no rule: the graph actor decides, the mappers render.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { PolicyGraphActor } from '../../../actors/policy-graph/policy-graph-actor.ts'
import type { PolicyGraphMsg } from '../../../actors/policy-graph/policy-graph-messages.ts'
import type { ReadTable } from '../../../lib/entity-table.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { PolicyReads } from '../../../domain/policy/policy-reads.ts'
import type {
  Config,
  ConfigType,
  EdgeRouterPolicy,
  EntityKind,
  Router,
  Service,
  ServiceEdgeRouterPolicy,
  ServicePolicy,
  Terminator,
} from '../../../domain/policy/policy-types.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { ListQuery, RoleListQuery } from '../../../../schemas/common.ts'
import { created, ok, okEmpty } from '../../http-envelope.ts'
import { respondList, type ListSpec } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { configMap, postureQueries, selectConfigTypes, type ConfigLookups } from '../../mappers/client-service-mapper.ts'
import { toPostureQueryEntries } from '../../mappers/posture-mapper.ts'
import type { PostureEvaluator, PostureSession } from '../../../flows/posture/posture-evaluate.ts'
import type { Permission } from '../../../domain/policy/policy-reads.ts'
import { CONFIG_SYMBOLS, CONFIG_TYPE_SYMBOLS, toConfigDetail, toConfigRow, toConfigTypeDetail, toConfigTypeRow } from '../../mappers/config-mapper.ts'
import {
  EDGE_ROUTER_POLICY_SYMBOLS,
  SERVICE_EDGE_ROUTER_POLICY_SYMBOLS,
  SERVICE_POLICY_SYMBOLS,
  toEdgeRouterPolicyDetail,
  toEdgeRouterPolicyRow,
  toServiceEdgeRouterPolicyDetail,
  toServiceEdgeRouterPolicyRow,
  toServicePolicyDetail,
  toServicePolicyRow,
  type NameOf,
} from '../../mappers/policy-mapper.ts'
import type { RouterPresenceReads } from '../../../domain/router/router-presence.ts'
import { EDGE_ROUTER_SYMBOLS, ROUTER_SYMBOLS, toEdgeRouterDetail, toEdgeRouterRow, toRouterDetail, toRouterRow } from '../../mappers/router-mapper.ts'
import { SERVICE_SYMBOLS, toServiceDetail, toServiceRow } from '../../mappers/service-mapper.ts'
import { TERMINATOR_SYMBOLS, toTerminatorDetail, toTerminatorRow } from '../../mappers/terminator-mapper.ts'
import { changeOf } from '../route-change.ts'
export { identityListing } from './identity-routes.ts'

/** What every policy-graph route factory takes. */
export interface GraphRouteDeps {
  graph: PolicyGraphActor
  identities: IdentityActor
  sessions: SessionRegistryActor
  reads: PolicyReads
  clock: Clock
  /** Posture of the caller's session, for the postureQueries of the services it sees. */
  posture: PostureEvaluator
  /** Which routers are connected to this node, and what they reported (the control plane). */
  presence: RouterPresenceReads
}

/** A list spec plus a lookup by id, so the same spec serves the top-level list and every sub-list of that kind. */
export interface Listing<T> extends ListSpec<T> {
  get(id: string): T | undefined
}

type Hint = { field: string; values: string[] } | undefined

/** Candidates of a graph table for an index hint on id, name or roleAttributes (all records in id order without one). */
export function tableCandidates<T extends { id: string }>(table: ReadTable<T>, hint: Hint): Iterable<T> {
  if (!hint) return table.all()
  const out = new Map<string, T>()
  for (const v of hint.values) {
    if (hint.field === 'id') {
      const t = table.get(v)
      if (t) out.set(t.id, t)
    } else if (hint.field === 'name') {
      const t = table.byName(v)
      if (t) out.set(t.id, t)
    } else {
      for (const id of table.idsWithRole(v)) out.set(id, table.get(id)!)
    }
  }
  return out.values()
}

/**
 * The actor fields of a request body: the listed keys that are present (absent stays absent, so a patch leaves the
 * rest alone), each under its actor name (`rename` maps wire → actor, e.g. `service` → `serviceId`).
 */
export function presentFields<F>(body: object, keys: readonly string[], rename: Record<string, string> = {}): F {
  const out: Record<string, unknown> = {}
  for (const k of keys) {
    const v = (body as Record<string, unknown>)[k]
    if (v !== undefined) out[rename[k] ?? k] = v
  }
  return out as F
}

/** The record `id` names, or 404. */
export function found<T>(t: T | undefined): T {
  if (t === undefined) throw ApiError.notFound()
  return t
}

/** Names for `*RolesDisplay`: identities from the identity actor, services, edge routers and posture checks from the graph. */
export function nameOf(deps: Pick<GraphRouteDeps, 'graph' | 'identities'>): NameOf {
  return (kind: EntityKind, id: string) => {
    if (kind === 'identity') return deps.identities.snapshot().identity(id)?.name
    const g = deps.graph.snapshot()
    if (kind === 'service') return g.services.get(id)?.name
    if (kind === 'router') return g.edgeRouters.get(id)?.name
    return g.postureChecks.get(id)?.name
  }
}

/** A list of the entities whose ids `ids` gives for the parent in the path (404 when the parent is unknown). */
export function subListRoute<T>(def: {
  path: string
  tag: string
  summary: string
  response: TSchema
  parent(id: string): unknown
  /** The query schema when the list takes more than ListQuery (ListQuery's members and more). */
  query?: typeof ListQuery
  /** Ids in ascending order. */
  ids(parentId: string, ctx: RouteCtx<unknown, Record<string, string | undefined>>): readonly string[]
  listing(ctx: RouteCtx): Listing<T>
}): RouteDef {
  return route({
    method: 'GET', path: def.path, apis: ['management'], access: 'admin', tag: def.tag, summary: def.summary,
    query: def.query ?? ListQuery, response: def.response,
    handle: (ctx) => {
      if (def.parent(ctx.params.id) === undefined) throw ApiError.notFound()
      const listing = def.listing(ctx as RouteCtx)
      const ids = def.ids(ctx.params.id, ctx)
      return respondList(ctx.query, {
        symbols: listing.symbols,
        presortedById: true,
        candidates: () => ids.map((id) => listing.get(id)).filter((t): t is T => t !== undefined),
        toRow: listing.toRow,
        toView: listing.toView,
      })
    },
  })
}

/**
 * A resource's write bodies: the schemas of create, put and patch, and the mapping of a checked body to the actor's
 * fields. The routes and policy previews (insight-routes.ts) share it, so a preview reads a body as the write would.
 */
export interface WriteBodies {
  schemas: { create: TSchema; put: TSchema; patch: TSchema }
  /** `operation` absent: as the resource's put and patch map it. */
  fields(body: object, operation?: 'create' | 'update' | 'patch'): object
}

/** Graph aggregates whose writes follow `<agg>.create|update|delete` with plain input fields. */
export type GraphAggregate = 'configType' | 'config' | 'service' | 'terminator' | 'servicePolicy' | 'edgeRouterPolicy' | 'serviceEdgeRouterPolicy' | 'postureCheck'

/** The create, update and remove calls of a CrudDef that only forward the body's fields to the graph actor. */
export function graphWrites(deps: Pick<GraphRouteDeps, 'graph'>, agg: GraphAggregate, toFields: (body: object) => object) {
  const ask = (msg: object) => deps.graph.ask(msg as PolicyGraphMsg)
  return {
    create: (ctx: RouteCtx<object>) => ask({ type: `${agg}.create`, input: toFields(ctx.body), change: changeOf(ctx) }) as Promise<{ id: string }>,
    update: async (ctx: RouteCtx<object>, replace: boolean) => {
      await ask({ type: `${agg}.update`, id: ctx.params.id, input: toFields(ctx.body), replace, change: changeOf(ctx) })
    },
    remove: async (ctx: RouteCtx) => {
      await ask({ type: `${agg}.delete`, id: ctx.params.id, change: changeOf(ctx) })
    },
  }
}

/** One resource's CRUD: paths, schemas, the list spec, and the actor calls. */
export interface CrudDef<T, C extends TSchema, U extends TSchema, P extends TSchema> {
  tag: string
  /** `/services` and `/services/:id`. */
  routes: { list: string; item: string }
  /** Entity path of create links (`services`). */
  entity: string
  /** For summaries: `service`. */
  noun: string
  /** Lists that honour roleFilter/roleSemantic. */
  roleFilter?: boolean
  /** The list's query schema when it takes more than ListQuery, or RoleListQuery with roleFilter (their members and more). */
  listQuery?: typeof RoleListQuery
  /** PUT, PATCH and DELETE of an item are on the Client API too (the client spec has them), with the same admin rule. */
  clientWrites?: boolean
  detail: TSchema
  listing(ctx: RouteCtx): Listing<T>
  bodies: { create: C; put: U; patch: P }
  create(ctx: RouteCtx<Static<C>>): Promise<{ id: string }>
  update(ctx: RouteCtx<Static<U> | Static<P>>, replace: boolean): Promise<void>
  remove(ctx: RouteCtx): Promise<void>
}

export function crudRoutes<T, C extends TSchema, U extends TSchema, P extends TSchema>(def: CrudDef<T, C, U, P>): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: def.tag }
  const writes = { ...common, apis: def.clientWrites ? (['management', 'client'] as const) : common.apis }
  const update = (replace: boolean) => async (ctx: RouteCtx<Static<U> | Static<P>>) => {
    await def.update(ctx, replace)
    return okEmpty()
  }
  return [
    route({
      ...common, method: 'GET', path: def.routes.list, summary: `List ${def.noun}s`,
      query: def.listQuery ?? (def.roleFilter ? RoleListQuery : ListQuery), response: def.detail,
      handle: (ctx) => {
        const listing = def.listing(ctx as RouteCtx)
        return respondList(ctx.query, def.roleFilter ? listing : { ...listing, roleOf: undefined })
      },
    }),
    route({
      ...common, method: 'POST', path: def.routes.list, summary: `Create a ${def.noun}`, body: def.bodies.create, successStatus: 201,
      handle: async (ctx) => created(def.entity, (await def.create(ctx as RouteCtx<Static<C>>)).id),
    }),
    route({
      ...common, method: 'GET', path: def.routes.item, summary: `Get a ${def.noun}`, response: def.detail,
      handle: (ctx) => {
        const listing = def.listing(ctx as RouteCtx)
        return ok(listing.toView(found(listing.get(ctx.params.id))))
      },
    }),
    route({ ...writes, method: 'PUT', path: def.routes.item, summary: `Update all fields of a ${def.noun}`, body: def.bodies.put, handle: update(true) }),
    route({ ...writes, method: 'PATCH', path: def.routes.item, summary: `Update the given fields of a ${def.noun}`, body: def.bodies.patch, handle: update(false) }),
    route({
      ...writes, method: 'DELETE', path: def.routes.item, summary: `Delete a ${def.noun}`,
      handle: async (ctx) => {
        await def.remove(ctx as RouteCtx)
        return okEmpty()
      },
    }),
  ]
}

const NAMED = ['id', 'name'] as const
const ROLED = ['id', 'name', 'roleAttributes'] as const

/** The listing of a graph table: id order, index hints on the `indexed` fields, lookups by id. */
export function tableListing<T extends { id: string }>(table: ReadTable<T>, spec: Omit<Listing<T>, 'get' | 'candidates' | 'presortedById'>): Listing<T> {
  return { ...spec, presortedById: true, get: (id) => table.get(id), candidates: (hint) => tableCandidates(table, hint) }
}

/**
 * Services as the Management API shows them to the caller: `permissions` and `postureQueries` are the caller's
 * (["Invalid"] when it has no permission); `config` holds the config types named by the `configTypes` query (comma separated, names or ids, or `all`).
 * With `asIdentity` (an identity's id or name; not in the spec, the official CLI's `--as-identity`) the list is still
 * every service, as the real controller lists it, but permissions, config overrides and posture are that identity's,
 * its posture judged on no reported data (posture data belongs to API sessions here); an unknown identity is 404.
 */
export function serviceListing(deps: GraphRouteDeps, ctx: RouteCtx): Listing<Service> {
  const g = deps.graph.snapshot()
  const viewer = viewerOf(deps, ctx)
  const asked = ctx.query.configTypes
  const lookups: ConfigLookups = {
    config: (id) => g.config(id),
    configType: (id) => g.configType(id),
    configTypeIdByName: (n) => g.configTypes.idByName(n),
    overrideConfig: (i, s, t) => g.overrideConfig(i, s, t),
  }
  const selection = selectConfigTypes(asked === undefined ? [] : Array.isArray(asked) ? asked : [asked], lookups)
  const now = deps.clock.now()
  // the viewer's posture for the service, as the client list shows it (placeholders while no check exists)
  const posture = (serviceId: string, permissions: readonly Permission[]) =>
    deps.posture.anyChecks()
      ? permissions.flatMap((type) => toPostureQueryEntries(deps.posture.policies(viewer.session, serviceId, type, now)))
      : postureQueries(permissions)
  return tableListing(g.services, {
    symbols: SERVICE_SYMBOLS,
    indexed: ROLED,
    toRow: toServiceRow,
    toView: (s) => {
      const permissions = deps.reads.permissionsOf(viewer.id, s.id)
      return toServiceDetail(s, {
        permissions,
        config: configMap(s, viewer.id, selection, lookups) as Record<string, Record<string, unknown>>,
        postureQueries: posture(s.id, permissions),
      })
    },
    roleOf: (s) => s,
  })
}

/** Whom a service list is for: the caller, or the identity its `asIdentity` query names (by id, then by name). */
function viewerOf(deps: GraphRouteDeps, ctx: RouteCtx): { id: string; session: PostureSession } {
  const as = ctx.query.asIdentity
  if (typeof as !== 'string' || as === '') return { id: ctx.auth.identity.id, session: ctx.auth.session }
  const identities = deps.identities.snapshot()
  const identity = identities.identity(as) ?? identities.identity(identities.identityIdByName(as) ?? '')
  if (!identity) throw ApiError.notFound()
  // no API session has the empty id, so no posture data is found for it
  return { id: identity.id, session: { id: '', identityId: identity.id, isMfaComplete: false } }
}

export function edgeRouterListing(deps: GraphRouteDeps): Listing<Router> {
  const p = deps.presence
  return tableListing(deps.graph.snapshot().edgeRouters, {
    symbols: EDGE_ROUTER_SYMBOLS,
    indexed: ROLED,
    toRow: (r) => toEdgeRouterRow(r, p.presenceOf(r.id)),
    toView: (r) => toEdgeRouterDetail(r, p.presenceOf(r.id)),
    roleOf: (r) => r,
  })
}

/** Edge and fabric routers alike (the fabric view). */
export function routerListing(deps: GraphRouteDeps): Listing<Router> {
  const p = deps.presence
  return tableListing(deps.graph.snapshot().routers, {
    symbols: ROUTER_SYMBOLS,
    indexed: NAMED,
    toRow: (r) => toRouterRow(r, p.presenceOf(r.id)),
    toView: (r) => toRouterDetail(r, p.presenceOf(r.id)),
  })
}

export function configTypeListing(deps: GraphRouteDeps): Listing<ConfigType> {
  return tableListing(deps.graph.snapshot().configTypes, { symbols: CONFIG_TYPE_SYMBOLS, indexed: NAMED, toRow: toConfigTypeRow, toView: toConfigTypeDetail })
}

export function configListing(deps: GraphRouteDeps): Listing<Config> {
  const g = deps.graph.snapshot()
  return tableListing(g.configs, {
    symbols: CONFIG_SYMBOLS,
    indexed: NAMED,
    toRow: toConfigRow,
    toView: (c) => toConfigDetail(c, g.configTypes.get(c.configTypeId)?.name ?? c.configTypeId),
  })
}

export function terminatorListing(deps: GraphRouteDeps): Listing<Terminator> {
  const g = deps.graph.snapshot()
  const name = (t: { name: string } | undefined, id: string) => t?.name ?? id
  return tableListing(g.terminators, {
    symbols: TERMINATOR_SYMBOLS,
    indexed: ['id'],
    toRow: toTerminatorRow,
    toView: (t) => toTerminatorDetail(t, { service: name(g.services.get(t.serviceId), t.serviceId), router: name(g.routers.get(t.routerId), t.routerId) }),
  })
}

export function servicePolicyListing(deps: GraphRouteDeps): Listing<ServicePolicy> {
  const names = nameOf(deps)
  return tableListing(deps.graph.snapshot().servicePolicies, {
    symbols: SERVICE_POLICY_SYMBOLS,
    indexed: NAMED,
    toRow: (p) => toServicePolicyRow(p, (kind) => deps.reads.membersOf(p.id, kind)),
    toView: (p) => toServicePolicyDetail(p, names),
  })
}

export function edgeRouterPolicyListing(deps: GraphRouteDeps): Listing<EdgeRouterPolicy> {
  const names = nameOf(deps)
  return tableListing(deps.graph.snapshot().edgeRouterPolicies, { symbols: EDGE_ROUTER_POLICY_SYMBOLS, indexed: NAMED, toRow: toEdgeRouterPolicyRow, toView: (p) => toEdgeRouterPolicyDetail(p, names) })
}

export function serviceEdgeRouterPolicyListing(deps: GraphRouteDeps): Listing<ServiceEdgeRouterPolicy> {
  const names = nameOf(deps)
  return tableListing(deps.graph.snapshot().serviceEdgeRouterPolicies, {
    symbols: SERVICE_EDGE_ROUTER_POLICY_SYMBOLS,
    indexed: NAMED,
    toRow: toServiceEdgeRouterPolicyRow,
    toView: (p) => toServiceEdgeRouterPolicyDetail(p, names),
  })
}
