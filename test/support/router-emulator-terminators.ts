// The terminator messages of an emulated edge router (router-emulator.ts, through its public send/reply/waitFor/
// received), and an SDK that binds a service as a real one does through the Client API (an identity with a
// password, a legacy API session, a Bind service session). Written from router-control-plane.md §4.2 and §4.3 and
// ziti router/xgress_edge/hosted.go: requests are encoded and answers decoded as a real router does.
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf'
import {
  ContentType as EdgeType,
  CreateTerminatorV2RequestSchema,
  CreateTerminatorV2ResponseSchema,
  HealthEventRequestSchema,
  RemoveTerminatorRequestSchema as EdgeRemoveTerminatorRequestSchema,
  UpdateTerminatorRequestSchema,
} from '../../src/control/pb/edge_ctrl_pb.ts'
import {
  ContentType as CtrlType,
  CreateTerminatorRequestSchema,
  RemoveTerminatorRequestSchema,
  RemoveTerminatorsRequestSchema,
  UpdateTerminatorRequestSchema as FabricUpdateTerminatorRequestSchema,
  ValidateTerminatorsV2RequestSchema,
  ValidateTerminatorsV2ResponseSchema,
  type ValidateTerminatorsV2Request,
} from '../../src/control/pb/ctrl_pb.ts'
import { ChannelContentType, ChannelHeader, type Frame } from '../../src/control/wire/control-frame.ts'
import { decodeString, readBool, readU32 } from '../../src/control/wire/control-headers.ts'
import { expectStatus, type TestServer } from './harness.ts'
import { replyForOf, type RouterEmulator } from './router-emulator.ts'

const body = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toBinary(schema, create(schema, init))

/** Waits for the reply to `seq`. */
export const replyTo = (router: RouterEmulator, seq: number, what = 'the reply', timeoutMs = 5_000) =>
  router.waitFor((f) => replyForOf(f) === seq, timeoutMs, what)

/**
 * Waits for the reply to `seq` by polling `received` from where it last looked (for floods: the emulator's waitFor
 * looks through every frame received on every frame that arrives).
 */
export async function pollReply(router: RouterEmulator, seq: number, timeoutMs = 60_000, what = 'the reply'): Promise<Frame> {
  const deadline = performance.now() + timeoutMs
  for (let seen = 0; ; await Bun.sleep(10)) {
    for (; seen < router.received.length; seen++) if (replyForOf(router.received[seen]!) === seq) return router.received[seen]!
    if (router.isClosed) throw new Error(`closed while waiting for ${what}`)
    if (performance.now() > deadline) throw new Error(`${what} did not come within ${timeoutMs} ms`)
  }
}

/** A Result as a router reads it: success, text, and header 10 (the rate-limited error code). */
export function resultOf(f: Frame): { success: boolean; text: string; errorCode: number | undefined } {
  if (f.contentType !== ChannelContentType.Result) throw new Error(`expected a Result, got content type ${f.contentType}`)
  return { success: readBool(f.headers, ChannelHeader.ResultSuccess) === true, text: decodeString(f.body), errorCode: readU32(f.headers, 10) }
}

/** An edge error reply (20002) as a router reads it: message, code (1014), retry hint (18). */
export function edgeErrorOf(f: Frame): { message: string; code: number | undefined; retryHint: number | undefined } {
  if (f.contentType !== EdgeType.ErrorType) throw new Error(`expected an edge error, got content type ${f.contentType}`)
  return { message: decodeString(f.body), code: readU32(f.headers, 1014), retryHint: readU32(f.headers, 18) }
}

export type CreateRequest = MessageInitShape<typeof CreateTerminatorV2RequestSchema>
export type CreateResponse = MessageShape<typeof CreateTerminatorV2ResponseSchema>

/** Sends CreateTerminatorV2Request (fire and forget, as hosted.go does); answers its sequence. */
export function sendCreate(router: RouterEmulator, req: CreateRequest): number {
  return router.send({ contentType: EdgeType.CreateTerminatorV2RequestType, body: body(CreateTerminatorV2RequestSchema, req) })
}

