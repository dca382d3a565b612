/**
 * What the circuits feature sends a router, typed: Route (1005) and Unroute (1006) from their schemas, and the
 * answers to its circuit requests as replies: CreateCircuitV2Response (20219) / V3 (20223), everything in headers
 * (11 circuit id, 12 the path's ingress id, 10 peer data, 13 tags; empty body), or an edge error (20002: body = the
 * message, 1014 = code, 18 = retry hint, 1026 = the circuit id when one was allocated).
 * @see router-control-plane.md §4.4, §5.2, §5.3; ziti common/ctrl_msg/messages.go, controller/handler_edge_ctrl
 */
import type { ControlChannel } from '../channel/control-channel.ts'
import { sendTyped } from '../control-messages.ts'
import { RouteSchema, UnrouteSchema } from '../pb/ctrl_pb.ts'
import { ContentType as EdgeType } from '../pb/edge_ctrl_pb.ts'
import type { Frame, HeaderMap } from '../wire/control-frame.ts'
import { encodeString, encodeStringToStringMap, encodeU32, encodeU32ToBytesMap } from '../wire/control-headers.ts'
import type { RouterRequestError } from '../../domain/router/router-request-errors.ts'
import type { RouteInit } from './circuit-routes.ts'

/** Headers of a circuit request's answer (ctrl_msg CreateCircuitResp*, CreateCircuitPeerDataHeader). */
export const CIRCUIT_RESPONSE_HEADERS = { PeerData: 10, CircuitId: 11, Address: 12, Tags: 13 } as const
/** Headers of an edge error reply: code, retry hint, and the circuit id (edge.CircuitIdHeader). */
export const CIRCUIT_ERROR_HEADERS = { ErrorCode: 1014, RetryHint: 18, CircuitId: 1026 } as const

export interface CircuitAnswer {
  circuitId: string
  /** The path's ingress id. */
  address: string
  peerData: ReadonlyMap<number, Uint8Array>
  tags: Readonly<Record<string, string>>
}

export interface CircuitSenders {
  route(route: RouteInit): boolean
  unroute(circuitId: string, now: boolean): boolean
  /** The success reply to a CreateCircuitV2 (20219) or V3 (20223) request. */
  circuitCreated(to: Frame, version: 2 | 3, answer: CircuitAnswer): boolean
  /** The failure reply to a circuit request. */
  circuitRefused(to: Frame, error: RouterRequestError, circuitId?: string): boolean
}

export function circuitSenders(ch: ControlChannel): CircuitSenders {
  return {
    route: (route) => sendTyped(ch, RouteSchema, route) !== undefined,
    unroute: (circuitId, now) => sendTyped(ch, UnrouteSchema, { circuitId, now }) !== undefined,
    circuitCreated(to, version, a) {
      const headers: HeaderMap = new Map([
        [CIRCUIT_RESPONSE_HEADERS.CircuitId, encodeString(a.circuitId)],
        [CIRCUIT_RESPONSE_HEADERS.Address, encodeString(a.address)],
        [CIRCUIT_RESPONSE_HEADERS.PeerData, encodeU32ToBytesMap(a.peerData)],
        [CIRCUIT_RESPONSE_HEADERS.Tags, encodeStringToStringMap(new Map(Object.entries(a.tags)))],
      ])
      const contentType = version === 2 ? EdgeType.CreateCircuitV2ResponseType : EdgeType.CreateCircuitV3ResponseType
      return ch.reply(to, { contentType, headers }) !== undefined
    },
    circuitRefused(to, error, circuitId) {
      const headers: HeaderMap = new Map([
        [CIRCUIT_ERROR_HEADERS.ErrorCode, encodeU32(error.code)],
        [CIRCUIT_ERROR_HEADERS.RetryHint, encodeU32(error.retryHint)],
        ...(circuitId ? [[CIRCUIT_ERROR_HEADERS.CircuitId, encodeString(circuitId)] as const] : []),
      ])
      return ch.reply(to, { contentType: EdgeType.ErrorType, headers, body: encodeString(error.message) }) !== undefined
    },
  }
}
