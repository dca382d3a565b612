/**
 * Service sessions: created by a client for a service it may use (Client API), listed and deleted by their owner,
 * and by admins through the Management API. Refusals follow the real controller: a service the caller cannot see is
 * 404, a type it may not use is 400 COULD_NOT_VALIDATE, failing posture checks 409 INVALID_POSTURE, no shared edge
 * router 400 NO_EDGE_ROUTERS_AVAILABLE. `GET /sessions/{id}/route-path` (Management API) lists the routers of the
 * path of the session's circuit on this node (a legacy dial's circuit names its Dial session as client, as in the real
 * controller), or nothing when it has none here.
 */
import type { PolicyGraphActor } from '../../../actors/policy-graph/policy-graph-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { PolicyReads } from '../../../domain/policy/policy-reads.ts'
import type { Router } from '../../../domain/policy/policy-types.ts'
import type { ServiceSession } from '../../../domain/session/service-session-types.ts'
import type { CircuitReads } from '../../../domain/fabric/fabric-types.ts'
import type { SessionTokens } from '../../../flows/sessions/session-token.ts'
import { enforcePosture, type PostureEnforceDeps } from '../../../flows/posture/posture-enforce.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { newCuid } from '../../../lib/ids.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { SessionCreate, SessionDetail, SessionRoutePath } from '../../../../schemas/session.ts'
import { json, ok, okEmpty } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { iso, toEntityRef } from '../../mappers/common-mapper.ts'
import { SESSION_SYMBOLS, toSessionRow } from '../../mappers/session-mapper.ts'
import { selfLink } from '../../http-envelope.ts'
import { toClientEdgeRouterProps } from '../../mappers/client-service-mapper.ts'
import type { RouterPresence, RouterPresenceReads } from '../../../domain/router/router-presence.ts'
import { changeOf } from '../route-change.ts'

/** At most this many edge routers are handed out with a session (as the real controller). */
const MAX_SESSION_ROUTERS = 25

export interface SessionRouteDeps {
  graph: PolicyGraphActor
  sessions: SessionRegistryActor
  reads: PolicyReads
  tokens: SessionTokens
  clock: Clock
  posture: PostureEnforceDeps
  /** Which routers are connected to this node (the control plane). */
  presence: RouterPresenceReads
  /** The circuits this node holds (the control plane); absent: none. */
  circuits?: CircuitReads
}

