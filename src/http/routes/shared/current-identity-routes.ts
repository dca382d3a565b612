/** Both APIs: the caller's identity and its own authenticators (changes need the current password). */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { Authenticator } from '../../../domain/identity/identity-types.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { IdentityDetail } from '../../../../schemas/identity.ts'
import { AuthenticatorDetail, AuthenticatorPatchWithCurrent, AuthenticatorUpdateWithCurrent } from '../../../../schemas/authenticator.ts'
import { ok } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { toIdentityDetail } from '../../mappers/identity-mapper.ts'
import { AUTHENTICATOR_SYMBOLS, toAuthenticatorDetail, toAuthenticatorRow } from '../../mappers/authenticator-mapper.ts'
import { updbChangeRoutes } from './updb-change-routes.ts'

export function currentIdentityRoutes(deps: { identities: IdentityActor; sessions: SessionRegistryActor; clock: Clock }): RouteDef[] {
  const own = (ctx: RouteCtx<unknown, unknown>, id: string): Authenticator => {
    const a = deps.identities.snapshot().authenticators.get(id)
    if (!a || a.identityId !== ctx.auth.identity.id) throw ApiError.notFound()
    return a
  }
  return [
    route({
      method: 'GET', path: '/current-identity', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'The caller\'s identity', response: IdentityDetail,
      handle: (ctx) => {
        const i = ctx.auth.identity
        return ok(
          toIdentityDetail(i, {
            authenticators: deps.identities.snapshot().authenticatorsOf(i.id),
            enrollments: deps.identities.snapshot().enrollmentsOf(i.id),
            hasApiSession: true,
            now: deps.clock.now(),
          }),
        )
      },
    }),
    route({
      method: 'GET', path: '/current-identity/authenticators', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'The caller\'s authenticators', query: ListQuery, response: AuthenticatorDetail,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: AUTHENTICATOR_SYMBOLS,
          candidates: () => [...deps.identities.snapshot().authenticatorsOf(ctx.auth.identity.id)],
          toRow: toAuthenticatorRow,
          toView: (a) => toAuthenticatorDetail(a, ctx.auth.identity),
        }),
    }),
    route({
      method: 'GET', path: '/current-identity/authenticators/:id', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'One of the caller\'s authenticators', response: AuthenticatorDetail,
      handle: (ctx) => ok(toAuthenticatorDetail(own(ctx, ctx.params.id), ctx.auth.identity)),
    }),
    ...updbChangeRoutes({
      identities: deps.identities,
      path: '/current-identity/authenticators/:id',
      apis: ['client', 'management'],
      access: 'session',
      tag: 'Current Identity',
      subject: 'one of the caller\'s authenticators (the current password is required)',
      bodies: { put: AuthenticatorUpdateWithCurrent, patch: AuthenticatorPatchWithCurrent },
      find: (ctx) => own(ctx, ctx.params.id),
    }),
  ]
}