/** Sends CreateTerminatorV2Request and decodes the CreateTerminatorV2Response that replies to it. */
export async function createTerminator(router: RouterEmulator, req: CreateRequest, timeoutMs = 5_000): Promise<CreateResponse> {
  const seq = sendCreate(router, req)
  const f = await replyTo(router, seq, 'the CreateTerminatorV2Response', timeoutMs)
  if (f.contentType !== EdgeType.CreateTerminatorV2ResponseType) throw new Error(`expected a CreateTerminatorV2Response, got content type ${f.contentType}`)
  return fromBinary(CreateTerminatorV2ResponseSchema, f.body)
}

/** RemoveTerminatorsRequest (1038), answered with a Result. */
export async function removeTerminators(router: RouterEmulator, ids: string[]) {
  const seq = router.send({ contentType: CtrlType.RemoveTerminatorsRequestType, body: body(RemoveTerminatorsRequestSchema, { terminatorIds: ids }) })
  return resultOf(await replyTo(router, seq, 'the RemoveTerminators Result'))
}

/** UpdateTerminatorRequest (20209): the reply frame (20210 on success, 20002 on a refusal). */
export async function updateTerminator(router: RouterEmulator, req: MessageInitShape<typeof UpdateTerminatorRequestSchema>): Promise<Frame> {
  const seq = router.send({ contentType: EdgeType.UpdateTerminatorRequestType, body: body(UpdateTerminatorRequestSchema, req) })
  return replyTo(router, seq, 'the UpdateTerminator answer')
}

/** RemoveTerminatorRequest (20211), the edge single removal: the reply frame (20212 or 20002). */
export async function removeEdgeTerminator(router: RouterEmulator, req: MessageInitShape<typeof EdgeRemoveTerminatorRequestSchema>): Promise<Frame> {
  const seq = router.send({ contentType: EdgeType.RemoveTerminatorRequestType, body: body(EdgeRemoveTerminatorRequestSchema, req) })
  return replyTo(router, seq, 'the RemoveTerminator answer')
}

/** HealthEventRequest (20214): no answer comes. */
export function sendHealthEvent(router: RouterEmulator, req: MessageInitShape<typeof HealthEventRequestSchema>): number {
  return router.send({ contentType: EdgeType.HealthEventType, body: body(HealthEventRequestSchema, req) })
}

/** The fabric CreateTerminatorRequest (1011), RemoveTerminatorRequest (1012), UpdateTerminatorRequest (1018): Results. */
export async function fabricCreate(router: RouterEmulator, req: MessageInitShape<typeof CreateTerminatorRequestSchema>) {
  const seq = router.send({ contentType: CtrlType.CreateTerminatorRequestType, body: body(CreateTerminatorRequestSchema, req) })
  return resultOf(await replyTo(router, seq, 'the CreateTerminator Result'))
}
export async function fabricRemove(router: RouterEmulator, terminatorId: string) {
  const seq = router.send({ contentType: CtrlType.RemoveTerminatorRequestType, body: body(RemoveTerminatorRequestSchema, { terminatorId }) })
  return resultOf(await replyTo(router, seq, 'the RemoveTerminator Result'))
}
export async function fabricUpdate(router: RouterEmulator, req: MessageInitShape<typeof FabricUpdateTerminatorRequestSchema>) {
  const seq = router.send({ contentType: CtrlType.UpdateTerminatorRequestType, body: body(FabricUpdateTerminatorRequestSchema, req) })
  return resultOf(await replyTo(router, seq, 'the UpdateTerminator Result'))
}

/** The ValidateTerminatorsV2Requests a router received, decoded, in order. */
export function validationRequests(router: RouterEmulator): { frame: Frame; req: ValidateTerminatorsV2Request }[] {
  return router.received
    .filter((f) => f.contentType === CtrlType.ValidateTerminatorsV2RequestType)
    .map((frame) => ({ frame, req: fromBinary(ValidateTerminatorsV2RequestSchema, frame.body) }))
}

