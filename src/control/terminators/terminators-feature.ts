/**
 * The terminators feature of the control plane: what routers send about the terminators they host, and the
 * validation of terminators with their routers. Handlers (one file per message): CreateTerminatorV2 (20216),
 * UpdateTerminator (20209), RemoveTerminator (20211), HealthEvent (20214), RemoveTerminators (1038), the fabric
 * CreateTerminator (1011), RemoveTerminator (1012) and UpdateTerminator (1018), and ValidateTerminatorsV2Response
 * (1042). Rules of the validation loop (terminator-validations.ts holds its state):
 * - every terminator created (any way) is queued, and every terminator of a router when it connects to this node;
 *   the loop runs when something was queued or answered, and every `validateEveryMs` (30 s): so a new terminator is
 *   asked about 5-35 s after it was made, as the real controller's RouterMessaging does
 * - a cluster node validates the terminators it made, those an admin made, and those of nodes no longer members (the
 *   real controller: the node that made it, or the raft leader, which edgeplane has not)
 * - what a router says is invalid is deleted, in batches through the write queue (a busy queue: the next round)
 * - when a router disconnects its terminators stay (it establishes them again after it reconnects, and the
 *   validation on connect removes those it no longer has). On a single node, the terminators it made for the SDKs it
 *   hosts (edge and tunnel bindings) go once it has been away for `offlineRemoveAfterMs` (60 s): a router killed for
 *   good leaves nothing that looks hosted, and one that comes back establishes them again (the real router asks for
 *   every hosted terminator the controller did not confirm 10 s after reconnecting). The real controller keeps them
 *   until the router returns. A cluster node keeps them (the router may still be connected to another node).
 * - deleting the router deletes them all, with it
 * No timer or request ends the process: the loop's failures are logged and it goes on.
 * @see router-control-plane.md §4.2, §4.3; ziti controller/network/router_messaging.go, network.go ValidateTerminators
 */
import type { EventBus } from '../../actors/runtime/event-bus.ts'
import type { PolicyGraphEvent } from '../../actors/policy-graph/policy-graph-messages.ts'
import type { Terminator } from '../../domain/policy/policy-types.ts'
import { ContentType as EdgeType } from '../pb/edge_ctrl_pb.ts'
import { ContentType as CtrlType } from '../pb/ctrl_pb.ts'
import { Counter } from '../../lib/metrics.ts'
import type { RouterSessionCheck } from '../../flows/routers/router-session-check.ts'
import type { ControlFeature, FeatureContext } from '../control-feature.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { controlChange, gatedWrite, ROUTER_REQUEST_SLOTS, type TerminatorContext, type TerminatorGraph, type WriteGate } from './terminator-context.ts'
import { TerminatorValidations, type ValidatedTerminator, type ValidationState } from './terminator-validations.ts'
import { terminatorSenders } from './terminator-senders.ts'
import { createTerminatorV2Handler } from './handler-create-terminator-v2.ts'
import { updateTerminatorHandler } from './handler-update-terminator.ts'
import { removeTerminatorHandler } from './handler-remove-terminator.ts'
import { removeTerminatorsHandler } from './handler-remove-terminators.ts'
import { healthEventHandler } from './handler-health-event.ts'
import { fabricCreateTerminatorHandler } from './handler-fabric-create-terminator.ts'
import { fabricRemoveTerminatorHandler } from './handler-fabric-remove-terminator.ts'
import { fabricUpdateTerminatorHandler } from './handler-fabric-update-terminator.ts'
import { validateTerminatorsResponseHandler } from './handler-validate-terminators-response.ts'

export interface TerminatorsFeatureDeps {
  graph: TerminatorGraph
  bus: EventBus
  policy: TerminatorContext['policy']
  checkSession: RouterSessionCheck
  writes: WriteGate
  /** This node's id (a created terminator's `sourceCtrl`): the cluster node name, or the controller's id. */
  controllerId: string
  /** A cluster node: whether a node of this name is a member. Absent: a single node (it validates everything). */
  isClusterMember?: (name: string) => boolean
  /** How often the validation loop runs without being woken (default 30 s; tests shorten it). */
  validateEveryMs?: number
  /** How long a router may be away before its SDKs' terminators go (single node only; default 60 s). */
  offlineRemoveAfterMs?: number
}

