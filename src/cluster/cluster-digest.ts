/**
 * The digest of a node's replicated state: SHA-256 over every record of every sub-database but `meta`, in key order,
 * as the node's store reads it (sealed MFA records opened: their nonces differ per node, their content does not),
 * with the applied revision read in the same read transaction. Two nodes at the same revision have the same digest,
 * or their states differ (`GET /cluster` `digest`, the cluster tests).
 *
 * A large store must not hold the event loop while it is read (`GET /cluster` used to hash the whole store in one
 * turn, on every call), so:
 * - a digest is computed in slices of at most `sliceMs` of work each (the clock is read every CHECK_EVERY records),
 *   with a turn of the event loop between two slices. Every slice reads in one LMDB read transaction, taken at the
 *   start and held to the end: a snapshot, so the commits made meanwhile are not seen, and the applied revision read
 *   in it is the revision the digest is of;
 * - `StateDigester` keeps the last digest and answers it again while the store's applied revision has not moved: on a
 *   cluster node every write of replicated state commits the applied revision with it (actors/runtime/actor-runtime.ts
 *   `APPLIED_KEY`), so an unchanged revision is an unchanged state. One computation runs at a time; callers that ask
 *   meanwhile share it.
 */
import { createHash } from 'node:crypto'
import { APPLIED_KEY } from '../actors/runtime/actor-runtime.ts'
import { SUB_DBS, type SubDbName } from '../store/store-catalogue.ts'
import type { Store } from '../store/store-env.ts'

export interface StateDigest {
  revision: number
  digest: string
  records: number
}

/** The default work per slice: short beside a request's budget, long beside the cost of a turn of the loop. */
export const DIGEST_SLICE_MS = 10
/** Records hashed between two readings of the clock. */
const CHECK_EVERY = 64

export interface DigestOptions {
  /** The most time one slice may spend before it yields (default DIGEST_SLICE_MS); 0 = CHECK_EVERY records a slice. */
  sliceMs?: number
  /** A turn of the event loop between two slices (default: setImmediate). */
  yieldTurn?: () => Promise<void>
  /** Asked before every slice after the first: true stops the computation (it rejects with DigestStopped). */
  stopped?: () => boolean
  /** Told the wall time of every slice (the digester's stats, the benchmark). */
  onSlice?: (ms: number) => void
}

/** A computation ended by `StateDigester.stop()` (the node is stopping). */
export class DigestStopped extends Error {
  constructor() {
    super('the state digest was stopped: the node is stopping')
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

const appliedRevisionOf = (value: unknown) => (value as { revision?: number } | undefined)?.revision ?? 0

/** Computes the digest of `store`'s state now, in slices (see the header). */
export async function stateDigest(store: Store, opts: DigestOptions = {}): Promise<StateDigest> {
  const sliceMs = opts.sliceMs ?? DIGEST_SLICE_MS
  const yieldTurn = opts.yieldTurn ?? nextTurn
  const meta = store.db('meta')
  const txn = meta.useReadTransaction()
  try {
    const revision = appliedRevisionOf(meta.get(APPLIED_KEY, { transaction: txn }))
    const hash = createHash('sha256')
    let records = 0
    const names = (Object.keys(SUB_DBS) as SubDbName[]).filter((name) => name !== 'meta' && store.has(name))
    let at = 0
    /** The last key hashed of `names[at]`; the next slice starts after it. */
    let after: string | undefined
    let sliceStart = performance.now()
    for (;;) {
      // one slice: records until the budget is spent or the store is done
      let spent = false
      while (at < names.length && !spent) {
        const name = names[at]
        if (after === undefined) hash.update(`\u0000${name}\u0000`)
        const range = after === undefined ? { transaction: txn } : { transaction: txn, start: after, exclusiveStart: true }
        let n = 0
        let finished = true
        for (const { key, value } of store.db(name).getRange(range)) {
          hash.update(`${key}\u0001${JSON.stringify(value)}\u0002`)
          records++
          after = key
          if (++n % CHECK_EVERY === 0 && performance.now() - sliceStart >= sliceMs) {
            finished = false
            break
          }
        }
        if (finished) {
          at++
          after = undefined
        } else spent = true
      }
      opts.onSlice?.(performance.now() - sliceStart)
      if (at >= names.length) return { revision, digest: hash.digest('hex'), records }
      await yieldTurn()
      if (opts.stopped?.()) throw new DigestStopped()
      sliceStart = performance.now()
    }
  } finally {
    txn.done()
  }
}

/** How the digester has worked so far (tests, the benchmark). */
export interface DigesterStats {
  /** Digests computed (not answered from the cache). */
  computed: number
  /** Slices run, over every computation. */
  slices: number
  /** The longest slice, in ms. */
  longestSliceMs: number
}

export interface StateDigester {
  /** The digest at the applied revision the store holds now (or a later one): the last one while it has not moved. */
  digest(): Promise<StateDigest>
  readonly stats: Readonly<DigesterStats>
  /** Ends a computation in progress (its callers get DigestStopped) and refuses new ones; resolves once it ended. */
  stop(): Promise<void>
}

export function stateDigester(store: Store, opts: Omit<DigestOptions, 'stopped' | 'onSlice'> = {}): StateDigester {
  const stats: DigesterStats = { computed: 0, slices: 0, longestSliceMs: 0 }
  let cached: StateDigest | undefined
  let running: Promise<StateDigest> | undefined
  let stopped = false
  const onSlice = (ms: number) => {
    stats.slices++
    if (ms > stats.longestSliceMs) stats.longestSliceMs = ms
  }
  const start = (): Promise<StateDigest> => {
    const p = stateDigest(store, { ...opts, stopped: () => stopped, onSlice }).then((d) => {
      stats.computed++
      if (!cached || d.revision >= cached.revision) cached = d
      return d
    })
    running = p
    const clear = () => {
      if (running === p) running = undefined
    }
    p.then(clear, clear)
    return p
  }
  return {
    stats,
    async digest() {
      for (;;) {
        if (stopped) throw new DigestStopped()
        const wanted = appliedRevisionOf(store.db('meta').get(APPLIED_KEY))
        if (cached && cached.revision === wanted) return cached
        // a computation under way began at most at `wanted`: a later revision than its own means another round
        const d = await (running ?? start())
        if (d.revision >= wanted) return d
      }
    },
    async stop() {
      stopped = true
      await running?.catch(() => undefined)
    },
  }
}
