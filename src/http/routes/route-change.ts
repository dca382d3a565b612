/** The change context of a REST write: who (the session's identity), from where, which request. */
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { RouteCtx } from '../http-route.ts'

export function changeOf(ctx: RouteCtx<unknown, unknown>): ChangeContext {
  return { author: ctx.auth?.identity.id ?? 'anonymous', source: 'rest', requestId: ctx.requestId }
}
