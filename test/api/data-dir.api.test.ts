// The data directory holds password and token hashes and the CA keys: it and every file in it are private to the
// owner (directories 0700, files 0600), from the first start on, and a later start takes away any wider mode it
// finds, with a warning through the server's log once the directory holds data (a fresh checkout's data/, which
// holds nothing yet, is made private quietly: test/unit/store/store-env.test.ts, test/unit/cli/main.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chmodSync, lstatSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../support/harness.ts'

/** Mode (permission bits) of every path below `dir`, and of `dir` itself under '.'. */
function modes(dir: string): Record<string, number> {
  const out: Record<string, number> = { '.': lstatSync(dir).mode & 0o777 }
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = rel ? `${rel}/${name}` : name
      const st = lstatSync(join(dir, path))
      out[path] = st.mode & 0o777
      if (st.isDirectory()) walk(path)
    }
  }
  walk('')
  return out
}

let t: TestServer
const lines: string[] = []

/** The warnings among the JSON log lines, by their message. */
const warnings = () => lines.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level === 'warn').map((l) => l.msg)

beforeAll(async () => {
  t = await startTestServer({ log: (l) => lines.push(l) })
})
afterAll(async () => {
  await t.stop()
})

describe('data directory permissions', () => {
  it('creates the directory, the database and the PKI private to the owner', () => {
    const found = modes(t.dataDir)
    expect(Object.keys(found)).toContain('edgeplane.mdb')
    expect(Object.keys(found)).toContain('edgeplane.mdb-lock')
    expect(Object.keys(found).some((p) => p.startsWith('pki/') && p.endsWith('.key.pem'))).toBe(true)
    for (const [path, mode] of Object.entries(found)) {
      const dir = lstatSync(join(t.dataDir, path)).isDirectory()
      expect({ path, mode: mode.toString(8) }).toEqual({ path, mode: (dir ? 0o700 : 0o600).toString(8) })
    }
    expect(warnings()).toEqual([])
  })

  it('takes away wider modes at the next start and says so in the log', async () => {
    chmodSync(t.dataDir, 0o755)
    chmodSync(join(t.dataDir, 'edgeplane.mdb'), 0o644)
    chmodSync(join(t.dataDir, 'pki'), 0o750)
    const keyFile = readdirSync(join(t.dataDir, 'pki')).find((n) => n.endsWith('.key.pem'))!
    chmodSync(join(t.dataDir, 'pki', keyFile), 0o640)
    lines.length = 0
    await t.restart()
    const found = modes(t.dataDir)
    expect(found['.']).toBe(0o700)
    expect(found['edgeplane.mdb']).toBe(0o600)
    expect(found['pki']).toBe(0o700)
    expect(found[`pki/${keyFile}`]).toBe(0o600)
    expect(warnings()).toHaveLength(4)
    expect(warnings().some((l) => l.startsWith('warning:') && l.includes('edgeplane.mdb') && l.includes('0644'))).toBe(true)
    // the data survived the fix: the admin still logs in (restart did) and reads
    expect((await t.mgmt.get('/identities')).status).toBe(200)
  })
})
