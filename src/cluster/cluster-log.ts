/**
 * The replicated log of a cluster node (`actors/runtime/actor-runtime.ts` `ReplicatedLog`), kept in etcd.
 *
 * - Append: a command (actor, message, the proposer's clock reading, a deadline) is submitted once, under a key of its
 *   own (`<prefix>/log/<node>/<boot>.<seq>`) with create-if-absent: a submission that timed out is retried on the next
 *   endpoint, and a retry that finds its own command already there counts as done (`EtcdClient.putIfAbsent`), so a
 *   command is never in the log twice. No endpoint takes it for 5 s (rounds over every endpoint): 503
 *   CLUSTER_NO_LEADER when nothing can have been proposed (nothing changed), 503 TIMEOUT when an attempt may still be
 *   committed by a member that leads again (the outcome is unknown; see `putUntilKnown`).
 * - Apply: one watch on `<prefix>/` (commands under `<prefix>/log/`) from the last applied revision + 1; every node,
 *   the proposer too, hands each command to its actor in revision order (`Actor.applyLogged`), which stores the revision with the command's writes
 *   in one LMDB transaction. The proposer answers its request with the outcome of its own apply: a race lost on
 *   another node gives the same 400/409 here, and exactly one winner everywhere.
 * - Time: a command's apply uses its proposer's clock reading. Every node keeps, per proposer, the latest reading
 *   applied (the same on every node: it follows the log). A command whose deadline is behind its own proposer's
 *   latest reading when it comes up (it was stuck in etcd while that node went on) is skipped by every node; its
 *   proposer, which waited no longer, had answered 503. Only one node's clock is ever compared with itself: clock
 *   skew between nodes does not matter.
 * - A barrier (`sync`) is an empty command of this node: once it is applied, so is everything before it. A node
 *   starts answering only after one (it caught up from its backup's revision).
 * - Compaction: a watch from below etcd's compaction point cannot replay: the node stops applying (`stale`), refuses
 *   writes (503 CLUSTER_NODE_STALE) and its health check fails; restarted, it replaces its store with a live member's
 *   snapshot (`cluster-snapshot.ts`). Compaction itself (`cluster-membership.ts` janitor) never goes past the lowest
 *   revision a registered node has applied, so only a compaction by hand or a removed node's return gets here.
 */
import { deserialize, serialize } from 'bun:jsc'
import { ApiError } from '../errors/api-error.ts'
import { describeThrown } from '../lib/describe-thrown.ts'
import type { Clock } from '../lib/clock.ts'
import type { LoggedCommand, ReplicatedLog } from '../actors/runtime/actor-runtime.ts'
import { EtcdRequestError, EtcdUnavailableError, type EtcdClient, type EtcdEvent } from './etcd-client.ts'
import type { CommandSealer } from './cluster-seal.ts'

/** A command as it is stored in etcd (serialized with the structured-clone format: messages are plain data). */
interface StoredCommand {
  /** The actor's name. */
  a: string
  m: { type: string }
  /** The proposer's clock reading. */
  t: number
  /** The deadline: skipped by every node when the log's time has passed it. */
  d: number
}

/** What the log hands commands to: the actors by name (`Actor.applyLogged`). */
export interface LogTarget {
  applyLogged(cmd: LoggedCommand<never>): { handled: Promise<void>; outcome: Promise<unknown> }
}

export interface ClusterLogOptions {
  client: EtcdClient
  /** The cluster's key prefix in etcd (no trailing slash). */
  prefix: string
  nodeName: string
  clock: Clock
  /** Seals and opens the commands (the cluster's key, from the shared sealing key). */
  sealer: CommandSealer
  /** Where this node stands: read from the store (meta `clusterApplied`) at start. */
  applied: { revision: number; logTimes: Record<string, number> }
  /** The actors commands go to, by name. */
  targets: ReadonlyMap<string, LogTarget>
  /** How long a submitted command may take to come up before every node skips it (default 10 s). */
  deadlineMs?: number
  /** How long the proposer waits for its own apply after etcd took the command (default 15 s). */
  applyWaitMs?: number
  /** How long a submission is retried while etcd is unavailable before the request answers 503 (default 5 s). */
  submitRetryMs?: number
  log: (line: string) => void
  /** Told the lag of every command this node applies that another node proposed (ms, proposer's clock to apply). */
  onRemoteApplied?: (lagMs: number) => void
}

