/**
 * The router data model of this node, kept current from the aggregates' events: every event marks what it touched,
 * and at the end of the turn (a microtask) the marks become one change set, appended to the log with the next index
 * and handed to the listeners (the subscriptions of connected routers). Rules kept here:
 * - One change set per turn: everything one write did (its cascades included, which run in the same turn) reaches
 *   routers together, so a router never sees a transient loss of access inside one write.
 * - The index: on a single node a counter from 1 on a timeline made at start (a restarted controller is a new
 *   timeline: routers take a full state, as from the real controller, whose change-set log is in memory too); on a
 *   cluster node the etcd revision of the command applied, on the cluster's id as timeline, so that every node gives
 *   the same index to the same change and a router that moves to another node resumes where it was (indexes only
 *   grow: a change made outside a command, such as a lock running out, takes the next free number).
 * - A full state is built after the pending marks are flushed, so it is the model at the log's current index; it is
 *   encoded once per index and shared by every router that needs it.
 * - Nothing here may end the process: a diff that throws is logged, and the model is rebuilt on a new timeline (every
 *   subscribed router then gets a full state).
 * @see router-control-plane.md §3.2; ziti controller/sync_strats/sync_instant.go, common/router_data_model_sender.go
 */
import { create, toBinary } from '@bufbuild/protobuf'
import type { EventBus } from '../../actors/runtime/event-bus.ts'
import type { IdentityEvent } from '../../actors/identity/identity-messages.ts'
import type { PolicyGraphEvent } from '../../actors/policy-graph/policy-graph-messages.ts'
import type { Identity } from '../../domain/identity/identity-types.ts'
import { DataState_Action, DataState_ChangeSetSchema, DataState_EventSchema, DataStateSchema } from '../pb/edge_ctrl_pb.ts'
import { toRdmPublicKey } from './rdm-entities.ts'
import { ChangeSetLog, type LoggedChangeSet } from './rdm-log.ts'
import { RdmDirty, RdmMirror } from './rdm-mirror.ts'
import type { RdmSources } from './rdm-sources.ts'

/** How the model numbers its states. */
export interface RdmIndexing {
  /** The model's timeline: a router on another one needs a full state. */
  readonly timelineId: string
  /** The index of the state the model starts from. */
  start(): bigint
  /** The index of a change set made now; above `last`. */
  next(last: bigint): bigint
  /** True when a router ahead of this node may just be waiting for it to catch up (a cluster node). */
  readonly mayLag: boolean
}

/** A single node: a counter from 1 on a timeline of its own. */
export function localIndexing(timelineId: string): RdmIndexing {
  return { timelineId, start: () => 1n, next: (last) => last + 1n, mayLag: false }
}

/** A cluster node: the revision of the command being applied, on the cluster's timeline. */
export function clusterIndexing(clusterId: string, revision: () => number): RdmIndexing {
  return {
    timelineId: clusterId,
    start: () => BigInt(Math.max(1, revision())),
    next: (last) => {
      const r = BigInt(revision())
      return r > last ? r : last + 1n
    },
    mayLag: true,
  }
}

/** A full state, encoded once for its index. */
export interface EncodedDataState {
  readonly endIndex: bigint
  readonly timelineId: string
  readonly body: Uint8Array
  readonly events: number
}

/** The synthetic change set of the public keys (sent to an edge router as part of its sync). */
export interface EncodedKeys {
  readonly body: Uint8Array
  readonly keys: number
}

type Ev<T extends string> = Extract<IdentityEvent | PolicyGraphEvent, { type: T }>

export interface RdmProjectionOptions {
  logCapacity?: number
  logBytes?: number
  /** How often identities whose lock ran out are looked for (default 10 s). */
  lockSweepEveryMs?: number
  warn(fields: Record<string, unknown>, msg: string): void
}

export class RdmProjection {
  private mirror: RdmMirror
  private _log: ChangeSetLog
  private timeline: string
  private resets = 0
  private dirty = new RdmDirty()
  private scheduled = false
  private readonly listeners: ((entry: LoggedChangeSet) => void)[] = []
  private readonly resetListeners: (() => void)[] = []
  private fullCache: EncodedDataState | undefined
  /** Identities sent as disabled by a lock that runs out: id → until (epoch ms). */
  private readonly locks = new Map<string, number>()
  private readonly unsubscribe: (() => void)[]
  private readonly sweep: ReturnType<typeof setInterval>
  changeSets = 0

