/**
 * The router data model as a control-plane feature: routers subscribe (SubscribeToDataModelRequest) and get, while
 * the subscription lasts, the change sets after the index they hold (or a full state when those are not kept, the
 * timeline differs, or they hold nothing); every new change set goes to each subscribed router at once; an edge
 * router's sync sends the public keys as a synthetic change set; every 30 s a router whose index fell behind the
 * model's is told the current index. Rules kept here (as the real controller's RouterSender):
 * - A subscription lasts its duration clamped to 10-360 s; a renewal (same id, `renew`) keeps the router's index as
 *   this node tracks it, a new subscription takes the index the router says it holds.
 * - Every change set and full state of a subscription carries its id (header 1026).
 * - A router ahead of this node: on a cluster node it may be waiting for this node to catch up (the change sets it
 *   lacks are replayed once they exist, for up to `futureWaitMs`); otherwise, and after that, it gets a full state.
 * - A router whose channel cannot take a change set is past helping: the channel closes itself (backpressure).
 * @see router-control-plane.md §3.2; ziti controller/sync_strats/rtx.go handleSyncRequest, handleModelChange
 */
import { Counter, Gauge } from '../../lib/metrics.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ControlFeature, FeatureContext } from '../control-feature.ts'
import { decodeBody } from '../control-messages.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { ContentType, SubscribeToDataModelRequestSchema } from '../pb/edge_ctrl_pb.ts'
import type { LoggedChangeSet } from './rdm-log.ts'
import type { RdmProjection } from './rdm-projection.ts'
import { sendChangeSet, sendCurrentIndex, sendDataState, sendPublicKeys } from './rdm-senders.ts'

export const MIN_SUBSCRIPTION_S = 10
export const MAX_SUBSCRIPTION_S = 360
/** How often a subscribed router is told the model's index when it moved (the real controller's ticker). */
export const CURRENT_INDEX_EVERY_MS = 30_000
/** How long a router ahead of a cluster node waits for it before it gets a full state. */
export const FUTURE_WAIT_MS = 10_000

interface Subscription {
  id: string
  timelineId: string
  /** The index this node believes the router holds. */
  index: bigint
  /** Until when changes are pushed (monotonic ms). */
  untilMs: number
  /** When this node first saw the router ahead of it (monotonic ms), while it waits. */
  aheadSinceMs?: number
  lastIndexSent: bigint
}

interface Subscriber {
  router: ConnectedRouter
  sub?: Subscription
  /** When the current index was last considered for this router (monotonic ms). */
  lastTickMs?: number
}

export interface RdmFeatureOptions {
  /** Monotonic milliseconds (default performance.now). */
  monotonicMs?: () => number
  currentIndexEveryMs?: number
  futureWaitMs?: number
}

export interface RdmFeature extends ControlFeature {
  /** The subscription a connected router holds (tests, diagnostics). */
  subscriptionOf(routerId: string): Readonly<Subscription> | undefined
}

