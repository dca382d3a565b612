/**
 * The actor runtime: a FIFO mailbox per actor, decide-then-apply handlers, and the output gate that
 * replies only after the handler's staged writes are durably committed. Reads use `snapshot()` and never queue.
 */
import type { Clock } from '../../lib/clock.ts'
import type { Store, WriteOp } from '../../store/store-env.ts'
import { SUB_DBS, type SubDbName, type SubDbOwner } from '../../store/store-catalogue.ts'
import type { EventBus } from './event-bus.ts'

/** Who made a change, from where: carried by every command message. */
export interface ChangeContext {
  author: string
  source: 'rest' | 'system' | 'cli'
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
  /** Decide (may throw, before any mutation), then apply synchronously: mutate state, stage writes, emit events. */
  handle(state: S, msg: M, tx: Tx<E>): R[M['type']] | Promise<R[M['type']]>
}

interface Envelope<M> {
  msg: M
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
    const m = this.deps.cloneMessages ? structuredClone(msg) : msg
    return new Promise((resolve, reject) => {
      this.queue.push({ msg: m, queuedAt: performance.now(), resolve: resolve as (v: unknown) => void, reject })
      if (!this.running) void this.drain()
    })
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
        const tx = new Tx<E>(this.behavior.owner, this.deps.clock.now())
        const startedAt = performance.now()
        let reply: unknown
        this.handled++
        try {
          const r = this.behavior.handle(this.state, env.msg, tx)
          reply = r instanceof Promise ? await r : r
        } catch (e) {
          env.reject(e)
          continue
        } finally {
          this.handled++
          this.current = undefined
          this.deps.observer?.handled(this.name, performance.now() - startedAt)
        }
        for (const ev of tx.events) this.deps.bus.publish(ev)
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
}
