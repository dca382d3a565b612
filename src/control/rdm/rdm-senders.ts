/**
 * What the router data model sends a router: change sets and full states already encoded from their schemas (by the
 * change-set log and the projection: the same bytes for every router), with the subscription's header 1026, and the
 * current-index message (no body, header 1025). Nothing else writes these content types.
 * @see router-control-plane.md §3.2
 */
import type { ControlChannel } from '../channel/control-channel.ts'
import { ContentType, Header } from '../pb/edge_ctrl_pb.ts'
import type { HeaderMap } from '../wire/control-frame.ts'
import { encodeString, encodeU64 } from '../wire/control-headers.ts'
import type { LoggedChangeSet } from './rdm-log.ts'
import type { EncodedDataState, EncodedKeys } from './rdm-projection.ts'

const subscriptionHeader = (subscriptionId: string | undefined): HeaderMap =>
  new Map(subscriptionId ? [[Header.RouterDataModelSubscriptionId as number, encodeString(subscriptionId)]] : [])

/** A change set of the log (DataState.ChangeSet, 20501); false: the channel is closed. */
export function sendChangeSet(ch: ControlChannel, entry: LoggedChangeSet, subscriptionId: string | undefined): boolean {
  return ch.send({ contentType: ContentType.DataStateChangeSetType, headers: subscriptionHeader(subscriptionId), body: entry.body }) !== undefined
}

/** A full state (DataState, 20500). */
export function sendDataState(ch: ControlChannel, state: EncodedDataState, subscriptionId: string | undefined): boolean {
  return ch.send({ contentType: ContentType.DataStateType, headers: subscriptionHeader(subscriptionId), body: state.body }) !== undefined
}

/** The public keys as a synthetic change set (no subscription header: a router takes synthetic ones from anyone). */
export function sendPublicKeys(ch: ControlChannel, keys: EncodedKeys): boolean {
  return ch.send({ contentType: ContentType.DataStateChangeSetType, body: keys.body }) !== undefined
}

/** CurrentIndexMessage (20506): empty body, the model's index in header 1025. */
export function sendCurrentIndex(ch: ControlChannel, index: bigint): boolean {
  return ch.send({ contentType: ContentType.CurrentIndexMessageType, headers: new Map([[Header.RouterDataModelIndex as number, encodeU64(index)]]) }) !== undefined
}