  constructor(
    private readonly sources: RdmSources,
    bus: EventBus,
    private readonly indexing: RdmIndexing,
    private readonly opts: RdmProjectionOptions,
  ) {
    this.timeline = indexing.timelineId
    this.mirror = new RdmMirror(sources)
    this.mirror.load()
    this._log = new ChangeSetLog(indexing.start(), opts.logCapacity, opts.logBytes)
    for (const i of sources.identities().identities.values()) this.noteLock(i)
    const d = () => this.dirty
    const touch = (f: () => void) => {
      f()
      this.schedule()
    }
    const identity = (i: Identity) =>
      touch(() => {
        d().mark('identity', i.id)
        d().markMembers('identity', i.id)
        this.noteLock(i)
      })
    this.unsubscribe = [
      bus.subscribe<Ev<'identity.created'>>('identity.created', (e) => identity(e.identity)),
      bus.subscribe<Ev<'identity.updated'>>('identity.updated', (e) => identity(e.identity)),
      bus.subscribe<Ev<'identity.deleted'>>('identity.deleted', (e) => identity(e.identity)),
      bus.subscribe<Ev<'revocation.created'>>('revocation.created', (e) => touch(() => e.revocations.forEach((r) => d().mark('revocation', r.id)))),
      bus.subscribe<Ev<'revocation.removed'>>('revocation.removed', (e) => touch(() => e.ids.forEach((id) => d().mark('revocation', id)))),
      bus.subscribe<Ev<'graph.service.put'>>('graph.service.put', (e) => touch(() => (d().mark('service', e.service.id), d().markMembers('service', e.service.id)))),
      bus.subscribe<Ev<'graph.service.deleted'>>('graph.service.deleted', (e) => touch(() => (d().mark('service', e.service.id), d().markMembers('service', e.service.id)))),
      bus.subscribe<Ev<'graph.services.touched'>>('graph.services.touched', (e) => touch(() => e.serviceIds.forEach((id) => d().mark('service', id)))),
      bus.subscribe<Ev<'graph.router.put'>>('graph.router.put', (e) => touch(() => d().mark('router', e.router.id))),
      bus.subscribe<Ev<'graph.router.deleted'>>('graph.router.deleted', (e) => touch(() => d().mark('router', e.router.id))),
      bus.subscribe<Ev<'graph.policy.put'>>('graph.policy.put', (e) => {
        if (e.policy.kind === 'service-policy') touch(() => (d().mark('servicePolicy', e.policy.id), d().policies.add(e.policy.id)))
      }),
      bus.subscribe<Ev<'graph.policy.deleted'>>('graph.policy.deleted', (e) => {
        if (e.policy.kind === 'service-policy') touch(() => (d().mark('servicePolicy', e.policy.id), d().policies.add(e.policy.id)))
      }),
      bus.subscribe<Ev<'graph.postureCheck.put'>>('graph.postureCheck.put', (e) => touch(() => (d().mark('postureCheck', e.check.id), d().markMembers('postureCheck', e.check.id)))),
      bus.subscribe<Ev<'graph.postureCheck.deleted'>>('graph.postureCheck.deleted', (e) =>
        touch(() => (d().mark('postureCheck', e.check.id), d().markMembers('postureCheck', e.check.id))),
      ),
      bus.subscribe<Ev<'graph.overrides.changed'>>('graph.overrides.changed', (e) => touch(() => e.identityIds.forEach((id) => d().mark('identity', id)))),
      bus.subscribe<Ev<'graph.configType.put'>>('graph.configType.put', (e) =>
        touch(() => {
          d().mark('configType', e.configType.id)
          // a type that starts or stops targeting routers takes its configs in or out of the model
          for (const c of sources.graph().configsOfType(e.configType.id)) d().mark('config', c.id)
        }),
      ),
      bus.subscribe<Ev<'graph.configType.deleted'>>('graph.configType.deleted', (e) => touch(() => d().mark('configType', e.configType.id))),
      bus.subscribe<Ev<'graph.config.put'>>('graph.config.put', (e) => touch(() => d().mark('config', e.config.id))),
      bus.subscribe<Ev<'graph.config.deleted'>>('graph.config.deleted', (e) => touch(() => d().mark('config', e.config.id))),
      ...['ca.trustChanged', 'ca.deleted', 'controller.changed', 'controller.removed'].map((type) => bus.subscribe(type, () => touch(() => (d().publicKeys = true)))),
    ]
    this.sweep = setInterval(() => this.sweepLocks(), opts.lockSweepEveryMs ?? 10_000)
    this.sweep.unref?.()
  }

