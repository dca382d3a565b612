/**
 * `bun run bench digest [records]`: the state digest of `GET /cluster` (src/cluster/cluster-digest.ts) on a store of
 * `records` identity-sized records (default 200,000), without a server or etcd. Figures:
 * - one pass in one turn of the event loop: how long `GET /cluster` held the loop on every call before the digest was
 *   sliced and cached;
 * - the sliced digest (the default 10 ms slices): its wall time, its slices, the longest slice, and the longest a
 *   1 ms timer waited meanwhile (the event loop's lag: what a request arriving then would wait);
 * - a second call at the same applied revision (answered from the cache).
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { APPLIED_KEY } from '../src/actors/runtime/actor-runtime.ts'
import { DIGEST_SLICE_MS, stateDigester } from '../src/cluster/cluster-digest.ts'
import { SUB_DBS, type SubDbName } from '../src/store/store-catalogue.ts'
import { openStore, type Store, type WriteOp } from '../src/store/store-env.ts'

const BATCH = 10_000

async function fill(store: Store, records: number): Promise<void> {
  for (let from = 0; from < records; from += BATCH) {
    const ops: WriteOp[] = []
    for (let i = from; i < Math.min(records, from + BATCH); i++) {
      const id = `id${String(i).padStart(8, '0')}`
      ops.push({
        db: 'identities',
        key: id,
        value: {
          id, name: `identity-${i}`, type: 'Device', isAdmin: false, isDefaultAdmin: false, roleAttributes: ['staff', `team-${i % 50}`],
          authPolicyId: 'default', externalId: null, defaultHostingPrecedence: 'default', defaultHostingCost: 0,
          tags: { site: `site-${i % 7}` }, createdAt: 1_767_225_600_000 + i, updatedAt: 1_767_225_600_000 + i,
        },
      })
    }
    await store.commit(ops)
  }
  await store.commit([{ db: 'meta', key: APPLIED_KEY, value: { revision: 1, logTimes: {} } }])
}

/** The digest as GET /cluster computed it before: the whole store in one turn. */
function onePass(store: Store): number {
  const t0 = performance.now()
  const hash = createHash('sha256')
  for (const name of Object.keys(SUB_DBS) as SubDbName[]) {
    if (name === 'meta' || !store.has(name)) continue
    hash.update(`\u0000${name}\u0000`)
    for (const { key, value } of store.db(name).getRange()) hash.update(`${key}\u0001${JSON.stringify(value)}\u0002`)
  }
  hash.digest('hex')
  return performance.now() - t0
}

/** Runs `work` while a 1 ms timer measures how late it fires; answers the longest lateness in ms. */
async function withLoopLag(work: () => Promise<unknown>): Promise<number> {
  let longest = 0
  let expected = performance.now() + 1
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - expected)
    expected = now + 1
  }, 1)
  try {
    await work()
  } finally {
    clearInterval(timer)
  }
  return longest
}

export async function runDigestBench(records: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-digest-'))
  const store = await openStore(dir)
  try {
    const t0 = performance.now()
    await fill(store, records)
    console.log(`state digest benchmark: ${records.toLocaleString('en')} records loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${navigator.hardwareConcurrency} cores`)
    const rows: [string, string, string][] = []
    const passes = [onePass(store), onePass(store), onePass(store)].sort((a, b) => a - b)
    rows.push(['one pass in one turn (before: every GET /cluster)', `${passes[1].toFixed(0)} ms`, 'the event loop held for all of it; median of 3'])
    const digester = stateDigester(store)
    let wall = 0
    const lag = await withLoopLag(async () => {
      const s = performance.now()
      await digester.digest()
      wall = performance.now() - s
    })
    const { slices, longestSliceMs } = digester.stats
    rows.push([`sliced digest (${DIGEST_SLICE_MS} ms slices), first call at a revision`, `${wall.toFixed(0)} ms`, `${slices} slices, longest ${longestSliceMs.toFixed(1)} ms; a 1 ms timer waited at most ${lag.toFixed(1)} ms`])
    const c0 = performance.now()
    for (let i = 0; i < 1000; i++) await digester.digest()
    rows.push(['a later call at the same revision (cached)', `${(((performance.now() - c0) / 1000) * 1000).toFixed(1)} µs`, 'mean of 1,000'])
    await digester.stop()
    const width = Math.max(...rows.map((r) => r[0].length))
    for (const [name, value, note] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(10)}  ${note}`)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
