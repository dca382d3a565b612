/**
 * The routers' control plane (control/control-module.ts): its own port when `ctrlListen` is set, and the API port's
 * sockets that negotiate `ziti-ctrl`; admission against the policy graph's routers and the controller's CAs.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { MetricsRegistry } from '../lib/metrics.ts'
import type { EventBus } from '../actors/runtime/event-bus.ts'
import { startControlPlane, type ControlPlane } from '../control/control-module.ts'
import { createSessionsFeature } from '../control/sessions/sessions-feature.ts'
import { VERSION, BUILD_DATE, REVISION } from '../version.ts'
import type { Actors } from './boot-actors.ts'
import type { AuthParts } from './boot-auth.ts'
import type { ServerOptions } from './boot-options.ts'

/** The key and certificate chain the listeners present (the server certificate). */
export type TlsCredentials = { key: string; cert: string }

export async function bootControl(
  opts: ServerOptions,
  actors: Actors,
  auth: AuthParts,
  ctx: { bus: EventBus; clock: Clock; logger: Logger; registry: MetricsRegistry; tls: TlsCredentials },
): Promise<ControlPlane> {
  const { graph, pki, sessions, identities } = actors
  return startControlPlane({
    routers: { get: (id) => graph.snapshot().routers.get(id) },
    bus: ctx.bus,
    trustAnchors: () => auth.ownCas,
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: ctx.registry,
    // the real controller sends its identity's name; a cluster node is known to routers by its node name
    controllerId: opts.cluster?.nodeName ?? pki.server.view.subjectCn,
    version: { version: VERSION, revision: REVISION, buildDate: BUILD_DATE },
    listen: opts.ctrlListen ? { ...opts.ctrlListen, tls: ctx.tls } : undefined,
    limits: opts.controlLimits,
    heartbeat: opts.controlHeartbeat,
    churnLimitMs: opts.routerChurnLimitMs,
    // what routers send beyond the handshake, and what syncing an edge router sends it, feature by feature
    features: (fctx) => [
      // API sessions pushed to edge routers, their heartbeats, resyncs and session validation
      createSessionsFeature({ sessions, identities, bus: ctx.bus }, fctx),
    ],
  })
}
