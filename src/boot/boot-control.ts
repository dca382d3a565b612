/**
 * The routers' control plane (control/control-module.ts): its own port when `ctrlListen` is set, and the API port's
 * sockets that negotiate `ziti-ctrl`; admission against the policy graph's routers and the controller's CAs; and its
 * features: the router data model (control/rdm/) and, on a cluster node, the cluster's control endpoints (control/ctrls/).
 */
import type { Clock } from '../lib/clock.ts'
import { newCuid } from '../lib/ids.ts'
import type { Logger } from '../lib/logger.ts'
import type { MetricsRegistry } from '../lib/metrics.ts'
import type { EventBus } from '../actors/runtime/event-bus.ts'
import { startControlPlane, type ControlPlane } from '../control/control-module.ts'
import { createRdmFeature } from '../control/rdm/rdm-feature.ts'
import { createCtrlAddressesFeature } from '../control/ctrls/ctrl-addresses-feature.ts'
import { clusterIndexing, localIndexing, RdmProjection } from '../control/rdm/rdm-projection.ts'
import { firstCertDer } from '../control/rdm/rdm-entities.ts'
import type { RdmSources, TrustedKey } from '../control/rdm/rdm-sources.ts'
import { createSessionsFeature } from '../control/sessions/sessions-feature.ts'
import { createCircuitsFeature, type CircuitsFeature } from '../control/circuits/circuits-feature.ts'
import { createTerminatorsFeature } from '../control/terminators/terminators-feature.ts'
import type { WriteGate } from '../control/terminators/terminator-context.ts'
import { createRouterSessionCheck } from '../flows/routers/router-session-check.ts'
import { LinkRegistry } from '../control/links/link-registry.ts'
import { createLinksFeature } from '../control/links/links-feature.ts'
import type { CircuitControl, LinkControl } from '../domain/fabric/fabric-types.ts'
import { createFaultDispatcher } from '../control/faults/fault-dispatcher.ts'
import { VERSION, BUILD_DATE, REVISION } from '../version.ts'
import type { Actors } from './boot-actors.ts'
import type { AuthParts } from './boot-auth.ts'
import type { ServerOptions } from './boot-options.ts'
import type { PolicyParts } from './boot-policy.ts'

/** The key and certificate chain the listeners present (the server certificate). */
export type TlsCredentials = { key: string; cert: string }

