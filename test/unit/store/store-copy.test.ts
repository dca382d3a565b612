// The copy primitive of backups and snapshots (src/store/store-copy.ts): a compacted copy of an open store that opens
// as a store of its own, private to the owner, never over an existing file; and the read-only open that backup and
// status use beside a running controller.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyStore } from '../../../src/store/store-copy.ts'
import { openStore, storePathOf } from '../../../src/store/store-env.ts'
import { countRecords, schemaVersionOf } from '../../../src/store/store-stats.ts'
import { SCHEMA_VERSION } from '../../../src/store/store-migrations.ts'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-copy-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('copyStore', () => {
  it('writes a 0600 copy that opens with the same records, and never overwrites', async () => {
    const store = await openStore(join(dir, 'live'))
    await store.commit([{ db: 'services', key: 's1', value: { name: 'one' } }, { db: 'identities', key: 'i1', value: { name: 'me' } }])
    const dest = join(dir, 'copy', 'edgeplane.mdb')
    await copyStore(store, dest)
    await store.commit([{ db: 'services', key: 's2', value: { name: 'two' } }])
    expect(statSync(dest).mode & 0o777).toBe(0o600)
    await expect(copyStore(store, dest)).rejects.toThrow('already exists')
    await store.close()
    const copy = await openStore(join(dir, 'copy'), { readOnly: true })
    expect(copy.db('services').get('s1')).toEqual({ name: 'one' })
    expect(copy.db('services').get('s2')).toBeUndefined()
    expect(countRecords(copy)).toMatchObject({ services: 1, identities: 1 })
    expect(schemaVersionOf(copy)).toBe(SCHEMA_VERSION)
    await copy.close()
  })
})

describe('openStore readOnly', () => {
  it('refuses a directory without a store and creates nothing', async () => {
    await expect(openStore(join(dir, 'none'), { readOnly: true })).rejects.toThrow('holds no edgeplane data')
    expect(() => statSync(join(dir, 'none'))).toThrow()
  })

  it('reads beside a writer, sees its later commits, and refuses to commit', async () => {
    const writer = await openStore(join(dir, 'live'))
    const reader = await openStore(join(dir, 'live'), { readOnly: true })
    await writer.commit([{ db: 'configs', key: 'c1', value: { name: 'c' } }])
    expect(reader.db('configs').get('c1')).toEqual({ name: 'c' })
    await expect(reader.commit([{ db: 'configs', key: 'c2', value: {} }])).rejects.toThrow('read-only')
    await reader.close()
    await writer.close()
  })

  it('an empty store file (created, never written) is refused, not opened', async () => {
    writeFileSync(storePathOf(dir), '')
    await expect(openStore(dir, { readOnly: true })).rejects.toThrow('holds no edgeplane data')
  })
})
