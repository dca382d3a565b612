/**
 * UpdateTerminatorRequest (20209): an SDK's UpdateBind (cost, precedence), relayed by its edge router. Checks, in the
 * real controller's order: the router is still known; the tokens name a Bind session; the terminator exists, is on
 * this router and of binding `edge` (invalid terminator); a cost to set is at most 65535 (invalid cost); a precedence
 * to set is Default, Required or Failed (invalid precedence). The terminator's host is not checked, as in the real
 * controller. Success: the empty UpdateTerminatorResponse (20210) as the reply; a refusal: an edge error (20002).
 * @see router-control-plane.md §4.2; ziti controller/handler_edge_ctrl/update_terminator.go, common.go
 */
import { UpdateTerminatorRequestSchema } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { EDGE_BINDING, isTerminatorCost, ownedTerminator, withCostAndPrecedence } from '../../domain/policy/graph-decide-terminators.ts'
import { invalidTerminatorOf, RouterRequestErrors as E, type RouterRequestError } from '../../domain/router/router-request-errors.ts'
import { controlChange, isCurrent, type TerminatorContext } from './terminator-context.ts'
import { terminatorSenders } from './terminator-senders.ts'
import { precedenceOfUpdate } from './terminator-wire.ts'

/** How the real controller names this operation in its refusals. */
const LABEL = 'update.terminator'

export function updateTerminatorHandler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  const send = terminatorSenders(router.channel)
  return async (frame) => {
    const req = decodeBody(UpdateTerminatorRequestSchema, frame)
    const refuse = (e: RouterRequestError) => void send.edgeError(frame, e)
    if (!ctx.takeSlot(router)) return refuse(E.busy('too many terminator requests of this router are in progress'))
    try {
      if (!isCurrent(ctx, router)) return
      const checked = await ctx.checkSession({ sessionToken: req.sessionToken, apiSessionToken: req.apiSessionToken }, 'Bind')
      if (!checked.ok) return refuse(checked.error)
      const owned = ownedTerminator(ctx.graph.snapshot().terminators.get(req.terminatorId), router.id, EDGE_BINDING)
      if (!owned.ok) return refuse(invalidTerminatorOf(LABEL, req.terminatorId, router.id, EDGE_BINDING, owned.refusal))
      if (req.updateCost && !isTerminatorCost(req.cost)) return refuse(E.invalidCost(`invalid cost ${req.cost}. cost must be between 0 and 65535 inclusive`))
      const precedence = req.updatePrecedence ? precedenceOfUpdate(req.precedence) : undefined
      if (req.updatePrecedence && precedence === undefined) return refuse(E.invalidPrecedence(`invalid precedence: ${req.precedence}`))
      const change = { cost: req.updateCost ? req.cost : undefined, precedence }
      if (withCostAndPrecedence(owned.terminator, change).changed) {
        const written = await ctx.write(() => ctx.graph.ask({ type: 'terminator.routerUpdate', id: req.terminatorId, routerId: router.id, binding: EDGE_BINDING, ...change, change: controlChange(checked.session.identityId) }))
        if (!written.ok) return refuse(written.busy ? E.busy(written.message) : E.internal(written.message))
        const r = written.value
        if (r.outcome === 'refused') return refuse(invalidTerminatorOf(LABEL, req.terminatorId, router.id, EDGE_BINDING, r.refusal))
        ctx.logger.info({ routerId: router.id, terminatorId: req.terminatorId, serviceId: owned.terminator.serviceId }, 'updated terminator')
      }
      send.updateTerminatorResponse(frame)
    } finally {
      ctx.giveSlot(router)
    }
  }
}
