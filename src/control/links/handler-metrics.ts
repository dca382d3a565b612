/**
 * MetricsMessage (1007): a router's periodic metrics report (every minute by default). Of it edgeplane reads the
 * latency of each of the router's links: histogram `link.<id>.latency` plus `link.<id>.queue_time`, their means in
 * nanoseconds, as the real controller sums them; it becomes the link's latency at that router's end, and so its cost.
 * The rest of the report is skipped (the real controller also turns it into metrics events). A report naming another
 * router as its source is ignored (the real controller takes the source the report names). No answer.
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
    for (const link of ctx.links.linksOf(router.id)) {
      const latency = Object.hasOwn(h, `link.${link.id}.latency`) ? h[`link.${link.id}.latency`] : undefined
      if (!latency) continue
      const queue = Object.hasOwn(h, `link.${link.id}.queue_time`) ? h[`link.${link.id}.queue_time`] : undefined
      ctx.links.latencyReported(router.id, link.id, latency.mean + (queue?.mean ?? 0))
    }
  }
}
