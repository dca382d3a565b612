// Database snapshot names (flows/integrity/database-snapshot.ts): the real controller's stamp, a suffix for a name
// taken, and two copies written at once (an operator's snapshot and the integrity fix's copy in one second) never
// given the same name (the second copy used to find the first's name free and fail with "already exists": a 500).
import { describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabaseSnapshots } from '../../../src/flows/integrity/database-snapshot.ts'

const AT = Date.UTC(2026, 10, 26, 21, 5, 9)

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'))
  const gates: (() => void)[] = []
  const snapshots = createDatabaseSnapshots({
    dbPath: join(dir, 'edgeplane.mdb'),
    clock: { now: () => AT },
    // a copy that takes until the test lets it finish, refused (as copyStore is) when its file exists
    copyStore: async (dest) => {
      if (existsSync(dest)) throw new Error(`${dest} already exists`)
      await new Promise<void>((r) => gates.push(r))
      writeFileSync(dest, 'copy')
    },
  })
  return { dir, gates, snapshots, done: () => rmSync(dir, { recursive: true, force: true }) }
}

describe('database snapshot names', () => {
  it('case=two copies written at once get two names', async () => {
    const s = setup()
    try {
      const first = s.snapshots.take()
      const second = s.snapshots.write()
      while (s.gates.length < 2) await Bun.sleep(1)
      for (const open of s.gates) open()
      expect(await first).toBe(join(s.dir, 'edgeplane.mdb-20261126-210509'))
      expect(await second).toBe(join(s.dir, 'edgeplane.mdb-20261126-210509-1'))
    } finally {
      s.done()
    }
  })

  it('case=a name already on disk is skipped', async () => {
    const s = setup()
    try {
      writeFileSync(join(s.dir, 'edgeplane.mdb-20261126-210509'), 'older')
      const p = s.snapshots.write()
      while (s.gates.length < 1) await Bun.sleep(1)
      s.gates[0]()
      expect(await p).toBe(join(s.dir, 'edgeplane.mdb-20261126-210509-1'))
    } finally {
      s.done()
    }
  })

  it('case=a second snapshot within a minute is refused with RATE_LIMITED', async () => {
    const s = setup()
    try {
      const p = s.snapshots.take()
      await expect(s.snapshots.take()).rejects.toMatchObject({ code: 'RATE_LIMITED' })
      while (s.gates.length < 1) await Bun.sleep(1)
      s.gates[0]()
      await p
    } finally {
      s.done()
    }
  })
})