export type ClusterLogState = 'starting' | 'live' | 'stale' | 'stopped'

/** The key of the sub-tree commands live in. */
export const logPrefixOf = (prefix: string) => `${prefix}/log/`

/**
 * Encodes a command for the log key `logKey`, sealed (cluster-seal.ts); also used by `edgeplane cluster remove`,
 * which appends without a running node.
 */
export function encodeCommand(sealer: CommandSealer, logKey: string, actor: string, msg: { type: string }, now: number, deadlineMs: number): string {
  const cmd: StoredCommand = { a: actor, m: msg, t: now, d: now + deadlineMs }
  return sealer.seal(new Uint8Array(serialize(cmd) as unknown as ArrayBuffer), logKey)
}

function decodeCommand(sealer: CommandSealer, logKey: string, value: string): StoredCommand {
  const cmd = deserialize(sealer.open(value, logKey)) as StoredCommand
  if (!cmd || typeof cmd.a !== 'string' || typeof cmd.m?.type !== 'string' || typeof cmd.t !== 'number') throw new Error('not a command')
  return cmd
}

/** The node that proposed a command: its key's first part under the log prefix. */
function proposerOf(key: string, prefix: string): string {
  const rest = key.slice(logPrefixOf(prefix).length)
  const slash = rest.indexOf('/')
  return slash < 0 ? rest : rest.slice(0, slash)
}

/** A watch stream silent this long (heartbeats come every second) is given up and resumed on another member. */
const WATCH_IDLE_MS = 10_000

/** The pause between two rounds of a submission over every etcd endpoint while none answers. */
const SUBMIT_RETRY_PAUSE_MS = 100

/** The pseudo-actor of barrier commands: applied by nobody, it only marks a place in the log. */
const BARRIER = '_barrier'

interface Pending {
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
}

export class ClusterLog implements ReplicatedLog {
  private readonly boot = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
  private seq = 0
  private readonly pending = new Map<string, Pending>()
  private appliedRevision: number
  /** Set while a command's apply runs (see effectRevision). */
  private applying: number | undefined
  /** Each proposer node's latest clock reading applied (deadlines are compared with their own node's clock only). */
  private logTimes: Record<string, number>
  private watch: { stop(): void } | undefined
  private _state: ClusterLogState = 'starting'
  private staleReason = ''
  private readonly deadlineMs: number
  private readonly applyWaitMs: number
  private readonly submitRetryMs: number
  /** The log's revision as etcd last told it (watch headers): the lag is this minus the applied revision. */
  private headRevision = 0
  /** The revisions of this node's own commands, oldest first (the janitor deletes their keys once all nodes applied them). */
  readonly ownKeys: Array<{ key: string; revision: number }> = []

  private readonly logPrefix: string

  constructor(private readonly o: ClusterLogOptions) {
    this.logPrefix = logPrefixOf(o.prefix)
    this.appliedRevision = o.applied.revision
    this.logTimes = { ...o.applied.logTimes }
    this.deadlineMs = o.deadlineMs ?? 10_000
    this.applyWaitMs = o.applyWaitMs ?? 15_000
    this.submitRetryMs = o.submitRetryMs ?? 5_000
  }

  get state(): ClusterLogState {
    return this._state
  }
  /** Why the node is stale (the compaction point it fell behind). */
  get staleDetail(): string {
    return this.staleReason
  }
  get revision(): number {
    return this.appliedRevision
  }
  /**
   * The revision of the command being applied (its handler and events run now, and the turn they end), else the
   * applied revision: what the effects seen now belong to (the router data model numbers its change sets with it).
   */
  get effectRevision(): number {
    return this.applying ?? this.appliedRevision
  }
  /** Revisions etcd has that this node has not applied yet (0 when it knows of none). */
  get lagRevisions(): number {
    return Math.max(0, this.headRevision - this.appliedRevision)
  }

