/**
 * Routers told about each other (PeerStateChanges, 1050), as the real controller's RouterMessaging does it: per
 * router to notify, the set of routers whose state changed since it was last told, sent as one message whose entries
 * are what each of them is at the moment of sending. Rules kept here:
 * - A router that connects (or replaces its link listeners) is announced to every other router connected here, and
 *   is itself told about each of them; one that disconnects, or is deleted, is announced to every other.
 * - An entry is Healthy (with the version and link listeners of its current connection) when it is connected here,
 *   Unhealthy when it is not but still exists, Removed when it no longer exists.
 * - Changes are batched: everything queued in one turn goes in one message per router, and a router is sent at most
 *   one message every `minGapMs` (a flood of listener updates costs its peers one message per gap, not one each).
 * - A router that is no longer connected here when its turn comes is dropped from the batch (when it connects again
 *   it is told everything anyway); nothing is sent to a router about itself.
 * - A failure while sending is logged; the next change tries again.
 * @see router-control-plane.md §5.4; ziti controller/network/router_messaging.go routerChangedEvent, syncStates
 */
import type { MessageInitShape } from '@bufbuild/protobuf'
import { PeerState, type PeerStateChangeSchema } from '../pb/ctrl_pb.ts'
import type { ConnectedRouter } from '../control-routers.ts'

/** One entry of a PeerStateChanges. */
export type PeerChange = MessageInitShape<typeof PeerStateChangeSchema>

export interface PeerStatesDeps {
  /** The router's current connection on this node. */
  connected(id: string): ConnectedRouter | undefined
  /** Every router connected to this node. */
  all(): Iterable<ConnectedRouter>
  /** Whether a router of this id exists (the policy graph). */
  exists(id: string): boolean
  /** Sends one PeerStateChanges; false when it could not go (the channel closed). */
  send(to: ConnectedRouter, changes: PeerChange[]): boolean
  warn(fields: Record<string, unknown>, msg: string): void
  /** The least time between two messages to one router (default 50 ms). */
  minGapMs?: number
  /** A monotonic clock in ms (default performance.now). */
  monotonicMs?: () => number
}

export const PEER_STATES_MIN_GAP_MS = 50

export class PeerStates {
  /** Router to notify → routers whose state it has not been told yet. */
  private readonly pending = new Map<string, Set<string>>()
  private timer: ReturnType<typeof setTimeout> | undefined
  private lastFlush = Number.NEGATIVE_INFINITY
  private stopped = false
  private readonly minGapMs: number
  private readonly monotonicMs: () => number

  constructor(private readonly deps: PeerStatesDeps) {
    this.minGapMs = deps.minGapMs ?? PEER_STATES_MIN_GAP_MS
    this.monotonicMs = deps.monotonicMs ?? (() => performance.now())
  }

  /** Routers waiting for a message (tests, diagnostics). */
  get waiting(): number {
    return this.pending.size
  }

  /** Router `routerId` connected (or changed its listeners: `connected` true) or left (false, also when deleted). */
  changed(routerId: string, connected: boolean): void {
    if (this.stopped) return
    for (const r of this.deps.all()) {
      if (r.id === routerId) continue
      this.queue(r.id, routerId)
      if (connected) this.queue(routerId, r.id)
    }
    this.schedule()
  }

  /** Sends every pending message now (the timer calls it; tests may). */
  flush(): void {
    this.lastFlush = this.monotonicMs()
    const batch = [...this.pending]
    this.pending.clear()
    for (const [notifyId, ids] of batch) {
      const to = this.deps.connected(notifyId)
      if (!to || to.channel.isClosed) continue
      const changes: PeerChange[] = []
      for (const id of ids) changes.push(this.stateOf(id))
      try {
        this.deps.send(to, changes)
      } catch (e) {
        this.deps.warn({ routerId: notifyId, err: e instanceof Error ? e.message : String(e) }, 'failed to send peer state changes to a router')
      }
    }
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.pending.clear()
  }

  private stateOf(id: string): PeerChange {
    const c = this.deps.connected(id)
    if (c) {
      return {
        id,
        version: c.versionInfo.version,
        state: PeerState.Healthy,
        listeners: c.linkListeners.map((l) => ({ address: l.address, protocol: l.protocol, groups: l.groups, localBinding: l.localBinding })),
      }
    }
    return { id, state: this.deps.exists(id) ? PeerState.Unhealthy : PeerState.Removed }
  }

  private queue(notifyId: string, changedId: string): void {
    let s = this.pending.get(notifyId)
    if (!s) this.pending.set(notifyId, (s = new Set()))
    s.add(changedId)
  }

  private schedule(): void {
    if (this.timer !== undefined || this.pending.size === 0) return
    const wait = Math.max(0, this.lastFlush + this.minGapMs - this.monotonicMs())
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.stopped) return
      try {
        this.flush()
      } catch (e) {
        this.deps.warn({ err: e instanceof Error ? e.message : String(e) }, 'a round of peer state changes failed')
      }
    }, wait)
    this.timer.unref?.()
  }
}
