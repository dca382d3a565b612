/** Management API: every API session (list, get, delete). Admin only. Only the caller's own session shows its token. */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { ApiSession } from '../../../domain/session/session-types.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { ApiSessionDetail } from '../../../../schemas/api-session.ts'
import { ok, okEmpty } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { API_SESSION_SYMBOLS, toApiSessionDetail, toApiSessionRow, visibleToken } from '../../mappers/api-session-mapper.ts'
import { changeOf } from '../route-change.ts'
import { pendingAuthQueries } from '../../../flows/authenticate/auth-api-session.ts'

const ROUTES = { list: '/api-sessions', item: '/api-sessions/:id' } as const

export function apiSessionRoutes(deps: { identities: IdentityActor; sessions: SessionRegistryActor }): RouteDef[] {
  const view = (ctx: RouteCtx) => (s: ApiSession) => {
    const reads = deps.identities.snapshot()
    const identity = reads.identity(s.identityId)
    const token = visibleToken(s, ctx.auth, ctx.request)
    // an ext-jwt second factor is owed per request (by its bearer), so only the stored factors show here
    const authenticator = reads.authenticators.get(s.authenticatorId)
    return toApiSessionDetail(s, identity, token, identity ? pendingAuthQueries(s, identity, reads) : [], { authenticator })
  }
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'API Session', summary: 'List API sessions',
      query: ListQuery, response: ApiSessionDetail,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: API_SESSION_SYMBOLS,
          indexed: ['id', 'identityId', 'identity'],
          candidates: (hint) => {
            const s = deps.sessions.snapshot()
            if (!hint) return s.byId.values()
            if (hint.field === 'id') return hint.values.map((v) => s.byId.get(v)).filter((x): x is ApiSession => !!x)
            return hint.values.flatMap((v) => s.sessionsOf(v))
          },
          toRow: toApiSessionRow,
          toView: view(ctx as RouteCtx),
        }),
    }),
    route({
      method: 'GET', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'API Session', summary: 'Get an API session',
      response: ApiSessionDetail,
      handle: (ctx) => {
        const s = deps.sessions.snapshot().byId.get(ctx.params.id)
        if (!s) throw ApiError.notFound()
        return ok(view(ctx as RouteCtx)(s))
      },
    }),
    route({
      method: 'DELETE', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'API Session', summary: 'Delete an API session',
      handle: async (ctx) => {
        await deps.sessions.ask({ type: 'apiSession.delete', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
  ]
}
