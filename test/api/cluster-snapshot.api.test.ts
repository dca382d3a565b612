// A member behind etcd's compaction point comes back through a live member's state snapshot; a restored backup that
// never joined is refused; the snapshot route serves members only. Real etcd (test/support/etcd.ts), nodes in-process
// over HTTPS (startTestServer with `cluster:`).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEtcdCluster, etcdAvailable, type EtcdCluster } from '../support/etcd.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { backupDataDir } from '../../src/operate/operate-backup.ts'
import { restoreDataDir } from '../../src/operate/operate-restore.ts'
import { EtcdClient } from '../../src/cluster/etcd-client.ts'
import { peerProof, peerSecretOf, PEER_HEADER, SNAPSHOT_PATH } from '../../src/cluster/cluster-snapshot.ts'
import { commandSealer } from '../../src/cluster/cluster-seal.ts'
import { serialize } from 'bun:jsc'

let etcd: EtcdCluster
const dirs: string[] = []
const running: TestServer[] = []
const prefix = `/snapshot-test-${process.pid}`

const node = async (name: string, dataDir: string) => {
  const s = await startTestServer({ dataDir, cluster: { endpoints: etcd.endpoints, nodeName: name, prefix, heartbeatEveryMs: 100 } })
  running.push(s)
  return s
}
const stopNode = async (s: TestServer) => {
  running.splice(running.indexOf(s), 1)
  await s.stop()
}
const tempDir = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `edgeplane-${tag}-`))
  dirs.push(d)
  return d
}

/** Polls until `f` holds (a deadline, not a timing assertion). */
async function eventually(f: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`)
    await Bun.sleep(25)
  }
}

beforeAll(async () => {
  etcd = await startEtcdCluster({ members: 1 })
})

afterAll(async () => {
  for (const s of running.splice(0)) await s.stop().catch(() => undefined)
  await etcd?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe.skipIf(!etcdAvailable())('a member behind the compaction point', () => {
  it('comes back with a live member’s snapshot; an old backup that never joined is refused; the route serves members only; commands not sealed by a member are skipped', async () => {
    const a = await node('node-a', tempDir('snap-a'))
    const archive = join(tempDir('snap-archive'), 'a.tar')
    await backupDataDir({ dataDir: a.dataDir, outFile: archive, now: new Date() })
    const dirB = join(tempDir('snap-b'), 'data')
    const dirC = join(tempDir('snap-c'), 'data')
    await restoreDataDir(archive, dirB)
    await restoreDataDir(archive, dirC)
    let b = await node('node-b', dirB)
    await stopNode(b)

    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(await a.create('/services', { name: `while-b-was-down-${i}`, encryptionRequired: true }))
    const client = new EtcdClient({ endpoints: etcd.endpoints })
    const head = await client.currentRevision()
    await client.compact(head)
    expect(await client.compactRevision()).toBe(head)

    b = await node('node-b', dirB)
    const names = (await b.mgmt.get('/services?limit=100')).body.data.map((s: { name: string }) => s.name)
    for (let i = 0; i < 5; i++) expect(names).toContain(`while-b-was-down-${i}`)
    // the digests are read from each store with the revision stored in it: equal revisions must give equal digests
    await eventually(async () => {
      const [da, db] = await Promise.all([a.server.cluster!.digest(), b.server.cluster!.digest()])
      return da.revision === db.revision && da.digest === db.digest
    }, 'both nodes stored the same revision with the same state')

    // a backup taken before the compaction, of a directory that never joined: refused with what to do
    await expect(node('node-c', dirC)).rejects.toThrow(/compacted the cluster's log.*take a newer backup/)

    // the snapshot route: no proof or a forged one is 401; a member's proof gets the store's copy
    const url = `${a.url}${SNAPSHOT_PATH}`
    const tls = { ca: a.caPem }
    const refused = await fetch(url, { tls } as RequestInit)
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as { error: { code: string; requestId: string } }).error).toMatchObject({ code: 'UNAUTHORIZED', requestId: expect.any(String) })
    const forged = peerProof(Buffer.alloc(32, 7), 'node-b', a.clock.now())
    expect((await fetch(url, { tls, headers: { [PEER_HEADER]: forged } } as RequestInit)).status).toBe(401)
    const stale = peerProof(peerSecretOf(dirB), 'node-b', a.clock.now() - 120_000)
    expect((await fetch(url, { tls, headers: { [PEER_HEADER]: stale } } as RequestInit)).status).toBe(401)
    const good = await fetch(url, { tls, headers: { [PEER_HEADER]: peerProof(peerSecretOf(dirB), 'node-b', a.clock.now()) } } as RequestInit)
    expect(good.status).toBe(200)
    expect(Number(good.headers.get('x-edgeplane-revision'))).toBeGreaterThanOrEqual(head)
    expect((await good.arrayBuffer()).byteLength).toBeGreaterThan(0)

    // a client of etcd without the cluster's key cannot append a command the nodes apply (commands are sealed)
    const forgedCmd = { a: 'policy-graph', m: { type: 'service.create', input: { name: 'forged', encryptionRequired: true }, change: { author: 'x', source: 'rest' } }, t: a.clock.now(), d: a.clock.now() + 60_000 }
    await client.putIfAbsent(`${prefix}/log/intruder/1`, Buffer.from(serialize(forgedCmd) as unknown as ArrayBuffer).toString('base64'))
    const wrongKey = commandSealer(Buffer.alloc(32, 9)).seal(new Uint8Array(serialize(forgedCmd) as unknown as ArrayBuffer), `${prefix}/log/intruder/2`)
    await client.putIfAbsent(`${prefix}/log/intruder/2`, wrongKey)
    await a.create('/services', { name: 'after-the-forgery', encryptionRequired: true })
    const after = (await a.mgmt.get('/services?limit=100')).body.data.map((s: { name: string }) => s.name)
    expect(after).toContain('after-the-forgery')
    expect(after).not.toContain('forged')
    client.close()
  }, 60_000)

})
