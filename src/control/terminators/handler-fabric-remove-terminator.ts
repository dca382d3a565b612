/**
 * RemoveTerminatorRequest (1012): a router removes one terminator it hosts. Answered with a Result: failure for an
 * unknown terminator or one on another router ("terminator not owned by requesting router"), success once removed.
 * @see ziti controller/handler_ctrl/remove_terminator.go
 */
import { RemoveTerminatorRequestSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { controlChange, isCurrent, type TerminatorContext } from './terminator-context.ts'
import { terminatorSenders } from './terminator-senders.ts'

export function fabricRemoveTerminatorHandler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  const send = terminatorSenders(router.channel)
  return async (frame) => {
    const req = decodeBody(RemoveTerminatorRequestSchema, frame)
    if (!ctx.takeSlot(router)) return void send.busyResult(frame)
    try {
      if (!isCurrent(ctx, router)) return
      const t = ctx.graph.snapshot().terminators.get(req.terminatorId)
      if (!t) return send.result(frame, false, `terminator with id ${req.terminatorId} not found`)
      if (t.routerId !== router.id) {
        ctx.logger.warn({ routerId: router.id, terminatorId: t.id, terminatorRouterId: t.routerId }, 'router attempted to remove a terminator it does not own; rejected')
        return send.result(frame, false, 'terminator not owned by requesting router')
      }
      const written = await ctx.write(() => ctx.graph.ask({ type: 'terminator.removeMany', ids: [t.id], routerId: router.id, change: controlChange(router.id) }))
      if (!written.ok) return void (written.busy ? send.busyResult(frame) : send.result(frame, false, written.message))
      ctx.logger.info({ routerId: router.id, terminatorId: t.id, serviceId: t.serviceId }, 'removed terminator')
      send.result(frame, true)
    } finally {
      ctx.giveSlot(router)
    }
  }
}