const VALIDATE_EVERY_MS = 30_000
const OFFLINE_REMOVE_AFTER_MS = 60_000
/** How soon a removal the write queue refused is tried again. */
const OFFLINE_RETRY_MS = 5_000
/** The bindings of the terminators an edge router makes for the SDKs it hosts (and establishes again on return). */
const HOSTED_BINDINGS = new Set(['edge', 'tunnel'])

export function createTerminatorsFeature(deps: TerminatorsFeatureDeps, fc: FeatureContext): ControlFeature {
  const { registry, clock, logger } = fc
  const health = fc.metrics.register(new Counter('edgeplane_terminator_health_checks_total', 'Health checks SDKs reported for the services they host, by result', ['result']))
  const passed = health.labels('passed')
  const failed = health.labels('failed')
  // requests in progress per connection (a router that reconnects starts with none)
  const slots = new WeakMap<ConnectedRouter, number>()
  const ctx: TerminatorContext = {
    registry,
    graph: deps.graph,
    policy: deps.policy,
    checkSession: deps.checkSession,
    controllerId: deps.controllerId,
    logger,
    write: (fn) => gatedWrite(deps.writes, fn),
    takeSlot(router) {
      const used = slots.get(router) ?? 0
      if (used >= ROUTER_REQUEST_SLOTS) return false
      slots.set(router, used + 1)
      return true
    },
    giveSlot(router) {
      slots.set(router, Math.max(0, (slots.get(router) ?? 1) - 1))
    },
    healthChecked: (ok) => (ok ? passed : failed).inc(),
  }

  const validations = new TerminatorValidations()
  const mayValidate = (t: ValidatedTerminator) =>
    deps.isClusterMember === undefined || t.sourceCtrl === '' || t.sourceCtrl === deps.controllerId || !deps.isClusterMember(t.sourceCtrl)
  const toValidated = (t: Terminator): ValidatedTerminator => ({ id: t.id, routerId: t.routerId, binding: t.binding, address: t.address, createdAt: t.createdAt, sourceCtrl: t.sourceCtrl })

  let stopped = false
  let deleting = false
  let woken: ReturnType<typeof setTimeout> | undefined
  const round = () => {
    if (stopped) return
    try {
      for (const req of validations.requests(clock.now(), (id) => registry.get(id) !== undefined, mayValidate)) {
        const r = registry.get(req.routerId)
        if (!r || !terminatorSenders(r.channel).validateTerminators(req)) validations.unsent(req.routerId)
        else logger.debug({ routerId: req.routerId, terminators: req.terminators.length }, 'asked a router to validate terminators')
      }
      deleteInvalid()
    } catch (e) {
      logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'a round of terminator validation failed')
    }
  }
  /** Runs a round soon (once for everything that woke it meanwhile), after what is being done now. */
  const wake = () => {
    if (woken !== undefined || stopped) return
    woken = setTimeout(() => {
      woken = undefined
      round()
    }, 0)
  }
  const deleteInvalid = () => {
    if (deleting) return
    const ids = validations.nextDeletes((id) => deps.graph.snapshot().terminators.has(id))
    if (ids.length === 0) return
    deleting = true
    void gatedWrite(deps.writes, () => deps.graph.ask({ type: 'terminator.removeMany', ids, change: controlChange(deps.controllerId) }))
      .then((w) => {
        if (w.ok) {
          validations.deleted(ids)
          logger.info({ terminatorIds: ids }, 'deleted terminators their routers found invalid')
          if (validations.pendingDeletes > 0) wake()
        } else logger.info({ count: ids.length, err: w.message }, 'deleting terminators found invalid failed; retried in the next round')
      })
      .finally(() => (deleting = false))
  }
  const answered = (routerId: string, states: ReadonlyMap<string, ValidationState>) => {
    const invalid = validations.answered(routerId, states)
    if (invalid.length > 0) {
      logger.info({ routerId, terminatorIds: invalid }, 'terminators not valid on their router, queued for deletion')
      wake()
    }
  }

  const ticker = setInterval(round, deps.validateEveryMs ?? VALIDATE_EVERY_MS)
  ticker.unref?.()

  // routers away: their SDKs' terminators go after the grace, unless they came back (single node only)
  const away = new Map<string, ReturnType<typeof setTimeout>>()
  const removeAfterMs = deps.offlineRemoveAfterMs ?? OFFLINE_REMOVE_AFTER_MS
  const removeHostedOf = (routerId: string) => {
    away.delete(routerId)
    if (stopped || registry.get(routerId)) return
    const ids = deps.graph
      .snapshot()
      .terminatorsOfRouter(routerId)
      .filter((t) => t.isSystem && HOSTED_BINDINGS.has(t.binding))
      .map((t) => t.id)
    if (ids.length === 0) return
    void gatedWrite(deps.writes, () => deps.graph.ask({ type: 'terminator.removeMany', ids, routerId, change: controlChange(deps.controllerId) })).then((w) => {
      if (w.ok) logger.info({ routerId, terminators: ids.length }, 'removed the hosted terminators of a router away past the grace')
      else {
        logger.info({ routerId, err: w.message }, 'removing the hosted terminators of a router away failed; tried again shortly')
        routerAway(routerId, OFFLINE_RETRY_MS)
      }
    })
  }
  const routerAway = (routerId: string, ms: number) => {
    if (deps.isClusterMember !== undefined || away.has(routerId) || stopped) return
    const t = setTimeout(() => removeHostedOf(routerId), ms)
    t.unref?.()
    away.set(routerId, t)
  }

  const unsubscribe = [
    registry.on('connected', (e) => {
      const pending = away.get(e.router.id)
      if (pending) {
        clearTimeout(pending)
        away.delete(e.router.id)
      }
      const ts = deps.graph.snapshot().terminatorsOfRouter(e.router.id)
      if (ts.length === 0) return
      validations.queue(ts.map(toValidated))
      wake()
    }),
    deps.bus.subscribe<Extract<PolicyGraphEvent, { type: 'graph.terminator.created' }>>('graph.terminator.created', (e) => {
      validations.queue([toValidated(e.terminator)])
      wake()
    }),
  ]

  return {
    name: 'terminators',
    handlers(router) {
      const table: [number, ControlHandler][] = [
        [EdgeType.CreateTerminatorV2RequestType, createTerminatorV2Handler(router, ctx)],
        [EdgeType.UpdateTerminatorRequestType, updateTerminatorHandler(router, ctx)],
        [EdgeType.RemoveTerminatorRequestType, removeTerminatorHandler(router, ctx)],
        [EdgeType.HealthEventType, healthEventHandler(router, ctx)],
        [CtrlType.RemoveTerminatorsRequestType, removeTerminatorsHandler(router, ctx)],
        [CtrlType.CreateTerminatorRequestType, fabricCreateTerminatorHandler(router, ctx)],
        [CtrlType.RemoveTerminatorRequestType, fabricRemoveTerminatorHandler(router, ctx)],
        [CtrlType.UpdateTerminatorRequestType, fabricUpdateTerminatorHandler(router, ctx)],
        [CtrlType.ValidateTerminatorsV2ResponseType, validateTerminatorsResponseHandler(router, answered)],
      ]
      return table
    },
    disconnected(router) {
      validations.routerGone(router.id)
      routerAway(router.id, removeAfterMs)
    },
    stop() {
      stopped = true
      clearInterval(ticker)
      for (const t of away.values()) clearTimeout(t)
      away.clear()
      if (woken !== undefined) clearTimeout(woken)
      for (const u of unsubscribe) u()
    },
  }
}