export function sessionRoutes(deps: SessionRouteDeps): RouteDef[] {
  /**
   * The routers a session may use, online ones first, at most MAX_SESSION_ROUTERS (the real controller's
   * `anyOf(identities) and anyOf(services) SORT BY connected DESC LIMIT 25`); offline ones are listed too.
   */
  const usableRouters = (identityId: string, serviceId: string): { router: Router; presence: RouterPresence }[] => {
    const g = deps.graph.snapshot()
    const online: { router: Router; presence: RouterPresence }[] = []
    const offline: { router: Router; presence: RouterPresence }[] = []
    for (const id of deps.reads.routersFor(identityId, serviceId)) {
      const router = g.edgeRouters.get(id)
      if (!router) continue
      const presence = deps.presence.presenceOf(id)
      if (presence.isOnline) {
        online.push({ router, presence })
        if (online.length === MAX_SESSION_ROUTERS) break
      } else if (offline.length < MAX_SESSION_ROUTERS) offline.push({ router, presence })
    }
    return [...online, ...offline].slice(0, MAX_SESSION_ROUTERS)
  }
  const view = (s: ServiceSession) => {
    const service = deps.graph.snapshot().services.get(s.serviceId)
    return {
      id: s.id,
      createdAt: iso(s.createdAt),
      updatedAt: iso(s.updatedAt),
      _links: selfLink('sessions', s.id),
      tags: s.tags ?? {},
      apiSession: toEntityRef('api-sessions', s.apiSessionId, s.apiSessionId),
      apiSessionId: s.apiSessionId,
      identityId: s.identityId,
      service: toEntityRef('services', s.serviceId, service?.name ?? s.serviceId),
      serviceId: s.serviceId,
      token: s.token,
      type: s.type,
      edgeRouters: usableRouters(s.identityId, s.serviceId).map(({ router, presence }) => ({ ...toClientEdgeRouterProps(router, presence), urls: presence.supportedProtocols })),
    }
  }
  const list = (ctx: RouteCtx<unknown, Record<string, string | undefined>>, own: boolean) =>
    respondList(ctx.query, {
      symbols: SESSION_SYMBOLS,
      presortedById: true,
      candidates: () => {
        const all = deps.sessions.snapshot().serviceSessionsById()
        return own ? all.filter((s) => s.identityId === ctx.auth.identity.id) : all
      },
      toRow: toSessionRow,
      toView: view,
    })
  const find = (ctx: RouteCtx<unknown, unknown>, own: boolean): ServiceSession => {
    const s = deps.sessions.snapshot().serviceSessions.get(ctx.params.id!)
    if (!s || (own && s.identityId !== ctx.auth.identity.id)) throw ApiError.notFound()
    return s
  }

  /** List, get and delete: the caller's own sessions (Client API) or every session (Management API, admins). */
  const readRoutes = (api: 'client' | 'management', own: boolean): RouteDef[] => {
    const common = { apis: [api], access: own ? ('session' as const) : ('admin' as const), tag: 'Session' }
    const whose = own ? 'one of the caller\'s sessions' : 'a session'
    return [
      route({ ...common, method: 'GET', path: '/sessions', summary: own ? 'The caller\'s sessions' : 'List sessions', query: ListQuery, response: SessionDetail, handle: (ctx) => list(ctx, own) }),
      route({ ...common, method: 'GET', path: '/sessions/:id', summary: `Get ${whose}`, response: SessionDetail, handle: (ctx) => ok(view(find(ctx, own))) }),
      route({
        ...common, method: 'DELETE', path: '/sessions/:id', summary: `Delete ${whose}`,
        handle: async (ctx) => {
          await deps.sessions.ask({ type: 'session.delete', id: find(ctx, own).id, change: changeOf(ctx) })
          return okEmpty()
        },
      }),
    ]
  }

  return [
    route({
      method: 'POST', path: '/sessions', apis: ['client'], access: 'session', tag: 'Session', summary: 'Create a session to Dial or Bind a service',
      body: SessionCreate, response: SessionDetail, successStatus: 201,
      handle: async (ctx) => {
        const identityId = ctx.auth.identity.id
        const serviceId = ctx.body.serviceId ?? ''
        const type = ctx.body.type ?? 'Dial'
        const service = deps.graph.snapshot().services.get(serviceId)
        const permissions = service ? deps.reads.permissionsOf(identityId, serviceId) : []
        if (!service || permissions.length === 0) throw ApiError.notFound()
        if (!permissions.includes(type)) throw ApiError.invalidField('ServiceId', 'service not found', serviceId)
        const now = deps.clock.now()
        enforcePosture(deps.posture, ctx.auth.session, service, type, now)
        if (usableRouters(identityId, serviceId).length === 0) throw new ApiError('NO_EDGE_ROUTERS_AVAILABLE')
        const id = newCuid(now)
        const legacy = ctx.auth.bearer === undefined
        const token = await deps.tokens.sign({ sessionId: id, apiSessionId: ctx.auth.session.id, identityId, serviceId, type, legacy }, now)
        // a session of an OIDC sign-in is its token alone (z_leg false), stored nowhere, as the real controller's
        if (!legacy) {
          const transient = { id, token, apiSessionId: ctx.auth.session.id, identityId, serviceId, type, tags: ctx.body.tags ?? {}, createdAt: now, updatedAt: now }
          return json(201, { data: view(transient), meta: {} })
        }
        const { session, existing } = await deps.sessions.ask({
          type: 'session.create',
          session: { id, token, apiSessionId: ctx.auth.session.id, identityId, serviceId, type, tags: ctx.body.tags ?? {} },
          change: changeOf(ctx),
        })
        if (!existing) return json(201, { data: view(session), meta: {} })
        // the session this API session already has for the service and type: its token is signed anew, as the real
        // controller signs one per request (a stored one may be of a key routers no longer know)
        const again = await deps.tokens.sign({ sessionId: session.id, apiSessionId: session.apiSessionId, identityId, serviceId, type, legacy }, now)
        return json(201, { data: view({ ...session, token: again }), meta: {} })
      },
    }),
    ...readRoutes('client', true),
    ...readRoutes('management', false),
    route({
      method: 'GET', path: '/sessions/:id/route-path', apis: ['management'], access: 'admin', tag: 'Session',
      summary: 'The routers the circuit of a session runs through', response: SessionRoutePath,
      handle: (ctx) => {
        // an unknown session is 404 (the real controller answers it the empty list too)
        const session = find(ctx, false)
        for (const c of deps.circuits?.all() ?? []) if (c.clientId === session.id) return ok({ routePath: [...c.path.nodes] })
        // the path of a session without a circuit, as the real controller answers it
        return ok({ routePath: [] })
      },
    }),
  ]
}
