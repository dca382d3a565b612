/**
 * LinkStateUpdate (1053): a router reports the connections a link now runs over. Taken when the link is known, the
 * iteration is the link's and the state is newer than the one held (as the real controller's SetConnsState); kept
 * for the fabric API's `connections`. Edgeplane also requires the reporter to be at one end of the link. No answer.
 * @see router-control-plane.md §4.5; ziti controller/handler_ctrl/link_state.go, model/link_model.go SetConnsState
 */
import { LinkStateUpdateSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { LinksContext } from './links-context.ts'

export function linkStateHandler(router: ConnectedRouter, ctx: LinksContext): ControlHandler {
  return (frame) => {
    const msg = decodeBody(LinkStateUpdateSchema, frame)
    if (!msg.connState) return
    ctx.links.connectionsReported(router.id, msg.linkId, msg.linkIteration, { stateIteration: msg.connState.stateIteration, conns: msg.connState.conns })
  }
}
