/**
 * The actor runtime: a FIFO mailbox per actor, decide-then-apply handlers, and the output gate that
 * replies only after the handler's staged writes are durably committed. Reads use `snapshot()` and never queue.
 */
import type { Clock } from '../../lib/clock.ts'
import type { Store, WriteOp } from '../../store/store-env.ts'
import { SUB_DBS, type SubDbName, type SubDbOwner } from '../../store/store-catalogue.ts'
import type { EventBus } from './event-bus.ts'
import { withSeededIds } from '../../lib/ids.ts'

/** Who made a change, from where: carried by every command message. */
export interface ChangeContext {
  author: string
  /** `control`: a router's request over its control channel (author: the identity it was made for, or the router). */
  source: 'rest' | 'system' | 'cli' | 'control'
  requestId?: string
}

/** The staging area a handler writes into; committed by the runtime after the handler returns. */
export class Tx<E> {
  readonly ops: WriteOp[] = []
  readonly events: E[] = []
  constructor(
    private readonly owner: SubDbOwner | null,
    readonly now: number,
  ) {}
  put(db: SubDbName, key: string, value: unknown): void {
    this.check(db)
    this.ops.push({ db, key, value })
  }
  remove(db: SubDbName, key: string): void {
    this.check(db)
    this.ops.push({ db, key })
  }
  emit(event: E): void {
    this.events.push(event)
  }
  private check(db: SubDbName): void {
    if (SUB_DBS[db] !== this.owner) throw new TypeError(`actor ${this.owner} may not write sub-db ${db}`)
  }
}

/** The logic of an actor: pure state plus a synchronous handler per message. */
export interface ActorBehavior<S, M extends { type: string }, R extends Record<M['type'], unknown>, E> {
  /** The sub-databases this actor writes (`store-catalogue.ts`); null for an actor that stores nothing. */
  readonly owner: SubDbOwner | null
  /**
   * Messages that never go through a replicated log: they change nothing stored that other nodes hold (a node's
   * activity marks, signing with this node's key). Every other message is a command (see `ReplicatedLog`).
   */
  readonly nodeLocal?: ReadonlySet<M['type']>
  /** Decide (may throw, before any mutation), then apply synchronously: mutate state, stage writes, emit events. */
  handle(state: S, msg: M, tx: Tx<E>): R[M['type']] | Promise<R[M['type']]>
}

/** A command taken from a replicated log, as its apply needs it: the same on every node. */
export interface LoggedCommand<M = unknown> {
  msg: M
  /** The proposer's clock reading: the apply's `tx.now` on every node. */
  now: number
  /** The command's unique log key: the seed of the ids its apply makes (`lib/ids.ts`). */
  seed: string
  /** The log position, stored with the apply's writes in the same transaction. */
  revision: number
  /** Each proposer's latest clock reading applied, this command's included: stored with the revision. */
  logTimes: Readonly<Record<string, number>>
}

/** Where the applied revision is kept (sub-db `meta`), written in the transaction of the change it follows. */
export const APPLIED_KEY = 'clusterApplied'

/**
 * The log seam. Absent, a message is the local log's entry: the actor applies it and commits to LMDB (a single node).
 * Present, a command message is appended to the replicated log instead; every node, this one included, takes it from
 * the log in order and applies it with `Actor.applyLogged`; `append` answers the outcome of this node's apply.
 */
export interface ReplicatedLog {
  append(actor: string, msg: { type: string }): Promise<unknown>
}

/**
 * True while a logged command's handler and its events run: a message another actor is sent then (a cascade, such as
 * a deleted identity's sessions) is part of that command on every node, so it is applied locally, not appended again.
 */
let applyingLogged = false

interface Envelope<M> {
  msg: M
  /** Set for a command taken from the replicated log. */
  logged?: LoggedCommand<M>
  /** Resolved once the handler ran and its commit was queued (the log's applier waits for it, not for the commit). */
  handled?: () => void
  /** performance.now() when the message was queued (health: a mailbox whose oldest message waits long is stuck). */
  queuedAt: number
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
}

/** Runtime services shared by all actors. */
export interface ActorSystemDeps {
  store: Store
  clock: Clock
  bus: EventBus
  /** Called when a commit fails: the process must stop (fail-stop) and reload from LMDB on restart. */
  failStop: (err: unknown) => void
  /** Round-trip every message through structuredClone, to prove messages are plain data (tests). */
  cloneMessages?: boolean
  /** The replicated log commands are appended to (a cluster node); absent = the local log, today's commit. */
  log?: ReplicatedLog
  /** Told the time of every handler run and every commit (metrics); absent = nobody listens. */
  observer?: ActorObserver
}

/** What the runtime reports for metrics: durations in milliseconds. */
export interface ActorObserver {
  handled(actor: string, ms: number): void
  committed(ms: number): void
}

/** What health checks and metrics read of a mailbox. */
export interface MailboxView {
  readonly name: string
  /** Messages queued, the one being handled included. */
  mailboxDepth(): number
  /** How long the oldest queued message has waited, in ms (0 when the mailbox is empty). */
  oldestWaitMs(): number
}

/**
 * A running actor: `ask` queues a message and resolves after its writes are durable. `V` is what `snapshot()` shows
 * readers: the aggregate's read interface, which its state class implements (without the state's mutators).
 */
