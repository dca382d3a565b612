/**
 * Client API: the services the caller may use (from the precomputed index: a list reads, never evaluates, policy),
 * their edge routers and terminators, the caller's edge routers, and the service-update marker.
 */
import type { PolicyGraphActor } from '../../../actors/policy-graph/policy-graph-actor.ts'
import type { Permission, PolicyReads } from '../../../domain/policy/policy-reads.ts'
import type { Router, Service } from '../../../domain/policy/policy-types.ts'
import type { SessionTokens } from '../../../flows/sessions/session-token.ts'
import type { PostureEvaluator } from '../../../flows/posture/posture-evaluate.ts'
import type { ApiSession } from '../../../domain/session/session-types.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { ListQuery, ServiceListQuery } from '../../../../schemas/common.ts'
import { recordsOf } from '../../../domain/query/index.ts'
import { listBody, ok, okBody, okBytes, okJson, type JsonBody } from '../../http-envelope.ts'
import { AnswerCache } from '../../http-answer-cache.ts'
import { listPage, respondList, selectPage } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { iso } from '../../mappers/common-mapper.ts'
import { PostureQueriesJson } from '../../mappers/posture-mapper.ts'
import { SERVICE_SYMBOLS, toServiceRow } from '../../mappers/service-mapper.ts'
import { EDGE_ROUTER_SYMBOLS, toEdgeRouterRow } from '../../mappers/router-mapper.ts'
import type { RouterPresenceReads } from '../../../domain/router/router-presence.ts'
import { TERMINATOR_SYMBOLS, toTerminatorDetail, toTerminatorRow } from '../../mappers/terminator-mapper.ts'
import {
  selectConfigTypes,
  toClientEdgeRouterDetail,
  toClientEdgeRouterProps,
  type ConfigLookups,
} from '../../mappers/client-service-mapper.ts'
import { ClientServiceJson, type ClientServiceViewer } from '../../mappers/client-service-json.ts'

export interface ClientServiceDeps {
  graph: PolicyGraphActor
  reads: PolicyReads
  tokens: SessionTokens
  clock: Clock
  startedAt: number
  posture: PostureEvaluator
  /** Told the number of services each service list could show its caller (metrics); absent = nobody listens. */
  listed?: (count: number) => void
  /** Which routers are connected to this node (the control plane). */
  presence: RouterPresenceReads
}

/**
 * Bytes of service list answers kept for repeated listings (AnswerCache): at the 'large-posture' scale an answer is
 * about 1.2 MiB, so this keeps the latest pages of two dozen API sessions that list again and again.
 */
export const SERVICE_LIST_CACHE_BYTES = 32 * 1024 * 1024

/** Binary search in a sorted id list. */
function hasSorted(ids: readonly string[], id: string): boolean {
  let lo = 0
  let hi = ids.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ids[mid]! < id) lo = mid + 1
    else hi = mid
  }
  return lo < ids.length && ids[lo] === id
}

