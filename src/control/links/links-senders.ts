/**
 * What the links feature sends a router, typed: PeerStateChanges (1050) about other routers, a LinkFault (1004) for a
 * link the controller dropped (the router closes it), and the Result answering a VerifyRouter.
 * @see router-control-plane.md §3.5, §4.5; ziti controller/network/router_messaging.go, handler_ctrl/fault.go,
 *   verify_router.go
 */
import { FaultSchema, FaultSubject, PeerStateChangesSchema } from '../pb/ctrl_pb.ts'
import type { ControlChannel } from '../channel/control-channel.ts'
import { sendTyped } from '../control-messages.ts'
import type { Frame } from '../wire/control-frame.ts'
import type { PeerChange } from './peer-states.ts'

export interface LinkSenders {
  /** PeerStateChanges with these entries; false when the channel is closed. */
  peerStateChanges(changes: PeerChange[]): boolean
  /** Fault{LinkFault, id, iteration}; false when the channel is closed. */
  linkFault(linkId: string, iteration: number): boolean
  /** The Result (2) answering a VerifyRouter: success, and the text the real controller writes. */
  verifyResult(to: Frame, success: boolean, text: string): void
}

export function linkSenders(ch: ControlChannel): LinkSenders {
  return {
    peerStateChanges: (changes) => sendTyped(ch, PeerStateChangesSchema, { changes }) !== undefined,
    linkFault: (id, iteration) => sendTyped(ch, FaultSchema, { subject: FaultSubject.LinkFault, id, iteration }) !== undefined,
    verifyResult: (to, success, text) => ch.replyResult(to, success, text),
  }
}