  /**
   * Starts applying from the stored revision and waits until everything in the log before a barrier of this node is
   * applied. Throws when the log was compacted past this node's revision (restore a newer backup) or etcd is
   * unreachable (nothing to catch up from).
   */
  async start(): Promise<void> {
    const compacted = new Promise<never>((_, reject) => (this.onCompacted = reject))
    compacted.catch(() => undefined)
    // the one watch covers the whole prefix: besides the commands it sees every node's heartbeat (a key rewritten every
    // second), so a stream that goes quiet for longer than the idle timeout is a dead member, and it is resumed elsewhere
    this.watch = this.o.client.watch(
      `${this.o.prefix}/`,
      this.appliedRevision + 1,
      {
        onEvents: (events, header) => this.applyEvents(events, header),
        onCompacted: (rev) => this.becomeStale(rev),
        onState: (s, detail) => {
          if (s === 'retrying') this.o.log(`cluster: the log's watch is resuming on another etcd member${detail ? ` (${detail})` : ''}`)
        },
      },
      { idleTimeoutMs: WATCH_IDLE_MS },
    )
    await Promise.race([this.barrier(), compacted])
    this._state = 'live'
  }

  private onCompacted: (e: Error) => void = () => undefined

  private becomeStale(compactRevision: number): void {
    this.staleReason =
      `this node has applied the log up to revision ${this.appliedRevision}, but etcd compacted it at revision ${compactRevision}: ` +
      'restart this node: at start it fetches a state snapshot from a live member (cluster-snapshot.ts)'
    this._state = 'stale'
    this.o.log(`cluster: ${this.staleReason}`)
    for (const p of this.pending.values()) p.reject(new ApiError('CLUSTER_NODE_STALE'))
    this.pending.clear()
    this.onCompacted(new Error(this.staleReason))
  }

  /** Appends an empty command of this node and waits until it is applied: everything before it is applied then. */
  barrier(): Promise<unknown> {
    return this.submit(BARRIER, { type: 'sync' })
  }

  append(actor: string, msg: { type: string }): Promise<unknown> {
    if (this._state === 'stale') return Promise.reject(new ApiError('CLUSTER_NODE_STALE'))
    if (this._state === 'stopped') return Promise.reject(new Error('the cluster log is stopped'))
    return this.submit(actor, msg)
  }

