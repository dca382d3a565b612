/**
 * The circuit subjects of a router's Fault (1004): IngressFault (0) and EgressFault (1) name a circuit whose end
 * closed: it is torn down with Unroute{now: false} to every router of its path (their xgress finish closing);
 * ForwardFault (3) names circuits (space separated) the router could not forward: those this node holds are torn
 * down (the real controller reroutes them; see docs/differences.md), the others are unrouted at the reporting router
 * at once; UnknownOwnerForwardFault (4): the same, but unknown ones are left alone (another controller's).
 * @see router-control-plane.md §4.5, §5.3; ziti controller/handler_ctrl/fault.go, controller/network/fault.go
 */
import type { ConnectedRouter } from '../control-routers.ts'
import { FaultSubject } from '../pb/ctrl_pb.ts'
import { teardown, type CircuitContext } from './circuit-context.ts'
import { circuitSenders } from './circuit-senders.ts'

/** At most this many circuit ids of one forward fault are read. */
export const MAX_FAULTED = 10_000

export function circuitFault(router: ConnectedRouter, fault: { subject: number; id: string }, ctx: CircuitContext): void {
  switch (fault.subject) {
    case FaultSubject.IngressFault:
    case FaultSubject.EgressFault:
      if (!teardown(ctx, fault.id, false, fault.subject === FaultSubject.IngressFault ? 'ingress-fault' : 'egress-fault')) {
        ctx.log('debug', { routerId: router.id, circuitId: fault.id }, 'a fault for a circuit this node does not hold')
      }
      return
    case FaultSubject.ForwardFault:
    case FaultSubject.UnknownOwnerForwardFault: {
      const ids = fault.id.split(' ').filter((s) => s !== '').slice(0, MAX_FAULTED)
      for (const id of ids) {
        if (teardown(ctx, id, true, 'forward-fault')) continue
        if (fault.subject === FaultSubject.ForwardFault) circuitSenders(router.channel).unroute(id, true)
      }
      return
    }
  }
}
