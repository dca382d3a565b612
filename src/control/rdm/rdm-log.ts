/**
 * The change sets of the router data model this node made, newest last, for routers that come back with an index:
 * each entry's `previousIndex` is the index before it, so a router that holds index r is brought up to date by the
 * entries after r when the first of them follows r directly. Bounded: past `capacity` entries the oldest go, and a
 * router older than what is kept gets a full state instead. Rules kept here:
 * - Indexes only grow: an entry whose index is not above the current one is refused (a TypeError: our bug).
 * - Each entry keeps its encoded body (the same bytes for every router; only the subscription header differs); the
 *   bodies kept are bounded in bytes too (a change of a policy selecting many identities is large).
 * @see router-control-plane.md §3.2; ziti common/event_cache.go (ReplayFrom)
 */
import { create, toBinary } from '@bufbuild/protobuf'
import { DataState_ChangeSetSchema, type DataState_ChangeSet, type DataState_Event } from '../pb/edge_ctrl_pb.ts'

export interface LoggedChangeSet {
  readonly index: bigint
  readonly previousIndex: bigint
  /** The ChangeSet message, encoded. */
  readonly body: Uint8Array
  readonly events: number
}

export type Replay =
  /** The entries after the router's index, in order (none: it is up to date). */
  | { kind: 'replay'; sets: readonly LoggedChangeSet[] }
  /** What the router lacks is no longer kept (or never was): send a full state. */
  | { kind: 'full' }
  /** The router holds a later index than this node has made (a cluster node still catching up). */
  | { kind: 'future' }

export const DEFAULT_LOG_CAPACITY = 10_000
export const DEFAULT_LOG_BYTES = 64 * 1024 * 1024

export class ChangeSetLog {
  private readonly entries: LoggedChangeSet[] = []
  private current: bigint
  private bytes = 0

  constructor(
    startIndex: bigint,
    private readonly capacity = DEFAULT_LOG_CAPACITY,
    private readonly maxBytes = DEFAULT_LOG_BYTES,
  ) {
    this.current = startIndex
  }

  /** The index of the model as of the newest change set (or the start). */
  get currentIndex(): bigint {
    return this.current
  }

  get size(): number {
    return this.entries.length
  }

  /** Appends the change set of `events` at `index` (above the current one); answers the entry. */
  append(index: bigint, events: DataState_Event[]): LoggedChangeSet {
    if (index <= this.current) throw new TypeError(`change set index ${index} is not above the current ${this.current}`)
    const message: DataState_ChangeSet = create(DataState_ChangeSetSchema, { index, previousIndex: this.current, isSynthetic: false, changes: events })
    const entry: LoggedChangeSet = { index, previousIndex: this.current, body: toBinary(DataState_ChangeSetSchema, message), events: events.length }
    this.entries.push(entry)
    this.bytes += entry.body.length
    this.trim()
    this.current = index
    return entry
  }

  /** Drops the oldest entries past the bounds, a tenth of the capacity at a time (not one splice per append). */
  private trim(): void {
    let drop = 0
    if (this.entries.length > this.capacity + Math.ceil(this.capacity / 10)) drop = this.entries.length - this.capacity
    let bytes = this.bytes
    for (let i = 0; i < drop; i++) bytes -= this.entries[i]!.body.length
    // the newest entry stays, whatever its size
    while (bytes > this.maxBytes && drop < this.entries.length - 1) bytes -= this.entries[drop++]!.body.length
    if (drop === 0) return
    this.entries.splice(0, drop)
    this.bytes = bytes
  }

  /** What brings a router that holds `index` up to date. */
  replayAfter(index: bigint): Replay {
    if (index === this.current) return { kind: 'replay', sets: [] }
    if (index > this.current) return { kind: 'future' }
    // the first entry above the router's index must follow it directly, or the router would see a gap
    let lo = 0
    let hi = this.entries.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.entries[mid]!.index <= index) lo = mid + 1
      else hi = mid
    }
    const first = this.entries[lo]
    if (!first || first.previousIndex !== index) return { kind: 'full' }
    return { kind: 'replay', sets: this.entries.slice(lo) }
  }
}
