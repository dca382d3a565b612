/**
 * CircuitConfirmation (1034): the circuits a router holds that have been idle (ids, idle times in nanoseconds),
 * asked of the controller that built them. A circuit this node holds through that router stays (unless its service
 * is gone, or its idle time passed the service's `maxIdleTimeMillis` as reported by one of its two end routers: then
 * it is torn down); any other is unrouted at once (Unroute{now}), since no controller will ever tear it down.
 * @see router-control-plane.md §4.5, trap 9; ziti controller/handler_ctrl/circuit_confirmation.go
 */
import type { ControlHandler } from '../channel/control-channel.ts'
import { decodeBody } from '../control-messages.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { CircuitConfirmationSchema } from '../pb/ctrl_pb.ts'
import { teardown, type CircuitContext } from './circuit-context.ts'
import { circuitSenders } from './circuit-senders.ts'

/** At most this many circuit ids of one confirmation are read (a router holds far fewer idle circuits). */
export const MAX_CONFIRMED = 100_000

export function circuitConfirmationHandler(router: ConnectedRouter, ctx: CircuitContext): ControlHandler {
  return (frame) => {
    const confirm = decodeBody(CircuitConfirmationSchema, frame)
    const send = circuitSenders(router.channel)
    let unknown = 0
    for (const id of confirm.circuitIds.slice(0, MAX_CONFIRMED)) {
      const c = ctx.circuits.get(id)
      if (!c || !c.path.nodes.includes(router.id)) {
        unknown++
        send.unroute(id, true)
        continue
      }
      const service = ctx.graph().services.get(c.serviceId)
      if (!service) {
        teardown(ctx, c.id, true, 'admin')
        continue
      }
      const idleNs = confirm.idleTimes[id]
      if (idleNs === undefined || service.maxIdleTimeMillis <= 0 || Number(idleNs) / 1e6 < service.maxIdleTimeMillis) continue
      const endpoint = c.path.nodes[0] === router.id || c.path.nodes.at(-1) === router.id
      if (endpoint) teardown(ctx, c.id, true, 'admin')
    }
    ctx.log(unknown > 0 ? 'info' : 'debug', { routerId: router.id, confirmed: confirm.circuitIds.length, unknown }, 'circuit confirmation')
  }
}
