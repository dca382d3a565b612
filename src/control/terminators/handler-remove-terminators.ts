/**
 * RemoveTerminatorsRequest (1038): a router removes terminators it hosts (an SDK unbound, closed or failed its
 * checks). Answered with a Result, as the real controller does: success for an empty list, and for ids unknown or
 * not this router's (those are dropped, logged); ids not present are kept in the removal, so a create still on its way
 * through the write queue or the cluster's log is removed after it. Busy (the write queue is full, or the cluster has
 * no leader): a failed Result with header 10 = 1, and the router asks again. Any other failure: a failed Result.
 * Long lists are removed in slices (each one write).
 * @see router-control-plane.md §4.2; ziti controller/handler_ctrl/remove_terminators.go, base.go
 */
import { RemoveTerminatorsRequestSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { removableIds } from '../../domain/policy/graph-decide-terminators.ts'
import { controlChange, isCurrent, type TerminatorContext } from './terminator-context.ts'
import { terminatorSenders } from './terminator-senders.ts'

/** Ids removed per write. */
export const REMOVE_SLICE = 1_000

export function removeTerminatorsHandler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  const send = terminatorSenders(router.channel)
  return async (frame) => {
    const req = decodeBody(RemoveTerminatorsRequestSchema, frame)
    if (req.terminatorIds.length === 0) return send.result(frame, true)
    if (!ctx.takeSlot(router)) return void send.busyResult(frame)
    try {
      if (!isCurrent(ctx, router)) return
      const graph = ctx.graph.snapshot()
      const { kept, rejected } = removableIds(req.terminatorIds, router.id, (id) => graph.terminators.get(id))
      if (rejected > 0) ctx.logger.warn({ routerId: router.id, rejected }, 'router attempted to remove terminators it does not own; rejected')
      let removed = 0
      for (let i = 0; i < kept.length; i += REMOVE_SLICE) {
        const ids = kept.slice(i, i + REMOVE_SLICE)
        const written = await ctx.write(() => ctx.graph.ask({ type: 'terminator.removeMany', ids, routerId: router.id, change: controlChange(router.id) }))
        if (!written.ok) return void (written.busy ? send.busyResult(frame) : send.result(frame, false, written.message))
        removed += written.value.removed
      }
      if (removed > 0) ctx.logger.info({ routerId: router.id, removed }, 'removed terminators')
      send.result(frame, true)
    } finally {
      ctx.giveSlot(router)
    }
  }
}