export function clientServiceRoutes(deps: ClientServiceDeps): RouteDef[] {
  // the graph's read interface answers every config lookup the rendering needs
  const lookups = (): ConfigLookups => deps.graph.snapshot()
  /** A visible service or 404 (a service the caller may not use does not exist for it). */
  const visible = (ctx: RouteCtx<unknown, unknown>, id: string): Service => {
    const s = deps.graph.snapshot().services.get(id)
    if (!s || deps.reads.permissionsOf(ctx.auth.identity.id, id).length === 0) throw ApiError.notFound()
    return s
  }
  const rendered = new ClientServiceJson()
  /**
   * The postureQueries text of each row of one rendering (at most two permissions per row: no arrays made per row);
   * `state.timed` turns true once a row holds an MFA check.
   */
  const postureOf = (session: ApiSession, now: number, state: { timed: boolean }) => {
    const judge = deps.posture.forSession(session, now)
    return (s: Service, permissions: readonly Permission[]): Uint8Array => {
      const first = permissions.length > 0 ? judge(s.id, permissions[0]!) : undefined
      const second = permissions.length > 1 ? judge(s.id, permissions[1]!) : undefined
      if ((first !== undefined && deps.posture.isTimed(first)) || (second !== undefined && deps.posture.isTimed(second))) state.timed = true
      return postureTexts.textOf(first, second)
    }
  }
  const postureTexts = new PostureQueriesJson()
  const answers = new AnswerCache(SERVICE_LIST_CACHE_BYTES)
  /**
   * Writes a service's JSON text as the session's identity sees it, for the config types it asked for; `timed` turns
   * true once a row depends on the time (an MFA check's timeout), which no kept answer may.
   */
  const jsonFor = (session: ApiSession, configTypes: readonly string[]) => {
    const state = { timed: false }
    const l = lookups()
    const identityId = session.identityId
    const now = deps.clock.now()
    const viewer: ClientServiceViewer = {
      identityId,
      selection: selectConfigTypes(configTypes, l),
      lookups: l,
      overridden: new Set(deps.graph.snapshot().overridesOf(identityId).map((o) => o.serviceId)),
      postureQueries: deps.posture.anyChecks() ? postureOf(session, now, state) : undefined,
    }
    const write = (s: Service, body: JsonBody) => rendered.write(s, deps.reads.permissionsOf(identityId, s.id), viewer, body)
    return Object.assign(write, { timed: () => state.timed })
  }
  const askedTypes = (ctx: RouteCtx<unknown, { configTypes?: string | string[] }>): readonly string[] => {
    const q = ctx.query.configTypes
    if (q === undefined) return ctx.auth.session.configTypes
    return Array.isArray(q) ? q : [q]
  }
  const routersView = (ids: readonly string[]): Router[] => {
    const g = deps.graph.snapshot()
    return ids.map((id) => g.edgeRouters.get(id)).filter((r): r is Router => r !== undefined)
  }

  return [
    route({
      method: 'GET', path: '/services', apis: ['client'], access: 'session', tag: 'Service',
      summary: 'List the services the caller may Dial or Bind', query: ServiceListQuery,
      handle: (ctx) => {
        const identityId = ctx.auth.identity.id
        const session = ctx.auth.session
        const types = askedTypes(ctx as RouteCtx<unknown, { configTypes?: string | string[] }>)
        const g = deps.graph.snapshot()
        // an answer depends on the session (identity, MFA state, posture data), what it asked, the graph and the index
        const key = `${session.id}\n${types.join('\n')}\n${JSON.stringify(ctx.query)}`
        const stamp = [g.version, deps.reads.version(), ...deps.posture.inputsOf(session)]
        const kept = answers.get(key, stamp)
        if (kept) {
          deps.listed?.(deps.reads.servicesOfIdentity(identityId).length)
          return okBytes(kept)
        }
        const ids = deps.reads.servicesOfIdentity(identityId)
        deps.listed?.(ids.length)
        const { page, result } = selectPage(ctx.query, {
          symbols: SERVICE_SYMBOLS,
          indexed: ['id', 'name'],
          presortedById: true,
          candidates: (hint) => {
            if (!hint) return recordsOf(ids, (id) => g.services.get(id))
            const found = new Set<string>()
            for (const v of hint.values) {
              const id = hint.field === 'id' ? v : g.services.idByName(v)
              if (id !== undefined && hasSorted(ids, id)) found.add(id)
            }
            return [...found].sort().map((id) => g.services.get(id)!).filter(Boolean)
          },
          toRow: toServiceRow,
          roleOf: (s) => s,
        })
        const write = jsonFor(session, types)
        const body = listBody(page, write, result, Object.keys(SERVICE_SYMBOLS))
        if (write.timed() || !answers.repeated(key, stamp)) return okBody(body)
        const bytes = body.finish(true).bytes
        answers.put(key, stamp, bytes)
        return okBytes(bytes)
      },
    }),
    route({
      method: 'GET', path: '/services/:id', apis: ['client'], access: 'session', tag: 'Service', summary: 'A service the caller may use',
      handle: (ctx) => {
        const s = visible(ctx, ctx.params.id)
        const write = jsonFor(ctx.auth.session, askedTypes(ctx as RouteCtx<unknown, { configTypes?: string | string[] }>))
        return okJson((body) => write(s, body))
      },
    }),
    route({
      method: 'GET', path: '/services/:id/edge-routers', apis: ['client'], access: 'session', tag: 'Service',
      summary: 'Edge routers the caller may use to reach a service', query: ListQuery,
      handle: async (ctx) => {
        const s = visible(ctx, ctx.params.id)
        const token = ctx.request.headers.get('session-token')
        if (token !== null) {
          const claims = await deps.tokens.verify(token, deps.clock.now())
          if (!claims || claims.serviceId !== s.id || claims.identityId !== ctx.auth.identity.id) throw ApiError.unauthorized()
        }
        const routers = routersView(deps.reads.routersFor(ctx.auth.identity.id, s.id))
        const page = listPage(ctx.query, {
          symbols: EDGE_ROUTER_SYMBOLS,
          presortedById: true,
          candidates: () => routers,
          toRow: (r) => toEdgeRouterRow(r, deps.presence.presenceOf(r.id)),
          toView: (r) => toClientEdgeRouterProps(r, deps.presence.presenceOf(r.id)),
        })
        // the answer holds the list under data.edgeRouters (client.yml serviceEdgeRouters)
        return ok({ edgeRouters: page.items })
      },
    }),
    route({
      method: 'GET', path: '/services/:id/terminators', apis: ['client'], access: 'session', tag: 'Service',
      summary: 'Terminators of a service the caller may use', query: ListQuery,
      handle: (ctx) => {
        const s = visible(ctx, ctx.params.id)
        const g = deps.graph.snapshot()
        return respondList(ctx.query, {
          symbols: TERMINATOR_SYMBOLS,
          candidates: () => g.terminatorsOfService(s.id),
          toRow: toTerminatorRow,
          toView: (t) => {
            const d = toTerminatorDetail(t, { service: s.name, router: g.routers.get(t.routerId)?.name ?? t.routerId })
            return { ...d, identity: t.identity, routerId: t.routerId, serviceId: t.serviceId }
          },
        })
      },
    }),
    route({
      method: 'GET', path: '/current-identity/edge-routers', apis: ['client'], access: 'session', tag: 'Current Identity',
      summary: 'Edge routers the caller may use', query: ListQuery,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: EDGE_ROUTER_SYMBOLS,
          presortedById: true,
          candidates: () => routersView(deps.reads.routersOfIdentity(ctx.auth.identity.id)),
          toRow: (r) => toEdgeRouterRow(r, deps.presence.presenceOf(r.id)),
          toView: (r) => toClientEdgeRouterDetail(r, deps.presence.presenceOf(r.id)),
        }),
    }),
    route({
      method: 'GET', path: '/current-api-session/service-updates', apis: ['client'], access: 'session', tag: 'Current API Session',
      summary: 'When the caller\'s service list last changed',
      handle: (ctx) => {
        const mark = deps.reads.lastChangeAt(ctx.auth.identity.id)
        // no change since start-up: the session's creation, but never before the controller started
        const at = mark ?? Math.max(ctx.auth.session.createdAt, deps.startedAt)
        return ok({ lastChangeAt: iso(at) })
      },
    }),
  ]
}
