// The link side of an emulated router (router-emulator.ts, through its public send/waitFor/received and its hello
// headers): its link listeners in hello header 1000, what it sends about links (RouterLinks, VerifyRouter, faults,
// LinkStateUpdate, UpdateLinkListeners, metrics with link latencies), and what the controller sends it about its
// peers and links (PeerStateChanges, LinkFault), decoded as a real router decodes them. Written from
// router-control-plane.md §5.4 and ziti router/handler_ctrl/peer_state.go, fault.go, router/link/link_registry.go and
// router/handler_link/bind.go.
import { X509Certificate } from 'node:crypto'
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf'
import {
  ContentType as CtrlType,
  FaultSchema,
  FaultSubject,
  LinkStateUpdateSchema,
  ListenersSchema,
  PeerState,
  PeerStateChangesSchema,
  RouterLinksSchema,
  VerifyRouterSchema,
  type Fault,
  type PeerStateChange,
} from '../../src/control/pb/ctrl_pb.ts'
import { MetricsMessageSchema } from '../../src/control/pb/metrics_pb.ts'
import type { Frame } from '../../src/control/wire/control-frame.ts'
import type { RouterEmulator } from './router-emulator.ts'
import { replyTo, resultOf } from './router-emulator-terminators.ts'

const body = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toBinary(schema, create(schema, init))

export type ListenerInit = MessageInitShape<typeof ListenersSchema>['listeners']

/** Hello headers announcing link listeners (header 1000 = a Listeners protobuf), for EmulatorOptions.helloHeaders. */
export function linkListenersHeader(listeners: NonNullable<ListenerInit>): Record<number, Uint8Array> {
  return { 1000: body(ListenersSchema, { listeners }) }
}

/** One tls link listener as a router's `link.listeners` entry announces it (advertise address, default group). */
export const tlsListener = (port: number, groups = ['default']) => ({ address: `tls:127.0.0.1:${port}`, protocol: 'tls', groups })

/** The SHA-1 fingerprint of a certificate's leaf, lowercase hex, as a router computes it (nfpem). */
export function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint.replaceAll(':', '').toLowerCase()
}

/** Every PeerStateChanges received so far, decoded (a real router panics on none of them: decoding throws here). */
export function peerStateMessages(router: RouterEmulator): PeerStateChange[][] {
  return router.received.filter((f) => f.contentType === CtrlType.PeerStateChangeRequestType).map((f) => fromBinary(PeerStateChangesSchema, f.body).changes)
}

/** The latest state received about `peerId`, undefined when none came. */
export function lastPeerState(router: RouterEmulator, peerId: string): PeerStateChange | undefined {
  let last: PeerStateChange | undefined
  for (const changes of peerStateMessages(router)) for (const c of changes) if (c.id === peerId) last = c
  return last
}

/** Waits until the latest state received about `peerId` is `state`; answers it. */
export async function waitPeerState(router: RouterEmulator, peerId: string, state: PeerState, timeoutMs = 5_000): Promise<PeerStateChange> {
  await router.waitFor(() => lastPeerState(router, peerId)?.state === state, timeoutMs, `peer ${peerId} ${PeerState[state]}`)
  return lastPeerState(router, peerId)!
}

export type RouterLinkInit = NonNullable<MessageInitShape<typeof RouterLinksSchema>['links']>[number]

/** RouterLinks (1035), fire and forget as a router sends it; answers its sequence. */
export function sendRouterLinks(router: RouterEmulator, links: RouterLinkInit[], fullRefresh = false): number {
  return router.send({ contentType: CtrlType.RouterLinksType, body: body(RouterLinksSchema, { links, fullRefresh }) })
}

/** A link as the dialing router reports it (tls, iteration 1 unless told). */
export const dialedLink = (id: string, destRouterId: string, port: number, iteration = 1): RouterLinkInit => ({
  id,
  destRouterId,
  linkProtocol: 'tls',
  dialAddress: `tls:127.0.0.1:${port}`,
  iteration,
})

/** VerifyRouter (1036) sent for a reply as a listening router does (10 s), its Result as the router reads it. */
export async function verifyRouter(router: RouterEmulator, routerId: string, fingerprints: string[]) {
  const seq = router.send({ contentType: CtrlType.VerifyRouterType, body: body(VerifyRouterSchema, { routerId, fingerprints }) })
  return resultOf(await replyTo(router, seq, 'the VerifyRouter Result', 10_000))
}

/** Fault (1004) as a router sends one. */
export function sendFault(router: RouterEmulator, subject: FaultSubject, id: string, iteration = 0): number {
  return router.send({ contentType: CtrlType.FaultType, body: body(FaultSchema, { subject, id, iteration }) })
}

/** The LinkFaults the controller sent this router, decoded. */
export function linkFaultsReceived(router: RouterEmulator): Fault[] {
  return router.received.filter((f) => f.contentType === CtrlType.FaultType).map((f: Frame) => fromBinary(FaultSchema, f.body))
}

/** Waits for a LinkFault about `linkId`. */
export async function waitLinkFault(router: RouterEmulator, linkId: string, timeoutMs = 5_000): Promise<Fault> {
  await router.waitFor(() => linkFaultsReceived(router).some((f) => f.id === linkId), timeoutMs, `a LinkFault for ${linkId}`)
  return linkFaultsReceived(router).find((f) => f.id === linkId)!
}

/** LinkStateUpdate (1053). */
export function sendLinkState(router: RouterEmulator, linkId: string, linkIteration: number, stateIteration: number, conns: { type: string; localAddr: string; remoteAddr: string }[]): number {
  return router.send({ contentType: CtrlType.LinkState, body: body(LinkStateUpdateSchema, { linkId, linkIteration, connState: { stateIteration, conns } }) })
}

/** UpdateLinkListeners (1056, body Listeners). */
export function sendUpdateLinkListeners(router: RouterEmulator, listeners: NonNullable<ListenerInit>): number {
  return router.send({ contentType: CtrlType.UpdateLinkListenersType, body: body(ListenersSchema, { listeners }) })
}

/** A metrics report (1007) with the link latency histograms a router keeps (`link.<id>.latency`, `.queue_time`, ns). */
export function sendLinkLatencies(router: RouterEmulator, sourceId: string, latencies: Record<string, { latencyNs: number; queueNs?: number }>): number {
  const histograms: Record<string, { count: bigint; mean: number }> = {}
  for (const [id, l] of Object.entries(latencies)) {
    histograms[`link.${id}.latency`] = { count: 10n, mean: l.latencyNs }
    if (l.queueNs !== undefined) histograms[`link.${id}.queue_time`] = { count: 10n, mean: l.queueNs }
  }
  return router.send({ contentType: CtrlType.MetricsType, body: body(MetricsMessageSchema, { sourceId, histograms }) })
}