export class Actor<S extends V, M extends { type: string }, R extends Record<M['type'], unknown>, E = unknown, V = Readonly<S>>
  implements MailboxView
{
  private readonly queue: Envelope<M>[] = []
  private running = false
  /** Messages begun plus messages ended (see `generation`). */
  private handled = 0
  /** The message being handled (out of the queue, not yet answered by its handler). */
  private current: Envelope<M> | undefined
  private stopped = false
  private readonly inflight = new Set<Promise<unknown>>()

  constructor(
    readonly name: string,
    private readonly state: S,
    private readonly behavior: ActorBehavior<S, M, R, E>,
    private readonly deps: ActorSystemDeps,
  ) {}

  /** The live, read-only view of the actor's state. Safe because apply is synchronous. */
  snapshot(): V {
    return this.state
  }

  /**
   * Moves when a message begins and when it ends. The state changes only while a message is handled, so something
   * derived from the snapshot and stamped with the generation (a rendered answer) is current while it is unchanged.
   */
  get generation(): number {
    return this.handled
  }

  ask<T extends M>(msg: T): Promise<R[T['type']]> {
    if (this.stopped) return Promise.reject(new Error(`actor ${this.name} is stopped`))
    const log = this.deps.log
    if (log !== undefined && !applyingLogged && !this.behavior.nodeLocal?.has(msg.type)) return log.append(this.name, msg) as Promise<R[T['type']]>
    const m = this.deps.cloneMessages ? structuredClone(msg) : msg
    return new Promise((resolve, reject) => {
      this.queue.push({ msg: m, queuedAt: performance.now(), resolve: resolve as (v: unknown) => void, reject })
      if (!this.running) void this.drain()
    })
  }

  /**
   * Applies a command taken from the replicated log (the log's applier calls this in log order). `handled` resolves
   * when the handler ran and its writes, with the command's revision, were queued for commit; `outcome` resolves or
   * rejects as `ask` would (after the commit), for the node that proposed it.
   */
  applyLogged(cmd: LoggedCommand<M>): { handled: Promise<void>; outcome: Promise<unknown> } {
    let handled!: () => void
    const h = new Promise<void>((r) => (handled = r))
    const outcome = new Promise((resolve, reject) => {
      this.queue.push({ msg: cmd.msg, logged: cmd, handled, queuedAt: performance.now(), resolve, reject })
      if (!this.running) void this.drain()
    })
    return { handled: h, outcome }
  }

  mailboxDepth(): number {
    return this.queue.length + (this.current ? 1 : 0)
  }

  oldestWaitMs(): number {
    const oldest = this.current ?? this.queue[0]
    return oldest ? performance.now() - oldest.queuedAt : 0
  }

  /** Fire and forget; failures are logged. */
  tell(msg: M): void {
    this.ask(msg).catch((e) => {
      if (!this.stopped) console.error(`[${this.name}] ${msg.type} failed:`, e)
    })
  }

  /** Stops taking messages and waits for queued ones and their commits. */
  async stop(): Promise<void> {
    while (this.running || this.queue.length > 0) await new Promise((r) => setTimeout(r, 1))
    this.stopped = true
    await Promise.allSettled([...this.inflight])
  }

  private async drain(): Promise<void> {
    this.running = true
    try {
      while (this.queue.length > 0) {
        const env = this.queue.shift()!
        this.current = env
        const logged = env.logged
        const tx = new Tx<E>(this.behavior.owner, logged ? logged.now : this.deps.clock.now())
        const startedAt = performance.now()
        let reply: unknown
        this.handled++
        try {
          const r = logged ? this.runLogged(logged.seed, () => this.behavior.handle(this.state, env.msg, tx)) : this.behavior.handle(this.state, env.msg, tx)
          reply = r instanceof Promise ? await r : r
        } catch (e) {
          env.handled?.()
          env.reject(e)
          continue
        } finally {
          this.handled++
          this.current = undefined
          this.deps.observer?.handled(this.name, performance.now() - startedAt)
        }
        if (logged) this.runLogged(logged.seed, () => this.publish(tx.events))
        else this.publish(tx.events)
        if (logged && tx.ops.length > 0) tx.ops.push({ db: 'meta', key: APPLIED_KEY, value: { revision: logged.revision, logTimes: logged.logTimes } })
        env.handled?.()
        if (tx.ops.length === 0) {
          env.resolve(reply)
          continue
        }
        const commitStartedAt = performance.now()
        const p = this.deps.store.commit(tx.ops).then(
          () => {
            this.deps.observer?.committed(performance.now() - commitStartedAt)
            env.resolve(reply)
          },
          (err) => {
            env.reject(err)
            this.deps.failStop(err)
          },
        )
        this.inflight.add(p)
        void p.finally(() => this.inflight.delete(p))
      }
    } finally {
      this.running = false
    }
  }

  private publish(events: readonly E[]): void {
    for (const ev of events) this.deps.bus.publish(ev)
  }

  /** Runs part of a logged command's apply: ids from its seed, cascades applied here rather than appended. */
  private runLogged<T>(seed: string, fn: () => T): T {
    const outer = applyingLogged
    applyingLogged = true
    try {
      return withSeededIds(seed, fn)
    } finally {
      applyingLogged = outer
    }
  }
}
