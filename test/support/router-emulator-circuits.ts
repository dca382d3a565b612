// The data path of an emulated edge router, as far as the controller sees it (router-emulator.ts, through its public
// API and onFrame): dials for SDKs (CreateCircuitV2 with a legacy session's tokens, V3 with an OIDC access token),
// answering Routes with RouteResults as a real router does (success with the egress's peer data, or an error code),
// faults and circuit confirmations; and decoding what the controller sends (Route, Unroute, the dial's answer).
// Written from router-control-plane.md §4.4-§5.3 and ziti router/handler_ctrl/route.go, router/xgress_edge.
import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf'
import { CircuitConfirmationSchema, ContentType as CtrlType, RouteSchema, UnrouteSchema, type Route, type Unroute } from '../../src/control/pb/ctrl_pb.ts'
import { ContentType as EdgeType } from '../../src/control/pb/edge_ctrl_pb.ts'
import type { Frame, HeaderMap } from '../../src/control/wire/control-frame.ts'
import {
  decodeString,
  decodeStringToStringMap,
  decodeU32ToBytesMap,
  encodeBool,
  encodeString,
  encodeStringSlice,
  encodeU32,
  encodeU32ToBytesMap,
  readString,
  readU32,
} from '../../src/control/wire/control-headers.ts'
import { replyForOf, type RouterEmulator } from './router-emulator.ts'

/** RouteResult's content type and headers (ctrl_msg). */
export const ROUTE_RESULT = 1022
const RR = { Attempt: 1101, Success: 1102, Error: 1103, ErrorCode: 1104 }

/** How an emulated router answers Routes. */
export interface RouteAnswers {
  /** Error code (1104) per attempt, or undefined for success; default: success. */
  fail?: (route: Route) => { code: number; message: string } | undefined
  /** The egress's peer data on success (the host's public key 1003, …), for the router holding the egress. */
  peerData?: ReadonlyMap<number, Uint8Array>
  /** Do not answer at all (a router that hangs). */
  silent?: (route: Route) => boolean
}

/** Makes the emulator answer every Route it gets with a RouteResult, as a real router does once it installed it. */
export function answerRoutes(emu: RouterEmulator, answers: RouteAnswers = {}): void {
  emu.onFrame((f) => {
    if (f.contentType !== CtrlType.RouteType) return
    const route = fromBinary(RouteSchema, f.body)
    if (answers.silent?.(route)) return
    const failure = answers.fail?.(route)
    const headers: HeaderMap = new Map([[RR.Attempt, encodeU32(route.attempt)]])
    if (failure) {
      headers.set(RR.Error, encodeString(failure.message))
      headers.set(RR.ErrorCode, Uint8Array.of(failure.code))
    } else {
      headers.set(RR.Success, encodeBool(true))
      if (route.egress) for (const [k, v] of answers.peerData ?? []) headers.set(k, v)
    }
    emu.reply(f, { contentType: ROUTE_RESULT, headers, body: encodeString(route.circuitId) })
  })
}

export const routesOf = (emu: RouterEmulator): Route[] => emu.received.filter((f) => f.contentType === CtrlType.RouteType).map((f) => fromBinary(RouteSchema, f.body))
export const unroutesOf = (emu: RouterEmulator): Unroute[] =>
  emu.received.filter((f) => f.contentType === CtrlType.UnrouteType).map((f) => fromBinary(UnrouteSchema, f.body))

/** A dial's answer as the router reads it. */
export type DialAnswer =
  | { ok: true; circuitId: string; address: string; peerData: Map<number, Uint8Array>; tags: Map<string, string>; frame: Frame }
  | { ok: false; message: string; code: number | undefined; retryHint: number | undefined; circuitId: string | undefined; frame: Frame }

function answerOf(f: Frame, okType: number): DialAnswer {
  if (f.contentType === okType) {
    return {
      ok: true,
      circuitId: readString(f.headers, 11) ?? '',
      address: readString(f.headers, 12) ?? '',
      peerData: f.headers.has(10) ? decodeU32ToBytesMap(f.headers.get(10)!) : new Map(),
      tags: f.headers.has(13) ? decodeStringToStringMap(f.headers.get(13)!) : new Map(),
      frame: f,
    }
  }
  if (f.contentType !== EdgeType.ErrorType) throw new Error(`a dial answered with content type ${f.contentType}`)
  return { ok: false, message: decodeString(f.body), code: readU32(f.headers, 1014), retryHint: readU32(f.headers, 18), circuitId: readString(f.headers, 1026), frame: f }
}

/** The dialer's public key, as an SDK puts it in peer data (1003) for an encryption-requiring service. */
export const DIALER_KEY = new Map([[1003, new Uint8Array(32).fill(7)]])

/** CreateCircuitV2Request (20218) for an SDK with a legacy session; answers the reply. */
export async function dialV2(
  emu: RouterEmulator,
  o: { sessionToken: string; apiSessionToken: string; instanceId?: string; peerData?: ReadonlyMap<number, Uint8Array>; fingerprints?: string[] },
  timeoutMs = 15_000,
): Promise<DialAnswer> {
  const headers: HeaderMap = new Map([
    [11, encodeString(o.sessionToken)],
    [14, encodeString(o.apiSessionToken)],
    [12, encodeStringSlice(o.fingerprints ?? [])],
    [13, encodeString(o.instanceId ?? '')],
    [10, encodeU32ToBytesMap(o.peerData ?? DIALER_KEY)],
  ])
  const seq = emu.send({ contentType: EdgeType.CreateCircuitV2RequestType, headers })
  return answerOf(await emu.waitFor((f) => replyForOf(f) === seq, timeoutMs, 'the CreateCircuitV2 answer'), EdgeType.CreateCircuitV2ResponseType)
}

/** CreateCircuitV3Request (20222) for an SDK signed in by OIDC; answers the reply. */
export async function dialV3(
  emu: RouterEmulator,
  o: { identityId: string; serviceId: string; accessToken: string; circuitId?: string; instanceId?: string; peerData?: ReadonlyMap<number, Uint8Array> },
  timeoutMs = 15_000,
): Promise<DialAnswer> {
  const headers: HeaderMap = new Map([
    [15, encodeString(o.identityId)],
    [16, encodeString(o.serviceId)],
    [17, encodeString(o.circuitId ?? '')],
    [14, encodeString(o.accessToken)],
    [12, encodeStringSlice([])],
    [13, encodeString(o.instanceId ?? '')],
    [10, encodeU32ToBytesMap(o.peerData ?? DIALER_KEY)],
  ])
  const seq = emu.send({ contentType: EdgeType.CreateCircuitV3RequestType, headers })
  return answerOf(await emu.waitFor((f) => replyForOf(f) === seq, timeoutMs, 'the CreateCircuitV3 answer'), EdgeType.CreateCircuitV3ResponseType)
}

/** A CircuitConfirmation (1034): the circuits the router holds idle, idle times in nanoseconds. */
export function sendConfirmation(emu: RouterEmulator, idleNsById: Record<string, bigint>): number {
  const init: MessageInitShape<typeof CircuitConfirmationSchema> = { circuitIds: Object.keys(idleNsById), idleTimes: idleNsById }
  return emu.send({ contentType: CtrlType.CircuitConfirmationType, body: toBinary(CircuitConfirmationSchema, create(CircuitConfirmationSchema, init)) })
}
