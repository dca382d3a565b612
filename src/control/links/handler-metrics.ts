/**
 * MetricsMessage (1007): a router's periodic metrics report (every minute by default). Of it edgeplane reads the
 * latency of each of the router's links: histogram `link.<id>.latency` plus `link.<id>.queue_time`, their means in
 * nanoseconds, as the real controller sums them; it becomes the link's latency at that router's end, and so its cost.
 * The rest of the report is skipped (the real controller also turns it into metrics events). A report naming another
 * router as its source is ignored (the real controller takes the source the report names). The work is the report's
 * histograms, not the router's links (a report of one histogram costs one lookup). No answer.
 * @see ziti controller/handler_ctrl/metrics.go, network/network.go AcceptMetricsMsg; router/handler_link/bind.go
 */
import { MetricsMessageSchema } from '../pb/metrics_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { LinksContext } from './links-context.ts'

export function metricsHandler(router: ConnectedRouter, ctx: LinksContext): ControlHandler {
  return (frame) => {
    const msg = decodeBody(MetricsMessageSchema, frame)
    if (msg.sourceId !== '' && msg.sourceId !== router.id) return
    const h = msg.histograms
    let taken = 0
    for (const [name, latency] of Object.entries(h)) {
      if (!name.startsWith('link.') || !name.endsWith('.latency')) continue
      const linkId = name.slice(5, -8)
      const link = ctx.links.get(linkId)
      if (!link || (link.srcRouterId !== router.id && link.dstRouterId !== router.id)) continue
      const queue = h[`link.${linkId}.queue_time`]
      if (ctx.links.latencyReported(router.id, linkId, latency.mean + (queue?.mean ?? 0))) taken++
    }
    if (taken > 0) ctx.logger.debug({ routerId: router.id, links: taken }, 'took link latencies from a metrics report')
  }
}
