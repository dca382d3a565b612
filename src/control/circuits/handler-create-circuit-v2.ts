/**
 * CreateCircuitV2Request (20218), an edge router's dial for an SDK that signed in with a legacy session (and every
 * C SDK dial): everything is in headers (11 the Dial session's token, 14 the API session's token, 12 the SDK's
 * certificate fingerprints, 13 the terminator instance, 10 the dialer's peer data); the answer is a reply, 20219 or an
 * edge error. Checks, in the real controller's order (handler_edge_ctrl/create_circuit.go):
 * - the router is still known;
 * - the tokens name a Dial session (flows/routers/router-session-check.ts: invalid API session, invalid session,
 *   incorrect session type);
 * - an edge router policy and a service edge router policy let that identity use this router for that service
 *   (else invalid edge router for session);
 * - the service exists (else invalid service);
 * - an encryption-requiring service needs the dialer's public key (peer data 1003) and then the host's from the
 *   terminator side, else EncryptionDataMissing (the circuit built meanwhile is torn down at once);
 * - then the circuit is built (circuit-builder.ts); a failure is an internal error carrying the circuit id.
 * @see router-control-plane.md §4.4; ziti controller/handler_edge_ctrl/create_circuit.go, common.go createCircuit
 */
import { RouterRequestErrors, type RouterRequestError } from '../../domain/router/router-request-errors.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { Frame } from '../wire/control-frame.ts'
import { decodeStringSlice, decodeU32ToBytesMap, readString } from '../wire/control-headers.ts'
import { teardown, type CircuitContext } from './circuit-context.ts'
import { circuitSenders } from './circuit-senders.ts'

/** Request headers of CreateCircuitV2 (ctrl_msg CreateCircuitReq*). */
export const CIRCUIT_V2_HEADERS = { PeerData: 10, SessionToken: 11, Fingerprints: 12, TerminatorInstanceId: 13, ApiSessionToken: 14 } as const

/** The dialer's public key in peer data (edge.PublicKeyHeader). */
export const PUBLIC_KEY = 1003

export const encryptionDataMissing = RouterRequestErrors.encryptionDataMissing

export function createCircuitV2Handler(router: ConnectedRouter, ctx: CircuitContext): ControlHandler {
  return async (frame) => {
    const send = circuitSenders(router.channel)
    if (!ctx.takeSlot(router.id)) return void send.circuitRefused(frame, RouterRequestErrors.busy('too many circuit requests in progress from this router'))
    try {
      await handle(router, ctx, frame)
    } finally {
      ctx.releaseSlot(router.id)
    }
  }
}

async function handle(router: ConnectedRouter, ctx: CircuitContext, frame: Frame): Promise<void> {
  const send = circuitSenders(router.channel)
  const refuse = (error: RouterRequestError, circuitId?: string) => {
    ctx.observed({ ok: false, failure: 'REFUSED', routerId: router.id, message: error.message, ...(circuitId ? { circuitId } : {}) })
    ctx.log('debug', { routerId: router.id, code: error.code, reason: error.message }, 'circuit request refused')
    send.circuitRefused(frame, error, circuitId)
  }
  const h = frame.headers
  let peerData: Map<number, Uint8Array>
  try {
    peerData = h.has(CIRCUIT_V2_HEADERS.PeerData) ? decodeU32ToBytesMap(h.get(CIRCUIT_V2_HEADERS.PeerData)!) : new Map()
    if (h.has(CIRCUIT_V2_HEADERS.Fingerprints)) decodeStringSlice(h.get(CIRCUIT_V2_HEADERS.Fingerprints)!)
  } catch (e) {
    return refuse(RouterRequestErrors.internal(`the circuit request does not decode: ${e instanceof Error ? e.message : String(e)}`))
  }
  if (!ctx.graph().routers.get(router.id)) return refuse(RouterRequestErrors.internal(`router ${router.id} is no longer known`))
  const session = await ctx.checkSession(
    { sessionToken: readString(h, CIRCUIT_V2_HEADERS.SessionToken) ?? '', apiSessionToken: readString(h, CIRCUIT_V2_HEADERS.ApiSessionToken) ?? '' },
    'Dial',
  )
  if (!session.ok) return refuse(session.error)
  const { identityId, serviceId, apiSessionId, sessionId } = session.session
  if (!ctx.policy.routersFor(identityId, serviceId).includes(router.id)) return refuse(RouterRequestErrors.invalidEdgeRouterForSession())
  const service = ctx.graph().services.get(serviceId)
  if (!service) return refuse(RouterRequestErrors.invalidService())
  if (service.encryptionRequired && !peerData.has(PUBLIC_KEY)) return refuse(encryptionDataMissing('encryption required on service, initiator did not send public header'))
  const startedAt = ctx.now()
  const built = await ctx.builder.build({
    serviceId,
    instanceId: readString(h, CIRCUIT_V2_HEADERS.TerminatorInstanceId) ?? '',
    sourceRouterId: router.id,
    clientId: sessionId,
    identityId,
    apiSessionId,
    sessionId,
    peerData,
  })
  if (!built.ok) {
    ctx.observed({ ok: false, failure: built.failure, routerId: router.id, serviceId, identityId, message: built.message, ...(built.circuitId ? { circuitId: built.circuitId } : {}) })
    ctx.log('info', { routerId: router.id, serviceId, failure: built.failure, reason: built.message, circuitId: built.circuitId }, 'circuit not built')
    return void send.circuitRefused(frame, RouterRequestErrors.internal(built.message), built.circuitId)
  }
  const c = built.circuit
  if (service.encryptionRequired && !built.peerData.has(PUBLIC_KEY)) {
    teardown(ctx, c.id, true, 'egress-fault')
    return refuse(encryptionDataMissing('encryption required on service, terminator did not send public header'), c.id)
  }
  ctx.observed({ ok: true, setupMs: ctx.now() - startedAt })
  if (!send.circuitCreated(frame, 2, { circuitId: c.id, address: c.path.ingressId, peerData: built.peerData, tags: c.tags })) {
    // the router left while the circuit was built: nobody will use it
    teardown(ctx, c.id, true, 'router-offline')
  }
}
