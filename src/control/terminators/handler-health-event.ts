/**
 * HealthEventRequest (20214): an SDK's health check of a service it hosts, relayed by its edge router. Counted per
 * result when its tokens name a Bind session (the real controller counts per service in interval counters; here one
 * counter by result, edgeplane_terminator_health_checks_total). No answer, as in the real controller; a refusal is
 * logged at debug only.
 * @see ziti controller/handler_edge_ctrl/health_event.go
 */
import { HealthEventRequestSchema } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { isCurrent, type TerminatorContext } from './terminator-context.ts'

export function healthEventHandler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  return async (frame) => {
    const req = decodeBody(HealthEventRequestSchema, frame)
    // no answer is owed: a health event beyond the router's slots is dropped
    if (!ctx.takeSlot(router)) return
    try {
      if (!isCurrent(ctx, router)) return
      const checked = await ctx.checkSession({ sessionToken: req.sessionToken, apiSessionToken: req.apiSessionToken }, 'Bind')
      if (!checked.ok) {
        ctx.logger.debug({ routerId: router.id, terminatorId: req.terminatorId, error: checked.error.message }, 'health event refused')
        return
      }
      ctx.healthChecked(req.checkPassed)
      ctx.logger.debug({ routerId: router.id, terminatorId: req.terminatorId, serviceId: checked.session.serviceId, passed: req.checkPassed }, 'health event')
    } finally {
      ctx.giveSlot(router)
    }
  }
}
