/**
 * RouterLinks (1035): the links a router dialed, new ones as they come up and, after each (re)connect, all of them with
 * `fullRefresh` (the controller drops that router's links missing from the list). Rules, as the real controller's:
 * - a report from a connection that is no longer the router's current one is ignored;
 * - the reporter is the source of each link; a known link of an equal or greater iteration is kept as it is;
 * - a link is usable at once (Connected), with a cost of 1 + 65 s + 65 s until the routers report latencies.
 * The registry (link-registry.ts) refuses what is too large or not the reporter's to report.
 * No answer is sent (the router sends it fire-and-forget).
 * @see router-control-plane.md §5.4; ziti controller/handler_ctrl/router_link.go, network/network.go NotifyExistingLink
 */
import { RouterLinksSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { isCurrent, type LinksContext } from './links-context.ts'

/** Link ids named in one log line at most. */
const LOGGED_IDS = 10

export function routerLinksHandler(router: ConnectedRouter, ctx: LinksContext): ControlHandler {
  return (frame) => {
    const msg = decodeBody(RouterLinksSchema, frame)
    if (!isCurrent(ctx, router)) {
      ctx.counted.report('ignored', msg.links.length)
      ctx.logger.info({ routerId: router.id, links: msg.links.length }, 'ignoring a links report from an old connection of the router')
      return
    }
    // the decoded links are what the registry reads (it copies what it keeps)
    const out = ctx.links.report(router.id, msg.links, msg.fullRefresh)
    ctx.counted.report('added', out.added.length)
    ctx.counted.report('kept', out.kept)
    ctx.counted.report('removed', out.removed.length)
    ctx.counted.report('refused', out.refused)
    if (out.removed.length > 0) {
      ctx.logger.info({ routerId: router.id, linkIds: out.removed.slice(0, LOGGED_IDS).map((l) => l.id), count: out.removed.length }, 'removed links not present in the full reported set')
    }
    if (out.added.length > 0) {
      ctx.logger.info({ routerId: router.id, linkIds: out.added.slice(0, LOGGED_IDS).map((l) => l.id), count: out.added.length }, 'router reported links added')
    }
    if (out.refused > 0) ctx.logger.warn({ routerId: router.id, refused: out.refused }, 'refused reported links (too large, to itself, another router\'s id, or too many)')
  }
}