export function createRdmFeature(projection: RdmProjection, ctx: FeatureContext, opts: RdmFeatureOptions = {}): RdmFeature {
  const nowMs = opts.monotonicMs ?? (() => performance.now())
  const futureWaitMs = opts.futureWaitMs ?? FUTURE_WAIT_MS
  const subscribers = new Map<string, Subscriber>()
  const log = (level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, msg: string) => ctx.logger[level](fields, msg)
  const m = ctx.metrics
  m.register(new Gauge('edgeplane_rdm_index', 'The index of this node’s router data model', [], () => [[[], Number(projection.log.currentIndex)]]))
  m.register(new Gauge('edgeplane_rdm_subscribed_routers', 'Routers with a live data model subscription on this node', [], () => [[[], countLive()]]))
  const sent = m.register(new Counter('edgeplane_rdm_sent_total', 'Data model messages sent to routers, by kind', ['kind']))
  const sentBytes = m.register(new Counter('edgeplane_rdm_sent_bytes_total', 'Bytes of data model messages sent to routers, by kind', ['kind']))
  const series = {
    changeSet: [sent.labels('change-set'), sentBytes.labels('change-set')] as const,
    fullState: [sent.labels('full-state'), sentBytes.labels('full-state')] as const,
    keys: [sent.labels('public-keys'), sentBytes.labels('public-keys')] as const,
  }
  const count = (which: keyof typeof series, bytes: number) => {
    series[which][0].inc()
    series[which][1].inc(bytes)
  }

  const live = (s: Subscriber): s is Subscriber & { sub: Subscription } => s.sub !== undefined && s.sub.untilMs >= nowMs() && !s.router.channel.isClosed
  function countLive(): number {
    let n = 0
    for (const s of subscribers.values()) if (live(s)) n++
    return n
  }

  const sendFull = (s: Subscriber & { sub: Subscription }) => {
    const state = projection.fullState()
    if (!sendDataState(s.router.channel, state, s.sub.id)) return
    count('fullState', state.body.length)
    s.sub.index = state.endIndex
    s.sub.timelineId = state.timelineId
    s.sub.aheadSinceMs = undefined
    log('info', { routerId: s.router.id, index: String(state.endIndex), timelineId: state.timelineId, events: state.events, bytes: state.body.length }, 'router data model: full state sent')
  }

  const sendEntry = (s: Subscriber & { sub: Subscription }, entry: LoggedChangeSet): boolean => {
    if (!sendChangeSet(s.router.channel, entry, s.sub.id)) return false
    count('changeSet', entry.body.length)
    s.sub.index = entry.index
    return true
  }

  /** Brings a subscribed router up to the model: the change sets it lacks, else a full state. */
  const catchUp = (s: Subscriber) => {
    if (!live(s)) return
    const sub = s.sub
    if (sub.index === 0n || sub.timelineId !== projection.timelineId) return sendFull(s)
    const replay = projection.log.replayAfter(sub.index)
    if (replay.kind === 'replay') {
      sub.aheadSinceMs = undefined
      for (const entry of replay.sets) if (!sendEntry(s, entry)) return
      return
    }
    if (replay.kind === 'future' && projection.mayLag) {
      sub.aheadSinceMs ??= nowMs()
      if (nowMs() - sub.aheadSinceMs < futureWaitMs) return
    }
    sendFull(s)
  }

  projection.onChangeSet((entry) => {
    for (const s of subscribers.values()) {
      if (!live(s)) continue
      if (s.sub.timelineId === projection.timelineId && s.sub.index === entry.previousIndex) sendEntry(s, entry)
      else catchUp(s)
    }
  })
  projection.onReset(() => {
    for (const s of subscribers.values()) if (live(s)) sendFull(s)
  })

  const subscribe = (router: ConnectedRouter): ControlHandler => (frame) => {
    const req = decodeBody(SubscribeToDataModelRequestSchema, frame)
    const s = subscribers.get(router.id)
    if (!s || s.router !== router) return
    const prev = s.sub
    const durationS = Math.min(MAX_SUBSCRIPTION_S, Math.max(MIN_SUBSCRIPTION_S, req.subscriptionDurationSeconds))
    const renewal = req.renew && prev !== undefined && prev.id === req.subscriptionId
    s.sub = {
      id: req.subscriptionId,
      timelineId: req.timelineId,
      index: renewal ? prev.index : req.currentIndex,
      untilMs: nowMs() + durationS * 1000,
      lastIndexSent: prev?.lastIndexSent ?? 0n,
    }
    log(
      'debug',
      { routerId: router.id, subscriptionId: req.subscriptionId, renew: req.renew, routerIndex: String(req.currentIndex), timelineId: req.timelineId, durationS },
      'router data model: subscription',
    )
    // flushed first: a change made in this turn is part of what the router gets now
    projection.flush()
    if (!renewal || s.sub.timelineId !== projection.timelineId || s.sub.index < projection.log.currentIndex) catchUp(s)
  }

  const ticker = setInterval(() => {
    const now = nowMs()
    for (const s of subscribers.values()) {
      if (!live(s)) continue
      if (s.sub.aheadSinceMs !== undefined) catchUp(s)
      const idx = projection.log.currentIndex
      if (idx > s.sub.lastIndexSent && now - (s.lastTickMs ?? 0) >= (opts.currentIndexEveryMs ?? CURRENT_INDEX_EVERY_MS)) {
        if (sendCurrentIndex(s.router.channel, idx)) s.sub.lastIndexSent = idx
        s.lastTickMs = now
      }
    }
  }, 1_000)
  ticker.unref?.()

  return {
    name: 'router data model',
    handlers(router) {
      subscribers.set(router.id, { router })
      return [[ContentType.SubscribeToDataModelRequestType, subscribe(router)]]
    },
    async synchronize(router) {
      // the keys first: without them the router's edge listener refuses every SDK's TLS handshake
      const keys = projection.publicKeys()
      if (sendPublicKeys(router.channel, keys)) count('keys', keys.body.length)
    },
    disconnected(router) {
      if (subscribers.get(router.id)?.router === router) subscribers.delete(router.id)
    },
    stop() {
      clearInterval(ticker)
      projection.stop()
    },
    subscriptionOf: (routerId) => subscribers.get(routerId)?.sub,
  }
}
