// Database snapshots (src/flows/integrity/database-snapshot.ts): two written in the same second (an operator's and the
// one the integrity fix writes first) get names of their own; the fuzz run found the second one failing with 500.
import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../../src/lib/clock.ts'
import { createDatabaseSnapshots } from '../../../../src/flows/integrity/database-snapshot.ts'

const dir = mkdtempSync(join(tmpdir(), 'edgeplane-snapshots-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('createDatabaseSnapshots', () => {
  it('names snapshots written at once apart, each copied once', async () => {
    const copied: string[] = []
    const copyStore = async (dest: string) => {
      if (existsSync(dest)) throw new Error(`${dest} already exists`)
      await new Promise((r) => setTimeout(r, 5))
      writeFileSync(dest, 'copy')
      copied.push(dest)
    }
    const snapshots = createDatabaseSnapshots({ dbPath: join(dir, 'edgeplane.mdb'), copyStore, clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')) })
    const paths = await Promise.all([snapshots.take(), snapshots.write(), snapshots.write()])
    expect(paths.map((p) => p.slice(dir.length + 1))).toEqual(['edgeplane.mdb-20260101-000000', 'edgeplane.mdb-20260101-000000-1', 'edgeplane.mdb-20260101-000000-2'])
    expect(copied.sort()).toEqual([...paths].sort())
    // once written, a name stays taken
    expect((await snapshots.write()).endsWith('-3')).toBe(true)
  })
})
