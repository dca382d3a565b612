/**
 * RouteResult (1022), a router's answer to a Route (a reply nobody waits for, dispatched by type): body = the circuit
 * id, header 1101 = the attempt (u32), 1102 = success, 1103 = the error text, 1104 = the error code (a byte); the
 * other headers above the channel's own range (> 127, but 1101-1104) are the egress's peer data. Handed to the circuit
 * being built; a result for a circuit this node is not building is answered with Unroute{now} (the router holds a
 * route nobody will use), unless it is a smart reroute's (attempt 99969996), as the real controller answers it.
 * A result without its attempt header is logged and dropped.
 * @see router-control-plane.md §5.2; ziti controller/handler_ctrl/route_result.go
 */
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { decodeString, readBool, readString, readU32 } from '../wire/control-headers.ts'
import type { CircuitContext } from './circuit-context.ts'
import { circuitSenders } from './circuit-senders.ts'

/** RouteResult's content type (ctrl_msg.RouteResultType: not in ctrl.proto's ContentType enum). */
export const ROUTE_RESULT_TYPE = 1022

export const ROUTE_RESULT_HEADERS = { Attempt: 1101, Success: 1102, Error: 1103, ErrorCode: 1104 } as const
/** The attempt number of the real controller's smart reroutes (network.SmartRerouteAttempt). */
export const SMART_REROUTE_ATTEMPT = 99_969_996
/** Header ids below this are the channel's own (reply-for, heartbeats, …), not peer data. */
const FIRST_PEER_DATA_KEY = 128

export function routeResultHandler(router: ConnectedRouter, ctx: CircuitContext): ControlHandler {
  return (frame) => {
    const attempt = readU32(frame.headers, ROUTE_RESULT_HEADERS.Attempt)
    if (attempt === undefined) {
      ctx.log('warn', { routerId: router.id }, 'a route result without its attempt header; dropped')
      return
    }
    const circuitId = decodeString(frame.body)
    const peerData = new Map<number, Uint8Array>()
    for (const [k, v] of frame.headers) {
      if (k >= FIRST_PEER_DATA_KEY && (k < ROUTE_RESULT_HEADERS.Attempt || k > ROUTE_RESULT_HEADERS.ErrorCode)) peerData.set(k, v)
    }
    const code = frame.headers.get(ROUTE_RESULT_HEADERS.ErrorCode)
    const routing = ctx.builder.routeResult({
      routerId: router.id,
      circuitId,
      attempt,
      success: readBool(frame.headers, ROUTE_RESULT_HEADERS.Success) === true,
      error: readString(frame.headers, ROUTE_RESULT_HEADERS.Error),
      errorCode: code && code.length > 0 ? code[0] : undefined,
      peerData,
    })
    if (!routing && attempt !== SMART_REROUTE_ATTEMPT) {
      ctx.log('debug', { routerId: router.id, circuitId, attempt }, 'a route result for no circuit being built: unrouted')
      circuitSenders(router.channel).unroute(circuitId, true)
    }
  }
}
