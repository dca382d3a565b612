/**
 * Circuits as a control-plane feature: edge routers' dials (CreateCircuitV2 for legacy sessions, V3 for OIDC ones)
 * become circuits built over this node's routers and links (circuit-builder.ts), kept in memory (circuit-registry.ts)
 * and torn down on faults, on an admin's delete, and when a router of their path stays offline. Rules kept here:
 * - Each router connection has `slots` circuit requests in progress at most; more are answered busy (the router asks
 *   again), as for terminators.
 * - A router whose channel closed keeps its circuits for `offlineGraceMs` (30 s): its data plane may still carry them
 *   and a reconnect keeps them (its CircuitConfirmations then find them); past that, they are torn down (Unroute to
 *   the routers of their paths that are still connected). The real controller keeps them until a fault comes.
 * - Dynamic terminator costs are credited back every minute.
 * - Metrics: circuits created, failed by cause, active, setup time.
 * The Fault content type is the fault dispatcher's (control/faults/): it hands this feature the circuit subjects
 * (`onFault`).
 * @see router-control-plane.md §4.4-§5.3
 */
import { randomInt } from 'node:crypto'
import { Counter, Gauge, Histogram } from '../../lib/metrics.ts'
import type { PolicyGraphActor } from '../../actors/policy-graph/policy-graph-actor.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { PolicyReads } from '../../domain/policy/policy-reads.ts'
import type { CircuitControl, CircuitFailureView } from '../../domain/fabric/fabric-types.ts'
import type { RouterSessionCheck } from '../../flows/routers/router-session-check.ts'
import type { OidcTokens } from '../../flows/oidc/oidc-tokens.ts'
import type { ControlFeature, FeatureContext } from '../control-feature.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { ContentType as CtrlType } from '../pb/ctrl_pb.ts'
import { ContentType as EdgeType } from '../pb/edge_ctrl_pb.ts'
import { CircuitBuilder, CIRCUIT_FAILURES } from './circuit-builder.ts'
import { teardown, type CircuitContext } from './circuit-context.ts'
import { circuitFault } from './circuit-faults.ts'
import type { PathLink, PathRouter } from './circuit-path.ts'
import { CircuitRegistry } from './circuit-registry.ts'
import { circuitSenders } from './circuit-senders.ts'
import { DynamicCosts } from './circuit-strategies.ts'
import { circuitConfirmationHandler } from './handler-circuit-confirmation.ts'
import { createCircuitV2Handler } from './handler-create-circuit-v2.ts'
import { createCircuitV3Handler } from './handler-create-circuit-v3.ts'
import { ROUTE_RESULT_TYPE, routeResultHandler } from './handler-route-result.ts'

/** The real controller's RouteTimeout (config_network.go). */
export const ROUTE_TIMEOUT_MS = 10_000
/** Attempts in all (CreateCircuitRetries). */
export const CIRCUIT_ATTEMPTS = 2
export const CIRCUIT_SLOTS = 256
export const OFFLINE_GRACE_MS = 30_000
/** How many refused or failed circuit requests admins are shown. */
export const RECENT_FAILURES = 100

export interface CircuitsDeps {
  graph: PolicyGraphActor
  identities: { snapshot(): IdentityReads }
  policy: Pick<PolicyReads, 'routersFor' | 'permissionsOf'>
  checkSession: RouterSessionCheck
  accessTokens?: Pick<OidcTokens, 'verify'>
  /** The usable links between connected routers (control/links/); none: paths of one router only. */
  usableLinks?: () => readonly PathLink[]
  routeTimeoutMs?: number
  offlineGraceMs?: number
  slots?: number
}

export interface CircuitsFeature extends ControlFeature {
  readonly control: CircuitControl
  readonly registry: CircuitRegistry
  /** The latest refused or failed circuit requests, the newest first. */
  recentFailures(): readonly CircuitFailureView[]
  /** The circuit subjects of a router's Fault (the fault dispatcher calls this). */
  onFault(router: ConnectedRouter, fault: { subject: number; id: string }): void
  /** A link is gone: the circuits over it are torn down (their routers faulted them or will). */
  linkRemoved(linkId: string): void
}