export async function bootControl(
  opts: ServerOptions,
  actors: Actors,
  auth: AuthParts,
  policy: PolicyParts,
  ctx: {
    bus: EventBus
    clock: Clock
    logger: Logger
    registry: MetricsRegistry
    tls: TlsCredentials
    /** The bounded queue of model writes the APIs share (the real controller's command rate limiter). */
    writeQueue: WriteGate
    /** How long an API session lives without activity. */
    timeoutMs: number
  },
): Promise<ControlPlane & { links: LinkControl; circuits: CircuitControl }> {
  const { graph, pki, clusterNode, sessions, identities } = actors
  // the controller's id: a cluster node's name (routers know the nodes by it), else the server certificate's name
  const controllerId = opts.cluster?.nodeName ?? pki.server.view.subjectCn
  const projection = new RdmProjection(
    rdmSources(actors, policy, ctx.clock),
    ctx.bus,
    // a cluster node numbers the model with etcd's revisions, on the cluster's timeline (control/rdm/rdm-projection.ts)
    clusterNode ? clusterIndexing(clusterNode.clusterId, () => clusterNode.log.effectRevision) : localIndexing(newCuid(ctx.clock.now())),
    {
      warn: (fields, msg) => ctx.logger.warn(fields, msg),
      logCapacity: opts.routerDataModel?.logCapacity,
      logBytes: opts.routerDataModel?.logBytes,
      lockSweepEveryMs: opts.routerDataModel?.lockSweepEveryMs,
    },
  )
  const checkSession = createRouterSessionCheck({
    sessions,
    identities,
    serviceTokens: auth.tokens,
    accessTokens: auth.oidcSettings.enabled ? auth.oidcTokens : undefined,
    timeoutMs: ctx.timeoutMs,
    now: () => ctx.clock.now(),
  })
  let circuits: CircuitsFeature | undefined
  // the links routers report to this node (memory only): path selection, circuits and the fabric API read them
  const links = new LinkRegistry({ now: () => ctx.clock.now(), warn: (msg, err) => ctx.logger.warn({ err: String(err) }, msg) })
  // the one handler of Fault (1004): link subjects to the links feature, circuit subjects to the sink onCircuitFault takes
  const faults = createFaultDispatcher({ logger: ctx.logger, metrics: ctx.registry })
  const plane = await startControlPlane({
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
    features: (fctx) => [
      // API sessions pushed to edge routers, their heartbeats, resyncs and session validation (first: the real
      // controller syncs the sessions, then the public keys)
      createSessionsFeature({ sessions, identities, bus: ctx.bus }, fctx),
      createRdmFeature(projection, fctx, opts.routerDataModel),
      // terminators routers ask for (SDKs binding services), their updates, removals and validation
      createTerminatorsFeature(
        {
          graph,
          bus: ctx.bus,
          policy: policy.reads,
          checkSession,
          writes: ctx.writeQueue,
          controllerId,
          isClusterMember: clusterNode ? (name) => actors.controllers.snapshot().byId.has(name) : undefined,
          validateEveryMs: opts.terminatorValidateEveryMs,
          offlineRemoveAfterMs: opts.terminatorOfflineRemoveMs,
        },
        fctx,
      ),
      // routers told of each other (PeerStateChanges), VerifyRouter, the links they report and their faults
      createLinksFeature({ links, faults, router: (id) => graph.snapshot().routers.get(id), bus: ctx.bus }, fctx),
      faults,
      // dials become circuits over this node's routers and their usable links, torn down on faults
      (circuits = createCircuitsFeature(
        {
          graph,
          identities,
          policy: policy.reads,
          checkSession,
          accessTokens: auth.oidcSettings.enabled ? auth.oidcTokens : undefined,
          routeTimeoutMs: opts.circuits?.routeTimeoutMs,
          offlineGraceMs: opts.circuits?.offlineGraceMs,
          usableLinks: () => links.usableLinks().map((l) => ({ id: l.id, a: l.srcRouterId, b: l.dstRouterId, cost: l.cost })),
        },
        fctx,
      )),
      // a cluster node tells routers every node's control endpoint (a single controller sends none)
      ...(clusterNode
        ? [createCtrlAddressesFeature({ nodes: () => actors.controllers.snapshot().byId.values(), revision: () => clusterNode.log.revision, bus: ctx.bus, registry: fctx.registry })]
        : []),
    ],
  })
  plane.dataModel = { index: () => projection.log.currentIndex, timelineId: () => projection.timelineId }
  // the features were made while the control plane started
  const circuitsFeature = circuits!
  // the fault dispatcher owns Fault (1004) and hands the circuit subjects over
  faults.onCircuitFault((router, fault) => circuitsFeature.onFault(router, fault))
  // a link gone (faulted, refreshed away, its router gone or deleted): the circuits over it are torn down
  links.on((e) => {
    if (e.type === 'removed') circuitsFeature.linkRemoved(e.link.id)
  })
  plane.links = links
  plane.circuits = circuitsFeature.control
  plane.circuitFailures = () => circuitsFeature.recentFailures()
  return Object.assign(plane, { links, circuits: circuitsFeature.control })
}

/**
 * What the router data model is made of: the aggregates' snapshots, the policy index, and the keys routers trust:
 * this node's server certificate and every cluster node's (they sign OIDC and service-session tokens; routers also
 * anchor client certificates on them), the root CA (the anchor of every certificate edgeplane issues) and the
 * verified third-party CAs (client certificates of their identities).
 */
function rdmSources(actors: Actors, policy: PolicyParts, clock: Clock): RdmSources {
  const { identities, graph, ca, controllers, clusterNode, pki } = actors
  const der = (pem: string) => firstCertDer(pem)
  return {
    identities: () => identities.snapshot(),
    graph: () => graph.snapshot(),
    policies: policy.reads,
    now: () => clock.now(),
    publicKeys() {
      const keys: TrustedKey[] = []
      const add = (pem: string, uses: TrustedKey['uses']) => {
        const d = der(pem)
        if (d) keys.push({ der: d, uses })
      }
      add(ca.snapshot().pki.server.certPem, ['jwt', 'client-certs'])
      if (clusterNode) for (const c of controllers.snapshot().byId.values()) add(c.certPem, ['jwt', 'client-certs'])
      add(pki.root.certPem, ['client-certs'])
      for (const c of ca.snapshot().verifiedCas()) add(c.certPem, ['client-certs'])
      return keys
    },
  }
}
