/**
 * Which protobuf message travels under which content type, and the only way a body is written or read: typed sends
 * encode from a message schema (the content type comes from this table, never from the caller), typed reads decode
 * into one. A body that does not decode throws MessageDecodeError; the handler that asked logs it and drops the frame.
 * @see router-control-plane.md §2.1 ("GetContentType()"); ziti common/pb/ctrl_pb/impl.go, edge_ctrl_pb/messages.go
 */
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf'
import * as ctrl from './pb/ctrl_pb.ts'
import * as edge from './pb/edge_ctrl_pb.ts'
import * as metrics from './pb/metrics_pb.ts'
import { ChannelContentType, type Frame, type HeaderMap } from './wire/control-frame.ts'
import type { ControlChannel } from './channel/control-channel.ts'

const { ContentType: Ct } = ctrl
const { ContentType: Et } = edge

/** Message schema → content type (the messages of ctrl.proto and edge_ctrl.proto that travel as a body). */
const CONTENT_TYPES = new Map<DescMessage, number>([
  [ctrl.SettingsSchema, Ct.SettingsType],
  [ctrl.CircuitConfirmationSchema, Ct.CircuitConfirmationType],
  [ctrl.CreateTerminatorRequestSchema, Ct.CreateTerminatorRequestType],
  [ctrl.RemoveTerminatorRequestSchema, Ct.RemoveTerminatorRequestType],
  [ctrl.RemoveTerminatorsRequestSchema, Ct.RemoveTerminatorsRequestType],
  [ctrl.UpdateTerminatorRequestSchema, Ct.UpdateTerminatorRequestType],
  [ctrl.ValidateTerminatorsV2RequestSchema, Ct.ValidateTerminatorsV2RequestType],
  [ctrl.ValidateTerminatorsV2ResponseSchema, Ct.ValidateTerminatorsV2ResponseType],
  [ctrl.RouterLinksSchema, Ct.RouterLinksType],
  [ctrl.FaultSchema, Ct.FaultType],
  [ctrl.RouteSchema, Ct.RouteType],
  [ctrl.UnrouteSchema, Ct.UnrouteType],
  [ctrl.VerifyRouterSchema, Ct.VerifyRouterType],
  [ctrl.UpdateCtrlAddressesSchema, Ct.UpdateCtrlAddressesType],
  [ctrl.UpdateClusterLeaderSchema, Ct.UpdateClusterLeaderRequestType],
  [ctrl.PeerStateChangesSchema, Ct.PeerStateChangeRequestType],
  [ctrl.RouterInterfacesUpdateSchema, Ct.UpdateRouterInterfaces],
  [ctrl.LinkStateUpdateSchema, Ct.LinkState],
  [ctrl.ListenersSchema, Ct.UpdateLinkListenersType],
  [metrics.MetricsMessageSchema, Ct.MetricsType],
  [edge.ServerHelloSchema, Et.ServerHelloType],
  [edge.ClientHelloSchema, Et.ClientHelloType],
  [edge.ErrorSchema, Et.ErrorType],
  [edge.SessionRemovedSchema, Et.SessionRemovedType],
  [edge.ApiSessionAddedSchema, Et.ApiSessionAddedType],
  [edge.ApiSessionUpdatedSchema, Et.ApiSessionUpdatedType],
  [edge.ApiSessionRemovedSchema, Et.ApiSessionRemovedType],
  [edge.ApiSessionHeartbeatSchema, Et.ApiSessionHeartbeatType],
  [edge.RequestClientReSyncSchema, Et.RequestClientReSyncType],
  [edge.ValidateSessionsRequestSchema, Et.ValidateSessionsRequestType],
  [edge.UpdateTerminatorRequestSchema, Et.UpdateTerminatorRequestType],
  [edge.RemoveTerminatorRequestSchema, Et.RemoveTerminatorRequestType],
  [edge.HealthEventRequestSchema, Et.HealthEventType],
  [edge.CreateTerminatorV2RequestSchema, Et.CreateTerminatorV2RequestType],
  [edge.CreateTerminatorV2ResponseSchema, Et.CreateTerminatorV2ResponseType],
  [edge.EnrollmentExtendRouterRequestSchema, Et.EnrollmentExtendRouterRequestType],
  [edge.EnrollmentCertsResponseSchema, Et.EnrollmentCertsResponseType],
  [edge.EnrollmentExtendRouterVerifyRequestSchema, Et.EnrollmentExtendRouterVerifyRequestType],
  [edge.DataStateSchema, Et.DataStateType],
  [edge.DataState_ChangeSetSchema, Et.DataStateChangeSetType],
  [edge.SubscribeToDataModelRequestSchema, Et.SubscribeToDataModelRequestType],
])

/** The content type of a message schema; a schema outside the table is our bug. */
export function contentTypeOf(schema: DescMessage): number {
  const ct = CONTENT_TYPES.get(schema)
  if (ct === undefined) throw new TypeError(`no content type is known for ${schema.typeName}`)
  return ct
}

/** The name of a content type (a ContentType member, or a channel built-in), `other` for one nobody defined. */
export function contentTypeName(ct: number): string {
  return NAMES.get(ct) ?? 'other'
}

const NAMES = new Map<number, string>([
  ...Object.entries(ChannelContentType).map(([name, v]) => [v, name] as [number, string]),
  ...enumNames(Ct),
  ...enumNames(Et),
])

function enumNames(e: Record<string, string | number>): [number, string][] {
  return Object.entries(e)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] !== 0)
    .map(([name, v]) => [v, name])
}

export class MessageDecodeError extends Error {}

/** The body of `frame` as a `schema` message. */
export function decodeBody<D extends DescMessage>(schema: D, frame: Pick<Frame, 'body'>): MessageShape<D> {
  try {
    return fromBinary(schema, frame.body)
  } catch (e) {
    throw new MessageDecodeError(`${schema.typeName}: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** A header value as a `schema` message (hello headers 1000 and 1003 carry protobufs). */
export function decodeHeaderMessage<D extends DescMessage>(schema: D, value: Uint8Array): MessageShape<D> {
  return decodeBody(schema, { body: value })
}

export function encodeMessage<D extends DescMessage>(schema: D, init: MessageInitShape<D>): Uint8Array {
  return toBinary(schema, create(schema, init))
}

/** Sends a `schema` message under its content type; answers the sequence (undefined: the channel is closed). */
export function sendTyped<D extends DescMessage>(ch: ControlChannel, schema: D, init: MessageInitShape<D>, headers?: HeaderMap): number | undefined {
  return ch.send({ contentType: contentTypeOf(schema), headers, body: encodeMessage(schema, init) })
}

/** Sends a `schema` message as the reply to `to`. */
export function replyTyped<D extends DescMessage>(ch: ControlChannel, to: Frame, schema: D, init: MessageInitShape<D>, headers?: HeaderMap): number | undefined {
  return ch.reply(to, { contentType: contentTypeOf(schema), headers, body: encodeMessage(schema, init) })
}

/** Sends a `schema` message and waits for the reply frame. */
export function requestTyped<D extends DescMessage>(ch: ControlChannel, schema: D, init: MessageInitShape<D>, timeoutMs: number, headers?: HeaderMap): Promise<Frame> {
  return ch.request({ contentType: contentTypeOf(schema), headers, body: encodeMessage(schema, init) }, timeoutMs)
}
