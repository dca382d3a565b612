/**
 * Management API: data-flow tracing of an identity (admin only). A trace is kept in memory (actors/identity-trace)
 * and ends by itself at its `until`; `enabled: false` ends it at once. The answer is the trace state: the running
 * trace's id and end, or `enabled: false` with the id of the trace that was ended and the time it ended (`""` and
 * the zero time `0001-01-01T00:00:00.000Z` when none was running): `ziti edge trace identity --disable` reads both
 * as strings, where the real controller's answer omits the id and the CLI fails on it.
 * @see edge-api management.yml /identities/{id}/trace (updateIdentityTracing), definitions traceSpec, traceDetail
 */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { IdentityTraceRegistry } from '../../../actors/identity-trace/identity-trace-registry.ts'
import { decideTrace } from '../../../domain/identity/identity-trace.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { newUuid } from '../../../lib/ids.ts'
import { TraceDetail, TraceSpec } from '../../../../schemas/identity.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

/** Go's zero time as the real controller renders it, for a `until` no trace had. */
const ZERO_TIME = '0001-01-01T00:00:00.000Z'

export function identityTraceRoutes(deps: { identities: IdentityActor; traces: IdentityTraceRegistry; clock: Clock }): RouteDef[] {
  return [
    route({
      method: 'PUT', path: '/identities/:id/trace', apis: ['management'], access: 'admin', tag: 'Identity',
      summary: 'Enable or disable data-flow tracing of an identity (ends by itself after the duration, 10m if none)',
      body: TraceSpec, response: TraceDetail,
      handle: (ctx) => {
        const id = ctx.params.id
        if (!deps.identities.snapshot().identity(id)) throw ApiError.notFound()
        const now = deps.clock.now()
        if (!ctx.body.enabled) {
          const ended = deps.traces.stop(id, now)
          return ok({ enabled: false, traceId: ended?.traceId ?? '', until: ended ? new Date(now).toISOString() : ZERO_TIME })
        }
        const trace = decideTrace(id, ctx.body, now, newUuid)
        deps.traces.start(trace)
        return ok({ enabled: true, traceId: trace.traceId, until: new Date(trace.until).toISOString() })
      },
    }),
  ]
}
