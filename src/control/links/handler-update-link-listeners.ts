/**
 * UpdateLinkListeners (1056, body Listeners): a connected router replaced its link listeners (its link subsystem
 * rebuilt). The listeners replace those of its hello and the router is announced again, as the real controller does:
 * to every other router (Healthy, with the new listeners) and it is told about each of them. Edgeplane keeps at most
 * MAX_LINK_LISTENERS listeners of bounded size (a larger one is dropped); a report from a displaced connection is
 * ignored. No answer.
 * @see ziti controller/handler_ctrl/update_link_listeners.go, network/router_messaging.go RouterListenersUpdated
 */
import { ListenersSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter, LinkListenerInfo } from '../control-routers.ts'
import { isCurrent, type LinksContext } from './links-context.ts'

/** Link listeners kept per router, and the size of each one's fields. */
export const MAX_LINK_LISTENERS = 64
export const LISTENER_LIMITS = { address: 1_024, protocol: 64, groups: 32, group: 256, localBinding: 256 } as const

export function updateLinkListenersHandler(router: ConnectedRouter, ctx: LinksContext): ControlHandler {
  return (frame) => {
    const msg = decodeBody(ListenersSchema, frame)
    if (!isCurrent(ctx, router)) return
    const kept = boundedListeners(msg.listeners)
    if (kept.length < Math.min(msg.listeners.length, MAX_LINK_LISTENERS)) ctx.logger.warn({ routerId: router.id }, 'dropped link listeners too large to keep')
    router.linkListeners = kept
    ctx.logger.info({ routerId: router.id, listenerCount: kept.length }, 'updated router link listeners; redistributing to peers')
    ctx.peers.changed(router.id, true)
  }
}

/** The first MAX_LINK_LISTENERS listeners whose fields are within LISTENER_LIMITS, copied. */
export function boundedListeners(listeners: readonly LinkListenerInfo[]): LinkListenerInfo[] {
  const L = LISTENER_LIMITS
  return listeners
    .slice(0, MAX_LINK_LISTENERS)
    .filter((l) => l.address.length <= L.address && l.protocol.length <= L.protocol && l.localBinding.length <= L.localBinding && l.groups.length <= L.groups && l.groups.every((g) => g.length <= L.group))
    .map((l) => ({ address: l.address, protocol: l.protocol, groups: [...l.groups], localBinding: l.localBinding }))
}
