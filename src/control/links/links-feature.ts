/**
 * The links feature of the control plane: routers learn of each other (PeerStateChanges, peer-states.ts), verify the
 * routers that dial them (VerifyRouter), and report the links they dialed (RouterLinks, LinkStateUpdate, their
 * latencies in MetricsMessage); the controller keeps them in the link registry (link-registry.ts) and drops them on
 * faults, full refreshes and disconnects. Rules kept here:
 * - a router that connects is marked connected in the registry and announced; one that leaves has the links it dialed
 *   dropped (the links it was dialed on stay, unusable) and is announced Unhealthy; a deleted router (here or on
 *   another node) is announced Removed, and every link at either of its ends goes;
 * - a LinkFault or LinkDuplicate (through the fault dispatcher, control/faults/) drops the link unless stale, and when
 *   it was usable the link's other router is sent a LinkFault with the reported id and iteration;
 * - an admin's delete of a link sends a LinkFault (the link's iteration) to each of its routers connected here;
 * - nothing a router sends is answered except VerifyRouter (a Result).
 * @see router-control-plane.md §5.4, §4.5, §3.5; ziti controller/network/router_messaging.go, network.go,
 *   handler_ctrl/{router_link,verify_router,fault,link_state,update_link_listeners,metrics}.go
 */
import type { EventBus } from '../../actors/runtime/event-bus.ts'
import type { PolicyGraphEvent } from '../../actors/policy-graph/policy-graph-messages.ts'
import type { Router } from '../../domain/policy/policy-types.ts'
import { Counter, Gauge } from '../../lib/metrics.ts'
import { ContentType as CtrlType, FaultSubject, type Fault } from '../pb/ctrl_pb.ts'
import type { ControlFeature, FeatureContext } from '../control-feature.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { FaultDispatcher } from '../faults/fault-dispatcher.ts'
import type { LinkRegistry } from './link-registry.ts'
import { PeerStates } from './peer-states.ts'
import type { LinksContext } from './links-context.ts'
import { linkSenders } from './links-senders.ts'
import { routerLinksHandler } from './handler-router-links.ts'
import { verifyRouterHandler } from './handler-verify-router.ts'
import { linkStateHandler } from './handler-link-state.ts'
import { updateLinkListenersHandler } from './handler-update-link-listeners.ts'
import { metricsHandler } from './handler-metrics.ts'

export interface LinksFeatureDeps {
  links: LinkRegistry
  /** Where the link subjects of Fault (1004) come from: the feature registers its sink there. */
  faults: Pick<FaultDispatcher, 'onLinkFault'>
  /** A router as the policy graph holds it. */
  router(id: string): Router | undefined
  bus: EventBus
  /** The least time between two PeerStateChanges to one router (peer-states.ts; tests may change it). */
  peerStatesMinGapMs?: number
}

