/**
 * RemoveTerminatorRequest (20211), the edge form of a single removal (v2 routers send RemoveTerminators, 1038): the
 * terminator must exist, be on this router and of binding `edge` (else an edge error, invalid terminator); the
 * session is not checked (the router asks only for its SDKs' terminators, and the session may be gone already, as
 * the real controller reasons). Success: the empty RemoveTerminatorResponse (20212) as the reply.
 * @see ziti controller/handler_edge_ctrl/remove_terminator.go
 */
import { RemoveTerminatorRequestSchema } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { EDGE_BINDING, ownedTerminator } from '../../domain/policy/graph-decide-terminators.ts'
import { invalidTerminatorOf, RouterRequestErrors as E } from '../../domain/router/router-request-errors.ts'
import { controlChange, isCurrent, type TerminatorContext } from './terminator-context.ts'
import { terminatorSenders } from './terminator-senders.ts'

const LABEL = 'remove.terminator'

export function removeTerminatorHandler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  const send = terminatorSenders(router.channel)
  return async (frame) => {
    const req = decodeBody(RemoveTerminatorRequestSchema, frame)
    if (!ctx.takeSlot(router)) return void send.edgeError(frame, E.busy('too many terminator requests of this router are in progress'))
    try {
      if (!isCurrent(ctx, router)) return
      const owned = ownedTerminator(ctx.graph.snapshot().terminators.get(req.terminatorId), router.id, EDGE_BINDING)
      if (!owned.ok) return void send.edgeError(frame, invalidTerminatorOf(LABEL, req.terminatorId, router.id, EDGE_BINDING, owned.refusal))
      const written = await ctx.write(() => ctx.graph.ask({ type: 'terminator.removeMany', ids: [req.terminatorId], routerId: router.id, change: controlChange(router.id) }))
      if (!written.ok) return void send.edgeError(frame, written.busy ? E.busy(written.message) : E.internal(written.message))
      ctx.logger.info({ routerId: router.id, terminatorId: req.terminatorId, serviceId: owned.terminator.serviceId }, 'removed terminator')
      send.removeTerminatorResponse(frame)
    } finally {
      ctx.giveSlot(router)
    }
  }
}