  private async submit(actor: string, msg: { type: string }): Promise<unknown> {
    const key = `${logPrefixOf(this.o.prefix)}${this.o.nodeName}/${this.boot}.${String(++this.seq).padStart(12, '0')}`
    const value = encodeCommand(this.o.sealer, key, actor, msg, this.o.clock.now(), this.deadlineMs)
    const outcome = new Promise((resolve, reject) => this.pending.set(key, { resolve, reject }))
    outcome.catch(() => undefined)
    let revision: number
    try {
      const r = await this.putUntilKnown(key, value)
      if (!r.created) throw new Error(`the log key ${key} is taken by another command`)
      revision = r.revision
    } catch (e) {
      if (e instanceof EtcdUnavailableError) {
        if (e.outcomeUnknown) {
          // an attempt may sit in the log of a member that lost its quorum: it is applied if that member leads again,
          // so the answer cannot say nothing changed
          this.pending.delete(key)
          this.o.log(`cluster: a change's outcome is unknown: ${e.message}`)
          throw ApiError.withMessage('TIMEOUT', "the cluster's log did not answer in time: the change may still be applied once etcd has a quorum again")
        }
        this.pending.delete(key)
        this.o.log(`cluster: a change was refused: ${e.message}`)
        throw new ApiError('CLUSTER_NO_LEADER')
      }
      this.pending.delete(key)
      // etcd takes at most 1.5 MiB a request (--max-request-bytes). A request body (at most 1 MiB) stays under it once
      // sealed, but a command the node makes itself from many records (a repair, a sweep) could pass it: refused whole,
      // never applied, and said so rather than as a 500
      if (e instanceof EtcdRequestError && /too large/i.test(e.message)) {
        throw ApiError.withMessage('REQUEST_ENTITY_TOO_LARGE', `the change is too large for the cluster's log (${value.length} bytes sealed; etcd takes about 1.1 MB)`)
      }
      throw e
    }
    this.ownKeys.push({ key, revision })
    let timer: ReturnType<typeof setTimeout> | undefined
    const waited = new Promise((_, reject) => {
      timer = setTimeout(() => {
        // etcd holds the command: it will be applied here once the watch delivers it; the request cannot wait longer
        if (this.pending.delete(key)) reject(ApiError.withMessage('TIMEOUT', `the change was taken by the cluster's log at revision ${revision} but this node has not applied it yet`))
      }, this.applyWaitMs)
    })
    try {
      return await Promise.race([outcome, waited])
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Submits a command, retrying the same create-if-absent while etcd is unavailable, for up to `submitRetryMs`. A
   * submission that timed out may still be committed (a follower forwarded it to the leader elected meanwhile): the
   * retry finds it and counts it as done, so a leader's failover ends in the command's own outcome, not in a 503 for
   * a change every node then applies. Only an etcd unavailable for the whole time answers 503: CLUSTER_NO_LEADER
   * when no attempt can have been proposed (every member refused the connection or said at once it has no leader:
   * nothing changed), else TIMEOUT (the outcome is unknown: an attempt may still be committed by a member that leads
   * again).
   */
  private async putUntilKnown(key: string, value: string): Promise<{ created: boolean; revision: number }> {
    const giveUpAt = Date.now() + this.submitRetryMs
    let unknown = false
    for (;;) {
      try {
        return await this.o.client.putIfAbsent(key, value)
      } catch (e) {
        if (!(e instanceof EtcdUnavailableError)) throw e
        // one attempt that may have reached a member's log makes the whole submission's outcome unknown
        unknown ||= e.outcomeUnknown
        if (Date.now() >= giveUpAt || this._state === 'stopped') throw new EtcdUnavailableError(e.message, unknown)
        await new Promise((r) => setTimeout(r, SUBMIT_RETRY_PAUSE_MS))
      }
    }
  }

  private async applyEvents(events: EtcdEvent[], header: number): Promise<void> {
    if (header > this.headRevision) this.headRevision = header
    for (const ev of events) {
      const revision = ev.kv.modRevision
      if (revision <= this.appliedRevision) continue
      // other keys (heartbeats, applied revisions), a key's later versions and deletions (the janitor's) are not commands
      if (ev.type !== 'PUT' || ev.kv.version !== 1 || !ev.kv.key.startsWith(this.logPrefix)) {
        this.appliedRevision = revision
        continue
      }
      await this.applyOne(ev.kv.key, ev.kv.value, revision)
      this.appliedRevision = revision
    }
    if (this.appliedRevision > this.headRevision) this.headRevision = this.appliedRevision
  }

  private async applyOne(key: string, value: string, revision: number): Promise<void> {
    const pending = this.pending.get(key)
    if (pending) this.pending.delete(key)
    let cmd: StoredCommand
    try {
      cmd = decodeCommand(this.o.sealer, key, value)
    } catch (e) {
      this.o.log(`cluster: the log entry ${key} at revision ${revision} is not a command sealed by a member (${e instanceof Error ? e.message : describeThrown(e)}); skipped`)
      pending?.reject(new Error('the command could not be read back'))
      return
    }
    if (cmd.a === BARRIER) {
      pending?.resolve(undefined)
      return
    }
    const proposer = proposerOf(key, this.o.prefix)
    const latest = this.logTimes[proposer] ?? 0
    if (cmd.d < latest) {
      pending?.reject(new ApiError('CLUSTER_NO_LEADER'))
      return
    }
    if (cmd.t > latest) this.logTimes = { ...this.logTimes, [proposer]: cmd.t }
    const target = this.o.targets.get(cmd.a)
    if (!target) {
      this.o.log(`cluster: the command ${cmd.m.type} at revision ${revision} names an unknown actor '${cmd.a}'; skipped`)
      pending?.reject(new Error(`unknown actor ${cmd.a}`))
      return
    }
    if (!pending) this.o.onRemoteApplied?.(this.o.clock.now() - cmd.t)
    this.applying = revision
    try {
      const { handled, outcome } = target.applyLogged({ msg: cmd.m as never, now: cmd.t, seed: key, revision, logTimes: this.logTimes })
      if (pending) outcome.then(pending.resolve, pending.reject)
      else outcome.catch(() => undefined)
      await handled
    } finally {
      this.applying = undefined
    }
  }

  stop(): void {
    this._state = 'stopped'
    this.watch?.stop()
    for (const p of this.pending.values()) p.reject(new Error('the cluster log stopped'))
    this.pending.clear()
  }
}
