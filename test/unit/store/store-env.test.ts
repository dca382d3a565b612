// The store's environment (src/store/store-env.ts): releaseScannedPages closes and reopens the environment after the
// start-up scan, so the pages that scan read leave the process's resident memory while every record and every
// commit stays.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore, type WriteOp } from '../../../src/store/store-env.ts'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-env-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** Resident file-backed pages of this process in KiB (Linux), undefined elsewhere. */
function rssFileKiB(): number | undefined {
  if (!existsSync('/proc/self/status')) return undefined
  return Number(/^RssFile:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1])
}

describe('releaseScannedPages', () => {
  it('keeps every record; a commit asked while it reopens waits for the new environment and is kept', async () => {
    const store = await openStore(dir)
    await store.commit([{ db: 'services', key: 's1', value: { name: 'one' } }])
    const reopened = store.releaseScannedPages()
    const during = store.commit([{ db: 'services', key: 's2', value: { name: 'two' } }])
    await Promise.all([reopened, during])
    expect(store.db('services').get('s1')).toEqual({ name: 'one' })
    expect(store.db('services').get('s2')).toEqual({ name: 'two' })
    await store.commit([{ db: 'services', key: 's1' }])
    await store.close()
    const again = await openStore(dir, { readOnly: true })
    expect([...again.db('services').getKeys()]).toEqual(['s2'])
    await again.close()
  })

  it('drops the pages a full scan read from resident memory', async () => {
    const store = await openStore(dir)
    const filler = 'x'.repeat(1000)
    const ops: WriteOp[] = Array.from({ length: 16_000 }, (_, i) => ({ db: 'identities', key: `i${i}`, value: { id: `i${i}`, filler } }))
    await store.commit(ops)
    await store.releaseScannedPages()
    const before = rssFileKiB()
    let n = 0
    for (const _ of store.db('identities').getRange()) n++
    expect(n).toBe(16_000)
    const scanned = rssFileKiB()
    await store.releaseScannedPages()
    const after = rssFileKiB()
    await store.close()
    if (before === undefined || scanned === undefined || after === undefined) return
    // ~16 MB of records: the scan maps them in, the reopen lets them go
    expect(scanned - before).toBeGreaterThan(8_000)
    expect(scanned - after).toBeGreaterThan(8_000)
  })
})