export function createLinksFeature(deps: LinksFeatureDeps, fc: FeatureContext): ControlFeature {
  const { registry, logger, metrics } = fc
  const { links } = deps
  metrics.register(
    new Gauge('edgeplane_control_links', 'Links routers reported to this node, by state: usable, down (an admin took it out), unreachable (a router at one end not connected here)', ['state'], () => {
      const c = links.counts()
      return [
        [['usable'], c.usable],
        [['down'], c.down],
        [['unreachable'], c.unreachable],
      ]
    }),
  )
  const reports = metrics.register(new Counter('edgeplane_control_link_reports_total', 'Links named in RouterLinks reports, by outcome', ['outcome']))
  const faultCounter = metrics.register(new Counter('edgeplane_control_link_faults_total', 'Link faults routers reported, by subject and outcome', ['subject', 'outcome']))
  const verifications = metrics.register(new Counter('edgeplane_control_router_verifications_total', 'VerifyRouter answers, by result', ['result']))
  const peerMessages = metrics.register(new Counter('edgeplane_control_peer_state_messages_total', 'PeerStateChanges messages sent to routers'))
  const peerEntries = metrics.register(new Counter('edgeplane_control_peer_state_changes_total', 'Entries of the PeerStateChanges sent, by state', ['state']))
  const series = new Map<string, { inc(by?: number): void }>()
  const inc = (counter: Counter, labels: string[], by = 1) => {
    if (by === 0) return
    const key = `${counter.name}\u0000${labels.join('\u0000')}`
    let s = series.get(key)
    if (!s) series.set(key, (s = counter.labels(...labels)))
    s.inc(by)
  }
  const peerStateNames = ['Healthy', 'Unhealthy', 'Removed']

  const peers = new PeerStates({
    connected: (id) => registry.get(id),
    all: () => registry.all(),
    exists: (id) => deps.router(id) !== undefined,
    send(to, changes) {
      const sent = linkSenders(to.channel).peerStateChanges(changes)
      if (sent) {
        inc(peerMessages, [])
        for (const c of changes) inc(peerEntries, [peerStateNames[c.state ?? 0] ?? 'other'])
      }
      return sent
    },
    warn: (fields, msg) => logger.warn(fields, msg),
    minGapMs: deps.peerStatesMinGapMs,
  })

  const ctx: LinksContext = {
    registry,
    links,
    router: deps.router,
    peers,
    logger,
    counted: {
      report: (outcome, n = 1) => inc(reports, [outcome], n),
      verification: (result) => inc(verifications, [result]),
    },
  }

  /** A LinkFault or LinkDuplicate a router reported (from the fault dispatcher). */
  const linkFault = (router: ConnectedRouter, fault: Fault) => {
    const subject = fault.subject === FaultSubject.LinkDuplicate ? 'LinkDuplicate' : 'LinkFault'
    const out = links.fault(router.id, fault.id, fault.iteration, fault.subject === FaultSubject.LinkDuplicate)
    inc(faultCounter, [subject, out.kind])
    const fields = { routerId: router.id, linkId: fault.id.slice(0, 256), iteration: fault.iteration, subject }
    switch (out.kind) {
      case 'unknown':
        return logger.info(fields, 'link fault for unknown link')
      case 'stale':
        return logger.info({ ...fields, linkIteration: out.link.iteration }, 'link fault reported, but iteration is older than current link, ignoring')
      case 'refused':
        return logger.warn(fields, 'link fault from a router at neither end of the link; ignored')
      case 'removed':
        logger.info(fields, 'link fault: removed the link')
        if (out.wasUsable) faultOf(fault.id, fault.iteration, out.otherRouterId)
    }
  }

  const faultOf = (linkId: string, iteration: number, to: string) => {
    const r = registry.get(to)
    if (r) linkSenders(r.channel).linkFault(linkId, iteration)
  }

  const unsubscribe = [
    deps.faults.onLinkFault(linkFault),
    registry.on('connected', (e) => {
      links.routerConnected(e.router.id)
      peers.changed(e.router.id, true)
    }),
    registry.on('disconnected', (e) => {
      // a displaced connection leaves too before its successor is registered: the links it dialed go with it, and
      // the successor reports them again (its full refresh)
      const gone = links.routerDisconnected(e.router.id)
      if (gone.length > 0) logger.info({ routerId: e.router.id, links: gone.length }, 'removed the links of a router that disconnected')
      peers.changed(e.router.id, false)
    }),
    deps.bus.subscribe<Extract<PolicyGraphEvent, { type: 'graph.router.deleted' }>>('graph.router.deleted', (e) => {
      const gone = links.routerDeleted(e.router.id)
      if (gone.length > 0) logger.info({ routerId: e.router.id, links: gone.length }, 'removed the links of a deleted router')
      peers.changed(e.router.id, false)
    }),
    links.on((e) => {
      if (e.type !== 'removed' || e.reason !== 'deleted') return
      logger.info({ linkId: e.link.id, srcRouterId: e.link.srcRouterId, dstRouterId: e.link.dstRouterId }, 'deleting known link')
      faultOf(e.link.id, e.link.iteration, e.link.srcRouterId)
      faultOf(e.link.id, e.link.iteration, e.link.dstRouterId)
    }),
  ]

  return {
    name: 'links',
    handlers: (router) => [
      [CtrlType.RouterLinksType, routerLinksHandler(router, ctx)],
      [CtrlType.VerifyRouterType, verifyRouterHandler(router, ctx)],
      [CtrlType.LinkState, linkStateHandler(router, ctx)],
      [CtrlType.UpdateLinkListenersType, updateLinkListenersHandler(router, ctx)],
      [CtrlType.MetricsType, metricsHandler(router, ctx)],
    ],
    stop() {
      peers.stop()
      for (const u of unsubscribe) u()
    },
  }
}
