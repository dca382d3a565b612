/**
 * The "instant" sync of API sessions as a real router reads it (ziti router/state/apiSessionAdded.go,
 * controller/sync_strats/sync_instant.go): a full state is ApiSessionAdded messages with isFullState, in chunks of
 * 100, each with header 1013 = "instant" and header 1014 = the JSON `{"id","isLast","sequence"}` of the sync.
 * Rules the router depends on (a full state it cannot parse makes it panic):
 * - 1014 is exactly that JSON, `id` never empty, `sequence` 0, 1, 2, … within one sync, `isLast` true on the last
 *   chunk only (the router waits up to 20 s for sequences 0..last, then drops what the sync did not name);
 * - a sync that supersedes another on the same channel has a greater `id` (the router compares ids as strings and
 *   ignores an older sync): ids grow in string order within a process (`SyncIds`);
 * - zero sessions: one empty chunk, isLast (the router then drops every session it still holds of an earlier
 *   connection; the real controller sends nothing, and leaves them to the router's heartbeats).
 */

/** The sync's headers (controller/env/sync.go SyncStrategyTypeHeader, SyncStrategyStateHeader). */
export const SyncHeader = { StrategyType: 1013, StrategyState: 1014 } as const

/** The only strategy a v2 router knows. */
export const SYNC_STRATEGY = 'instant'

/** Sessions per full-state message. */
export const FULL_STATE_CHUNK = 100

/** The state of one message of a sync (controller/sync_strats/sync_instant.go InstantSyncState). */
export interface InstantSyncState {
  id: string
  isLast: boolean
  sequence: number
}

/** The 1014 header value: the JSON Go's encoding/json writes for InstantSyncState (its members in this order). */
export function encodeSyncState(s: InstantSyncState): Uint8Array {
  if (s.id === '' || !Number.isInteger(s.sequence) || s.sequence < 0) throw new TypeError(`not a sync state a router accepts: ${JSON.stringify(s)}`)
  return new TextEncoder().encode(JSON.stringify({ id: s.id, isLast: s.isLast, sequence: s.sequence }))
}

/** The states of the `chunks` messages of a sync (at least one). */
export function syncStatesOf(id: string, chunks: number): InstantSyncState[] {
  const n = Math.max(1, chunks)
  return Array.from({ length: n }, (_, sequence) => ({ id, isLast: sequence === n - 1, sequence }))
}

/** How many full-state messages `count` sessions take (an empty full state is one message). */
export function chunkCountOf(count: number, chunk = FULL_STATE_CHUNK): number {
  return Math.max(1, Math.ceil(count / chunk))
}

const TIME_DIGITS = 9
const COUNTER_DIGITS = 6
const COUNTER_SPAN = 36 ** COUNTER_DIGITS

/**
 * Sync ids: `c`, the time (base 36, never going back even when the clock does), and a counter (base 36), both
 * zero-padded, so every id is greater in string order than the ones before it in this process.
 */
export class SyncIds {
  private lastMs = 0
  private counter = 0
  constructor(private readonly nowMs: () => number) {}

  next(): string {
    this.lastMs = Math.max(this.lastMs, Math.floor(this.nowMs()))
    this.counter = (this.counter + 1) % COUNTER_SPAN
    // a counter that wraps moves the time part on, so the id still grows
    if (this.counter === 0) this.lastMs++
    return `c${this.lastMs.toString(36).padStart(TIME_DIGITS, '0')}${this.counter.toString(36).padStart(COUNTER_DIGITS, '0')}`
  }
}
