/**
 * CreateCircuitV3Request (20222), an edge router's dial for an SDK that signed in by OIDC (the router authorized the
 * dial against its data model): headers 15 the identity, 16 the service, 17 a circuit id the router chose (honoured),
 * 14 the SDK's access token (required), 12/13/10 as V2; the answer is a reply, 20223 or an edge error. Checks, in the
 * real controller's order (handler_edge_ctrl/create_circuit_v3.go):
 * - the router is still known;
 * - the access token is ours, valid, not revoked, and its `sub` is the identity of header 15 (else invalid API
 *   session: the token, not the router, says who dials);
 * - the service exists and that identity may dial it (else invalid service);
 * - an edge router policy and a service edge router policy let the identity use this router (else access denied);
 * - encryption as V2; then the circuit is built.
 * @see router-control-plane.md §4.4; ziti controller/handler_edge_ctrl/create_circuit_v3.go
 */
import { RouterRequestErrors, type RouterRequestError } from '../../domain/router/router-request-errors.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { Frame } from '../wire/control-frame.ts'
import { decodeStringSlice, decodeU32ToBytesMap, readString } from '../wire/control-headers.ts'
import { teardown, type CircuitContext } from './circuit-context.ts'
import { circuitSenders } from './circuit-senders.ts'
import { CIRCUIT_V2_HEADERS, encryptionDataMissing, PUBLIC_KEY } from './handler-create-circuit-v2.ts'

/** Request headers of CreateCircuitV3 (ctrl_msg CreateCircuitV3Req*, and V2's for the rest). */
export const CIRCUIT_V3_HEADERS = { ...CIRCUIT_V2_HEADERS, IdentityId: 15, ServiceId: 16, CircuitId: 17 } as const

const edgeRouterAccessDenied = RouterRequestErrors.accessDenied

/** Circuit ids a router may choose: UUID-like text, bounded (it is a map key and travels in every message). */
const CIRCUIT_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function createCircuitV3Handler(router: ConnectedRouter, ctx: CircuitContext): ControlHandler {
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
    peerData = h.has(CIRCUIT_V3_HEADERS.PeerData) ? decodeU32ToBytesMap(h.get(CIRCUIT_V3_HEADERS.PeerData)!) : new Map()
    if (h.has(CIRCUIT_V3_HEADERS.Fingerprints)) decodeStringSlice(h.get(CIRCUIT_V3_HEADERS.Fingerprints)!)
  } catch (e) {
    return refuse(RouterRequestErrors.internal(`the circuit request does not decode: ${e instanceof Error ? e.message : String(e)}`))
  }
  if (!ctx.graph().routers.get(router.id)) return refuse(RouterRequestErrors.internal(`router ${router.id} is no longer known`))
  const requestedCircuitId = readString(h, CIRCUIT_V3_HEADERS.CircuitId) ?? ''
  if (requestedCircuitId !== '' && !CIRCUIT_ID.test(requestedCircuitId)) return refuse(RouterRequestErrors.nonRetriable('the circuit id is not one a router makes'))
  const token = readString(h, CIRCUIT_V3_HEADERS.ApiSessionToken) ?? ''
  const identityId = readString(h, CIRCUIT_V3_HEADERS.IdentityId) ?? ''
  if (token === '' || !ctx.accessTokens) return refuse(RouterRequestErrors.invalidApiSession())
  const claims = await ctx.accessTokens.verify(token, 'a')
  if (typeof claims === 'string') return refuse(RouterRequestErrors.invalidApiSession())
  const identities = ctx.identities()
  if (identities.isTokenRevoked({ jti: claims.jti, sub: claims.identityId, iat: claims.iat, apiSessionId: claims.apiSessionId }, ctx.now())) {
    return refuse(RouterRequestErrors.invalidApiSession())
  }
  if (claims.identityId !== identityId || !identities.identity(identityId)) return refuse(RouterRequestErrors.invalidApiSession())
  const serviceId = readString(h, CIRCUIT_V3_HEADERS.ServiceId) ?? ''
  const service = ctx.graph().services.get(serviceId)
  if (!service || !ctx.policy.permissionsOf(identityId, serviceId).includes('Dial')) return refuse(RouterRequestErrors.invalidService())
  if (!ctx.policy.routersFor(identityId, serviceId).includes(router.id)) {
    return refuse(edgeRouterAccessDenied(`identity ${identityId} may not use edge router ${router.id} for service ${serviceId}`))
  }
  if (service.encryptionRequired && !peerData.has(PUBLIC_KEY)) return refuse(encryptionDataMissing('encryption required on service, initiator did not send public header'))
  const startedAt = ctx.now()
  const built = await ctx.builder.build({
    ...(requestedCircuitId ? { circuitId: requestedCircuitId } : {}),
    serviceId,
    instanceId: readString(h, CIRCUIT_V3_HEADERS.TerminatorInstanceId) ?? '',
    sourceRouterId: router.id,
    clientId: identityId,
    identityId,
    apiSessionId: claims.apiSessionId,
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
  if (!send.circuitCreated(frame, 3, { circuitId: c.id, address: c.path.ingressId, peerData: built.peerData, tags: c.tags })) teardown(ctx, c.id, true, 'router-offline')
}
