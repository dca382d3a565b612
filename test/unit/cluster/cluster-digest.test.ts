// The state digest (src/cluster/cluster-digest.ts): computed in slices with a turn of the event loop between them,
// all in one read transaction (the commits made meanwhile are not seen, and the revision is the one read in it); the
// same digest whatever the slicing, and the same as one pass over the store; kept while the applied revision does not
// move, shared by callers that ask meanwhile; stopped with the node.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { APPLIED_KEY } from '../../../src/actors/runtime/actor-runtime.ts'
import { DigestStopped, stateDigest, stateDigester } from '../../../src/cluster/cluster-digest.ts'
import { SUB_DBS, type SubDbName } from '../../../src/store/store-catalogue.ts'
import { openStore, type Store, type WriteOp } from '../../../src/store/store-env.ts'

let dir: string
let store: Store
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-digest-'))
  store = await openStore(dir)
})
afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Commits `n` services and `n` identities (keys from `from`) with the applied revision `revision`. */
async function fill(n: number, revision: number, from = 0): Promise<void> {
  const ops: WriteOp[] = [{ db: 'meta', key: APPLIED_KEY, value: { revision, logTimes: {} } }]
  for (let i = from; i < from + n; i++) {
    const id = `r${String(i).padStart(6, '0')}`
    ops.push({ db: 'services', key: id, value: { id, name: `service ${i}`, roleAttributes: ['a', 'b'] } })
    ops.push({ db: 'identities', key: id, value: { id, name: `identity ${i}`, isAdmin: false } })
  }
  await store.commit(ops)
}

/** The digest's definition in one synchronous pass (what every node must agree on, whatever its slicing). */
function onePass(s: Store) {
  const hash = createHash('sha256')
  let records = 0
  for (const name of Object.keys(SUB_DBS) as SubDbName[]) {
    if (name === 'meta' || !s.has(name)) continue
    hash.update(`\u0000${name}\u0000`)
    for (const { key, value } of s.db(name).getRange()) {
      hash.update(`${key}\u0001${JSON.stringify(value)}\u0002`)
      records++
    }
  }
  const revision = (s.db('meta').get(APPLIED_KEY) as { revision: number }).revision
  return { revision, digest: hash.digest('hex'), records }
}

describe('stateDigest', () => {
  it('case=the same digest as one pass over the store, whatever the slicing', async () => {
    await fill(1_000, 7)
    const expected = onePass(store)
    expect(expected.records).toBeGreaterThanOrEqual(2_000)
    let slices = 0
    const sliced = await stateDigest(store, { sliceMs: 0, onSlice: () => slices++ })
    expect(sliced).toEqual(expected)
    // 0 ms: a slice ends at every check (64 records): many slices, each a few records
    expect(slices).toBeGreaterThan(expected.records / 64 - 1)
    let whole = 0
    expect(await stateDigest(store, { sliceMs: Number.POSITIVE_INFINITY, onSlice: () => whole++ })).toEqual(expected)
    expect(whole).toBe(1)
  })

  it('case=a slice boundary at the end of a sub-database changes nothing (exactly 64 records in each)', async () => {
    const ops: WriteOp[] = [{ db: 'meta', key: APPLIED_KEY, value: { revision: 3, logTimes: {} } }]
    for (let i = 0; i < 64; i++) ops.push({ db: 'services', key: `s${String(i).padStart(2, '0')}`, value: { i } })
    await store.commit(ops)
    expect(await stateDigest(store, { sliceMs: 0 })).toEqual(onePass(store))
  })

  it('case=lets the event loop run between slices: work queued before it ends first', async () => {
    await fill(500, 2)
    const order: string[] = []
    setImmediate(() => order.push('other work'))
    setTimeout(() => order.push('a timer'), 0)
    await stateDigest(store, { sliceMs: 0, onSlice: () => order.length === 0 && order.push('first slice') }).then(() => order.push('digest'))
    expect(order[0]).toBe('first slice')
    expect(order.at(-1)).toBe('digest')
    expect(order).toContain('other work')
    expect(order).toContain('a timer')
  })

  it('case=reads one snapshot: commits made between its slices are not in it, and its revision is the one read with it', async () => {
    await fill(500, 10)
    const before = onePass(store)
    let committed = false
    const d = await stateDigest(store, {
      sliceMs: 0,
      yieldTurn: async () => {
        if (committed) return
        committed = true
        // a change to a record not read yet, one already read, a new record and a new revision
        await store.commit([
          { db: 'meta', key: APPLIED_KEY, value: { revision: 11, logTimes: {} } },
          { db: 'services', key: 'r000000', value: { id: 'r000000', name: 'changed' } },
          { db: 'identities', key: 'r000499' },
          { db: 'services', key: 'zzz', value: { id: 'zzz' } },
        ])
      },
    })
    expect(committed).toBe(true)
    expect(d).toEqual(before)
    const after = onePass(store)
    expect(after.revision).toBe(11)
    expect(await stateDigest(store)).toEqual(after)
    expect(after.digest).not.toBe(before.digest)
  })
})

describe('stateDigester', () => {
  it('case=keeps the digest while the applied revision does not move; a new revision is digested anew', async () => {
    await fill(300, 4)
    const digester = stateDigester(store, { sliceMs: 0 })
    const first = await digester.digest()
    expect(first).toEqual(onePass(store))
    const slicesOfOne = digester.stats.slices
    expect(slicesOfOne).toBeGreaterThan(1)
    expect(await digester.digest()).toBe(first)
    expect(await digester.digest()).toBe(first)
    expect(digester.stats).toMatchObject({ computed: 1, slices: slicesOfOne })
    await fill(10, 5, 300)
    const second = await digester.digest()
    expect(second).toEqual(onePass(store))
    expect(second.revision).toBe(5)
    expect(second.digest).not.toBe(first.digest)
    expect(digester.stats.computed).toBe(2)
    await digester.stop()
  })

  it('case=callers that ask while a digest is computed share it', async () => {
    await fill(300, 4)
    const digester = stateDigester(store, { sliceMs: 0 })
    const all = await Promise.all([digester.digest(), digester.digest(), digester.digest()])
    expect(all[1]).toBe(all[0])
    expect(all[2]).toBe(all[0])
    expect(digester.stats.computed).toBe(1)
    await digester.stop()
  })

  it('case=a caller that saw a newer revision than the computation under way gets a digest of that revision or later', async () => {
    await fill(300, 4)
    const digester = stateDigester(store, { sliceMs: 0 })
    const early = digester.digest()
    // committed while the first computation runs (it began at revision 4)
    await fill(1, 5, 300)
    const late = await digester.digest()
    expect((await early).revision).toBe(4)
    expect(late.revision).toBe(5)
    expect(late).toEqual(onePass(store))
    await digester.stop()
  })

  it('case=stop ends a computation in progress with DigestStopped and lets its read transaction go; later calls are refused', async () => {
    await fill(1_000, 4)
    const digester = stateDigester(store, { sliceMs: 0 })
    const pending = digester.digest()
    await new Promise((r) => setImmediate(r))
    await digester.stop()
    await expect(pending).rejects.toBeInstanceOf(DigestStopped)
    await expect(digester.digest()).rejects.toBeInstanceOf(DigestStopped)
    // the store still takes commits and closes (afterEach) with nothing held
    await fill(1, 5, 1_000)
  })
})
