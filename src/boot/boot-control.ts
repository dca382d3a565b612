/**
 * The routers' control plane (control/control-module.ts): its own port when `ctrlListen` is set, and the API port's
 * sockets that negotiate `ziti-ctrl`; admission against the policy graph's routers and the controller's CAs.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { MetricsRegistry } from '../lib/metrics.ts'
import type { EventBus } from '../actors/runtime/event-bus.ts'
import { startControlPlane, type ControlPlane } from '../control/control-module.ts'
import { createTerminatorsFeature } from '../control/terminators/terminators-feature.ts'
import type { WriteGate } from '../control/terminators/terminator-context.ts'
import { createRouterSessionCheck } from '../flows/routers/router-session-check.ts'
import type { PolicyReads } from '../domain/policy/policy-reads.ts'
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
  ctx: {
    bus: EventBus
    clock: Clock
    logger: Logger
    registry: MetricsRegistry
    tls: TlsCredentials
    /** The policy index (which edge routers an identity may use for a service). */
    policy: Pick<PolicyReads, 'routersFor'>
    /** The bounded queue of model writes the APIs share (the real controller's command rate limiter). */
    writeQueue: WriteGate
    /** How long an API session lives without activity. */
    timeoutMs: number
  },
): Promise<ControlPlane> {
  const { graph, pki } = actors
  // the controller's id: a cluster node's name (routers know the nodes by it), else the server certificate's name
  const controllerId = opts.cluster?.nodeName ?? pki.server.view.subjectCn
  const checkSession = createRouterSessionCheck({
    sessions: actors.sessions,
    identities: actors.identities,
    serviceTokens: auth.tokens,
    accessTokens: auth.oidcSettings.enabled ? auth.oidcTokens : undefined,
    timeoutMs: ctx.timeoutMs,
    now: () => ctx.clock.now(),
  })
  return startControlPlane({
    routers: { get: (id) => graph.snapshot().routers.get(id) },
    bus: ctx.bus,
    trustAnchors: () => auth.ownCas,
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: ctx.registry,
    // the real controller sends its identity's name; a cluster node is known to routers by its node name
    controllerId,
    version: { version: VERSION, revision: REVISION, buildDate: BUILD_DATE },
    listen: opts.ctrlListen ? { ...opts.ctrlListen, tls: ctx.tls } : undefined,
    limits: opts.controlLimits,
    heartbeat: opts.controlHeartbeat,
    churnLimitMs: opts.routerChurnLimitMs,
    // what routers send beyond the handshake, and what syncing an edge router sends it, feature by feature
    features: (fc) => [
      createTerminatorsFeature(
        {
          graph,
          bus: ctx.bus,
          policy: ctx.policy,
          checkSession,
          writes: ctx.writeQueue,
          controllerId,
          isClusterMember: actors.clusterNode ? (name) => actors.controllers.snapshot().byId.has(name) : undefined,
          validateEveryMs: opts.terminatorValidateEveryMs,
        },
        fc,
      ),
    ],
  })
}
