// The store's environment (src/store/store-env.ts): releaseScannedPages closes and reopens the environment after the
// start-up scan, so the pages that scan read leave the process's resident memory while every record and every
// commit stays. makePrivate narrows the modes of a data directory and says whether it held any data; openStore warns
// about what it narrowed only then (a fresh checkout's data/ is made private quietly).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makePrivate, openStore, storePathOf, type WriteOp } from '../../../src/store/store-env.ts'

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

/** A data directory as git checks out the shipped one: 0755, with an empty 0644 `.gitkeep`. */
function checkedOut(path: string): string {
  mkdirSync(path, { recursive: true })
  chmodSync(path, 0o755)
  writeFileSync(join(path, '.gitkeep'), '')
  chmodSync(join(path, '.gitkeep'), 0o644)
  return path
}
const modeOf = (path: string) => lstatSync(path).mode & 0o777

describe('makePrivate', () => {
  it('case=a tree of directories and empty files held no data; its modes are narrowed and listed', () => {
    const data = checkedOut(join(dir, 'data'))
    mkdirSync(join(data, 'empty'), { mode: 0o775 })
    chmodSync(join(data, 'empty'), 0o775)
    const made = makePrivate(data)
    expect(made.heldData).toBe(false)
    expect(made.changed).toHaveLength(3)
    expect(made.changed.some((l) => l.includes('.gitkeep') && l.includes('0644') && l.includes('now 0600'))).toBe(true)
    expect([modeOf(data), modeOf(join(data, '.gitkeep')), modeOf(join(data, 'empty'))]).toEqual([0o700, 0o600, 0o700])
  })

  it('case=a non-empty file anywhere below, a symbolic link or a special file is data', () => {
    const deep = join(dir, 'deep')
    mkdirSync(join(deep, 'pki'), { recursive: true })
    writeFileSync(join(deep, 'pki', 'key.pem'), 'secret')
    expect(makePrivate(deep).heldData).toBe(true)
    const linked = checkedOut(join(dir, 'linked'))
    symlinkSync('/etc/hostname', join(linked, 'edgeplane.mdb'))
    expect(makePrivate(linked).heldData).toBe(true)
    const fifo = checkedOut(join(dir, 'fifo'))
    expect(Bun.spawnSync(['mkfifo', join(fifo, 'pipe')]).exitCode).toBe(0)
    expect(makePrivate(fifo).heldData).toBe(true)
  })

  it('case=an already private tree changes nothing', () => {
    const data = join(dir, 'private')
    mkdirSync(data, { mode: 0o700 })
    writeFileSync(join(data, 'f'), 'x', { mode: 0o600 })
    expect(makePrivate(data)).toEqual({ changed: [], heldData: true })
  })
})

describe('openStore on a data directory open to others', () => {
  it('case=a fresh checkout\'s data/ (0755, an empty 0644 .gitkeep) is made private without a warning', async () => {
    const data = checkedOut(join(dir, 'data'))
    const warnings: string[] = []
    const store = await openStore(data, { warn: (l) => warnings.push(l) })
    await store.close()
    expect(warnings).toEqual([])
    expect([modeOf(data), modeOf(join(data, '.gitkeep')), modeOf(storePathOf(data))]).toEqual([0o700, 0o600, 0o600])
  })

  it('case=a directory that holds a database and is open to others is fixed with a warning per path', async () => {
    const data = checkedOut(join(dir, 'data'))
    const first = await openStore(data)
    await first.commit([{ db: 'services', key: 's1', value: { name: 'one' } }])
    await first.close()
    chmodSync(data, 0o755)
    chmodSync(storePathOf(data), 0o644)
    const warnings: string[] = []
    const store = await openStore(data, { warn: (l) => warnings.push(l) })
    expect(store.db('services').get('s1')).toEqual({ name: 'one' })
    await store.close()
    expect(warnings).toEqual([
      `warning: ${data} was open to other users (mode 0755); now 0700`,
      `warning: ${storePathOf(data)} was open to other users (mode 0644); now 0600`,
    ])
  })

  it('case=an empty database file left by a start that stopped before LMDB wrote it is no data either', async () => {
    const data = checkedOut(join(dir, 'data'))
    writeFileSync(storePathOf(data), '')
    chmodSync(storePathOf(data), 0o644)
    const warnings: string[] = []
    const store = await openStore(data, { warn: (l) => warnings.push(l) })
    await store.close()
    expect(warnings).toEqual([])
    expect(modeOf(storePathOf(data))).toBe(0o600)
  })
})
