// The single commit path of the store (src/store/store-env.ts `commit`): the ops of one commit land in one LMDB
// transaction even while other commits are in flight, a commit that cannot be stored writes nothing, and what is
// stored reads back as the JSON the records were.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore, type Store, type WriteOp } from '../../../src/store/store-env.ts'

let dir: string
let store: Store
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-commit-'))
  store = await openStore(dir)
})
afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('store commit', () => {
  it('case=the ops of one commit are seen all or none, with many commits in flight across sub-dbs', async () => {
    const commits = 300
    const seen = { partial: 0, whole: 0 }
    let done = false
    // a reader on this thread between event turns: each turn reads one snapshot of the database
    const reader = (async () => {
      while (!done) {
        for (let i = 0; i < commits; i++) {
          const parts = [store.db('identities').get(`i${i}`), store.db('authenticators').get(`a${i}`), store.db('enrollments').get(`e${i}`)]
          const present = parts.filter((p) => p !== undefined).length
          if (present === 3) seen.whole++
          else if (present > 0) seen.partial++
        }
        await new Promise((r) => setImmediate(r))
      }
    })()
    const writes: Promise<void>[] = []
    for (let i = 0; i < commits; i++) {
      writes.push(
        store.commit([
          { db: 'identities', key: `i${i}`, value: { n: i } },
          { db: 'authenticators', key: `a${i}`, value: { n: i } },
          { db: 'enrollments', key: `e${i}`, value: { n: i } },
        ]),
      )
      // commits arrive over many event turns, as requests do
      if (i % 7 === 0) await new Promise((r) => setImmediate(r))
    }
    await Promise.all(writes)
    done = true
    await reader
    expect(seen.partial).toBe(0)
    expect(seen.whole).toBeGreaterThan(0)
    for (let i = 0; i < commits; i++) expect(store.db('enrollments').get(`e${i}`)).toEqual({ n: i })
  })

  it('case=a commit resolves after its writes are readable; removes and puts keep their order', async () => {
    await store.commit([{ db: 'services', key: 's1', value: { name: 'one', tags: { a: [1, null, 'x'] } } }])
    expect(store.db('services').get('s1')).toEqual({ name: 'one', tags: { a: [1, null, 'x'] } })
    await store.commit([
      { db: 'services', key: 's1' },
      { db: 'services', key: 's2', value: 'plain string' },
      { db: 'services', key: 's2', value: 7 },
    ])
    expect(store.db('services').get('s1')).toBeUndefined()
    expect(store.db('services').get('s2')).toBe(7)
  })

  it('case=an identity is stored in its compact form (members at their default left out) and reads back whole', async () => {
    const identity = { id: 'compact-1', name: 'c', typeId: 'Default', isAdmin: false, externalId: null, authPolicyId: 'default', roleAttributes: ['a'] }
    await store.commit([{ db: 'identities', key: 'compact-1', value: identity }])
    const raw = JSON.parse(Buffer.from(store.db('identities').getBinary('compact-1')!).toString('utf8'))
    expect(raw).toEqual({ id: 'compact-1', name: 'c', roleAttributes: ['a'] })
    expect(store.db('identities').get('compact-1')).toMatchObject(identity)
  })

  const refused: [string, WriteOp][] = [
    ['a value JSON cannot encode', { db: 'identities', key: 'bad', value: { n: 1n } }],
    ['a value JSON encodes as nothing', { db: 'service-policies', key: 'bad', value: () => 1 }],
    ['an empty key', { db: 'service-policies', key: '', value: { n: 1 } }],
    ['a key too long for LMDB', { db: 'service-policies', key: 'k'.repeat(2000), value: { n: 1 } }],
  ]
  for (const [what, bad] of refused) {
    it(`case=a commit with ${what} is refused with a TypeError and writes none of its ops`, async () => {
      const good: WriteOp = { db: 'services', key: 'written-first', value: { ok: true } }
      await expect(store.commit([good, bad])).rejects.toThrow(TypeError)
      // a later commit goes through on its own
      await store.commit([{ db: 'services', key: 'later', value: 1 }])
      expect(store.db('services').get('later')).toBe(1)
      expect(store.db('services').get('written-first')).toBeUndefined()
    })
  }
})