  get log(): ChangeSetLog {
    return this._log
  }

  get timelineId(): string {
    return this.timeline
  }

  get mayLag(): boolean {
    return this.indexing.mayLag
  }

  /** Records held, per kind. */
  counts(): ReturnType<RdmMirror['counts']> {
    return this.mirror.counts()
  }

  /** Calls `fn` with every new change set (after it was appended to the log). */
  onChangeSet(fn: (entry: LoggedChangeSet) => void): void {
    this.listeners.push(fn)
  }

  /** Calls `fn` when the model was rebuilt on a new timeline (every subscribed router needs a full state). */
  onReset(fn: () => void): void {
    this.resetListeners.push(fn)
  }

  /** Turns the pending marks into a change set now (the end of the turn does it anyway); answers it, if any. */
  flush(): LoggedChangeSet | undefined {
    this.scheduled = false
    if (this.dirty.isEmpty) return undefined
    const dirty = this.dirty
    this.dirty = new RdmDirty()
    let entry: LoggedChangeSet
    try {
      const events = this.mirror.diff(dirty)
      if (events.length === 0) return undefined
      entry = this._log.append(this.indexing.next(this._log.currentIndex), events)
    } catch (e) {
      this.opts.warn({ err: String(e) }, 'router data model: a change could not be computed; rebuilding the model on a new timeline')
      this.reset()
      return undefined
    }
    this.changeSets++
    for (const fn of this.listeners) {
      try {
        fn(entry)
      } catch (e) {
        this.opts.warn({ err: String(e) }, 'router data model: a listener of change sets failed')
      }
    }
    return entry
  }

  /** The whole model at the log's current index, encoded (pending marks are flushed first). */
  fullState(): EncodedDataState {
    this.flush()
    const endIndex = this._log.currentIndex
    if (this.fullCache?.endIndex === endIndex && this.fullCache.timelineId === this.timeline) return this.fullCache
    const events = this.mirror.fullState()
    const body = toBinary(DataStateSchema, create(DataStateSchema, { events, endIndex, timelineId: this.timeline, caches: {} }))
    this.fullCache = { endIndex, timelineId: this.timeline, body, events: events.length }
    return this.fullCache
  }

  /** The public keys as one synthetic change set (what an edge router needs first to take SDK connections). */
  publicKeys(): EncodedKeys {
    const changes = this.sources.publicKeys().map((k) =>
      create(DataState_EventSchema, { action: DataState_Action.Create, isSynthetic: true, Model: { case: 'publicKey', value: toRdmPublicKey(k.der, k.uses) } }),
    )
    return { body: toBinary(DataState_ChangeSetSchema, create(DataState_ChangeSetSchema, { isSynthetic: true, changes })), keys: changes.length }
  }

  stop(): void {
    clearInterval(this.sweep)
    for (const u of this.unsubscribe) u()
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    queueMicrotask(() => this.flush())
  }

  private noteLock(i: Identity): void {
    if (i.disabledAt !== null && i.disabledUntil !== null && i.disabledUntil > this.sources.now()) this.locks.set(i.id, i.disabledUntil)
    else this.locks.delete(i.id)
  }

  /** Identities whose lock ran out are sent again (no longer disabled): no write marks that moment. */
  private sweepLocks(): void {
    const now = this.sources.now()
    let any = false
    for (const [id, until] of this.locks) {
      if (until > now) continue
      this.locks.delete(id)
      this.dirty.mark('identity', id)
      any = true
    }
    if (any) this.schedule()
  }

  private reset(): void {
    this.resets++
    this.timeline = `${this.indexing.timelineId}-r${this.resets}`
    this.fullCache = undefined
    try {
      this.mirror = new RdmMirror(this.sources)
      this.mirror.load()
    } catch (e) {
      this.opts.warn({ err: String(e) }, 'router data model: the model could not be rebuilt')
    }
    this._log = new ChangeSetLog(this.indexing.next(this._log.currentIndex), this.opts.logCapacity, this.opts.logBytes)
    for (const fn of this.resetListeners) {
      try {
        fn()
      } catch (e) {
        this.opts.warn({ err: String(e) }, 'router data model: a listener of resets failed')
      }
    }
  }
}