export function createCircuitsFeature(deps: CircuitsDeps, fctx: FeatureContext): CircuitsFeature {
  const { logger, registry: routers, clock } = fctx
  const log = (level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, msg: string) => logger[level](fields, msg)
  const circuits = new CircuitRegistry((msg, err) => logger.warn({ err: String(err) }, msg))
  const costs = new DynamicCosts()
  const slotsPerRouter = deps.slots ?? CIRCUIT_SLOTS
  const inUse = new Map<string, number>()
  const failures: CircuitFailureView[] = []
  const change = { author: 'system', source: 'control' } as const

  const connectedRouters = (): Map<string, PathRouter> => {
    const g = deps.graph.snapshot()
    const out = new Map<string, PathRouter>()
    for (const r of routers.all()) {
      const rec = g.routers.get(r.id)
      if (rec && !rec.disabled && !r.channel.isClosed) out.set(r.id, { id: r.id, cost: rec.cost, noTraversal: rec.noTraversal })
    }
    return out
  }

  const builder = new CircuitBuilder({
    registry: circuits,
    service: (id) => deps.graph.snapshot().services.get(id),
    terminatorsOf: (serviceId) => deps.graph.snapshot().terminatorsOfService(serviceId),
    connectedRouters,
    usableLinks: deps.usableLinks ?? (() => []),
    sendRoute: (routerId, route) => {
      const ch = routers.get(routerId)?.channel
      return ch !== undefined && circuitSenders(ch).route(route)
    },
    sendUnroute: (routerId, circuitId, now) => {
      const ch = routers.get(routerId)?.channel
      if (ch) circuitSenders(ch).unroute(circuitId, now)
    },
    costs,
    invalidTerminator: (t) => {
      costs.forget(t.id)
      deps.graph.tell({ type: 'terminator.removeMany', ids: [t.id], routerId: t.routerId, change })
    },
    misconfiguredTerminator: (t) => deps.graph.tell({ type: 'terminator.routerUpdate', id: t.id, routerId: t.routerId, precedence: 'failed', change }),
    now: () => clock.now(),
    random: () => randomInt(0, 2 ** 32) / 2 ** 32,
    routeTimeoutMs: deps.routeTimeoutMs ?? ROUTE_TIMEOUT_MS,
    attempts: CIRCUIT_ATTEMPTS,
  })

  const m = fctx.metrics
  const created = m.register(new Counter('edgeplane_circuits_created_total', 'Circuits this node built', []))
  const failed = m.register(new Counter('edgeplane_circuits_failed_total', 'Circuit requests this node refused or could not build, by cause', ['cause']))
  const removed = m.register(new Counter('edgeplane_circuits_removed_total', 'Circuits this node tore down, by cause', ['cause']))
  m.register(new Gauge('edgeplane_circuits_active', 'Circuits this node holds', [], () => [[[], circuits.size]]))
  const setup = m.register(new Histogram('edgeplane_circuit_setup_seconds', 'Time from a circuit request to its answer, built circuits only', [], [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]))
  const createdSeries = created.labels()
  const setupSeries = setup.labels()
  const failedSeries = new Map<string, { inc(): void }>([...CIRCUIT_FAILURES, 'REFUSED'].map((c) => [c, failed.labels(c)]))
  const removedSeries = new Map<string, { inc(): void }>()
  circuits.on((e) => {
    if (e.type !== 'removed') return
    let s = removedSeries.get(e.cause)
    if (!s) removedSeries.set(e.cause, (s = removed.labels(e.cause)))
    s.inc()
  })

  const ctx: CircuitContext = {
    builder,
    circuits,
    routers,
    graph: () => deps.graph.snapshot(),
    identities: () => deps.identities.snapshot(),
    policy: deps.policy,
    checkSession: deps.checkSession,
    accessTokens: deps.accessTokens,
    costs,
    now: () => clock.now(),
    log,
    observed: (o) => {
      if (o.ok) {
        createdSeries.inc()
        setupSeries.observe(o.setupMs / 1000)
        return
      }
      failedSeries.get(o.failure)?.inc()
      const { ok: _ok, failure, ...rest } = o
      failures.unshift({ at: clock.now(), cause: failure, ...rest })
      if (failures.length > RECENT_FAILURES) failures.length = RECENT_FAILURES
    },
    takeSlot: (routerId) => {
      const n = inUse.get(routerId) ?? 0
      if (n >= slotsPerRouter) return false
      inUse.set(routerId, n + 1)
      return true
    },
    releaseSlot: (routerId) => {
      const n = (inUse.get(routerId) ?? 1) - 1
      if (n <= 0) inUse.delete(routerId)
      else inUse.set(routerId, n)
    },
  }

  // a router gone for longer than the grace takes its circuits with it
  const offline = new Map<string, ReturnType<typeof setTimeout>>()
  const graceMs = deps.offlineGraceMs ?? OFFLINE_GRACE_MS
  const unsubscribe = routers.on('connected', (e) => {
    const t = offline.get(e.router.id)
    if (t) {
      clearTimeout(t)
      offline.delete(e.router.id)
    }
  })
  const credit = setInterval(() => costs.creditAll(clock.now()), 60_000)
  credit.unref?.()

  return {
    name: 'circuits',
    registry: circuits,
    recentFailures: () => failures,
    control: {
      all: () => circuits.all(),
      get: (id) => circuits.get(id),
      remove: (id, immediate) => teardown(ctx, id, immediate, 'admin'),
    },
    handlers: (router) => [
      [EdgeType.CreateCircuitV2RequestType, createCircuitV2Handler(router, ctx)],
      [EdgeType.CreateCircuitV3RequestType, createCircuitV3Handler(router, ctx)],
      [CtrlType.CircuitConfirmationType, circuitConfirmationHandler(router, ctx)],
      [ROUTE_RESULT_TYPE, routeResultHandler(router, ctx)],
    ],
    disconnected(router) {
      if (circuits.ofRouter(router.id).length === 0 || offline.has(router.id)) return
      const t = setTimeout(() => {
        offline.delete(router.id)
        if (routers.get(router.id)) return
        const gone = circuits.ofRouter(router.id)
        for (const c of gone) teardown(ctx, c.id, true, 'router-offline', router.id)
        if (gone.length > 0) log('info', { routerId: router.id, circuits: gone.length }, 'circuits of a router offline past the grace torn down')
      }, graceMs)
      t.unref?.()
      offline.set(router.id, t)
    },
    stop() {
      unsubscribe()
      clearInterval(credit)
      for (const t of offline.values()) clearTimeout(t)
      offline.clear()
    },
    onFault: (router, fault) => circuitFault(router, fault, ctx),
    linkRemoved(linkId) {
      for (const c of circuits.ofLink(linkId)) teardown(ctx, c.id, false, 'link-fault')
    },
  }
}
