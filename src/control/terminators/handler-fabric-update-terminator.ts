/**
 * UpdateTerminatorRequest (1018): a router changes the cost or precedence of a terminator it hosts (any binding).
 * Answered with a Result: failure for an unknown terminator, one on another router, a cost above 65535 or a
 * precedence that names none; success when there is nothing to change, or once changed.
 * @see ziti controller/handler_ctrl/update_terminator.go
 */
import { UpdateTerminatorRequestSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { isTerminatorCost, MAX_TERMINATOR_COST, withCostAndPrecedence } from '../../domain/policy/graph-decide-terminators.ts'
import { controlChange, isCurrent, type TerminatorContext } from './terminator-context.ts'
import { terminatorSenders } from './terminator-senders.ts'
import { precedenceOfUpdate } from './terminator-wire.ts'

export function fabricUpdateTerminatorHandler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  const send = terminatorSenders(router.channel)
  return async (frame) => {
    const req = decodeBody(UpdateTerminatorRequestSchema, frame)
    if (!ctx.takeSlot(router)) return void send.busyResult(frame)
    try {
      if (!isCurrent(ctx, router)) return
      const t = ctx.graph.snapshot().terminators.get(req.terminatorId)
      if (!t) return send.result(frame, false, `terminator with id ${req.terminatorId} not found`)
      if (t.routerId !== router.id) {
        ctx.logger.warn({ routerId: router.id, terminatorId: t.id, terminatorRouterId: t.routerId }, 'router attempted to update a terminator it does not own; rejected')
        return send.result(frame, false, 'terminator not owned by requesting router')
      }
      if (!req.updateCost && !req.updatePrecedence) return send.result(frame, true)
      if (req.updateCost && !isTerminatorCost(req.cost)) return send.result(frame, false, `invalid static cost ${req.cost}. Must be less than ${MAX_TERMINATOR_COST}`)
      const precedence = req.updatePrecedence ? precedenceOfUpdate(req.precedence) : undefined
      if (req.updatePrecedence && precedence === undefined) return send.result(frame, false, `invalid precedence: ${req.precedence}`)
      const change = { cost: req.updateCost ? req.cost : undefined, precedence }
      if (!withCostAndPrecedence(t, change).changed) return send.result(frame, true)
      const written = await ctx.write(() => ctx.graph.ask({ type: 'terminator.routerUpdate', id: t.id, routerId: router.id, ...change, change: controlChange(router.id) }))
      if (!written.ok) return void (written.busy ? send.busyResult(frame) : send.result(frame, false, written.message))
      if (written.value.outcome === 'refused') return send.result(frame, false, `terminator ${t.id} could not be updated (${written.value.refusal.reason})`)
      send.result(frame, true)
    } finally {
      ctx.giveSlot(router)
    }
  }
}