/** Waits for a ValidateTerminatorsV2Request after the `skip` first ones. */
export async function nextValidation(router: RouterEmulator, skip = 0, timeoutMs = 5_000) {
  const isValidation = (f: Frame) => f.contentType === CtrlType.ValidateTerminatorsV2RequestType
  const frame = await router.waitFor((f) => isValidation(f) && router.received.filter(isValidation).indexOf(f) === skip, timeoutMs, 'a ValidateTerminatorsV2Request')
  return { frame, req: fromBinary(ValidateTerminatorsV2RequestSchema, frame.body) }
}

/**
 * Answers a validation request as a router does (ValidateTerminatorsV2Response, a reply): each terminator it names
 * valid or not by `isValid`, with the marker it came with (`marker`: another one, to test stale answers).
 */
export function answerValidation(router: RouterEmulator, v: { frame: Frame; req: ValidateTerminatorsV2Request }, isValid: (id: string) => boolean, marker?: (m: bigint) => bigint): number {
  const states = Object.fromEntries(
    v.req.terminators.map((t) => [t.id, { valid: isValid(t.id), reason: isValid(t.id) ? 0 : 1, detail: isValid(t.id) ? 'valid' : 'not found', marker: marker ? marker(t.marker) : t.marker }]),
  )
  return router.reply(v.frame, { contentType: CtrlType.ValidateTerminatorsV2ResponseType, body: body(ValidateTerminatorsV2ResponseSchema, { states }) })
}

/** An SDK that binds: its identity, its legacy API session token and its Bind session's JWT. */
export interface BindingSdk {
  identityId: string
  apiSessionToken: string
  sessionToken: string
  sessionId: string
}

/**
 * Makes what an SDK hosting `serviceId` through `routerIds` needs: an identity with a password (role `#<tag>`), a Bind
 * service policy, an edge router policy and a service edge router policy naming those routers, a password login on
 * the Client API and `POST /sessions` of type Bind (or `type`).
 */
export async function bindingSdk(
  srv: TestServer,
  o: { name: string; serviceId: string; routerIds: string[]; type?: 'Bind' | 'Dial' },
): Promise<BindingSdk> {
  const tag = `${o.name}-tag`
  const identityId = await srv.create('/identities', { name: o.name, type: 'User', isAdmin: false, roleAttributes: [tag] })
  expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId, username: o.name, password: `${o.name}-pass-1` }), 201)
  await srv.create('/service-policies', { name: `${o.name}-sp`, type: o.type ?? 'Bind', semantic: 'AnyOf', identityRoles: [`#${tag}`], serviceRoles: [`@${o.serviceId}`] })
  await srv.create('/edge-router-policies', { name: `${o.name}-erp`, semantic: 'AnyOf', identityRoles: [`#${tag}`], edgeRouterRoles: o.routerIds.map((id) => `@${id}`) })
  await srv.create('/service-edge-router-policies', { name: `${o.name}-serp`, semantic: 'AnyOf', serviceRoles: [`@${o.serviceId}`], edgeRouterRoles: o.routerIds.map((id) => `@${id}`) })
  const apiSessionToken = await srv.login(o.name, `${o.name}-pass-1`, 'client')
  const session = await srv.as(apiSessionToken, 'client').post('/sessions', { serviceId: o.serviceId, type: o.type ?? 'Bind' })
  expectStatus(session, 201)
  return { identityId, apiSessionToken, sessionToken: session.body.data.token, sessionId: session.body.data.id }
}

/** A CreateTerminatorV2Request of `sdk`'s session for terminator `address` (the rest as a Go SDK sends it). */
export function bindRequest(sdk: BindingSdk, address: string, more: Omit<CreateRequest, '$typeName'> = {}): CreateRequest {
  return { address, sessionToken: sdk.sessionToken, apiSessionToken: sdk.apiSessionToken, fingerprints: [], peerData: {}, cost: 0, precedence: 0, instanceId: '', ...more }
}
