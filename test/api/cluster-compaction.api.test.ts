// etcd's history compacted past a node's revision: the node cannot replay what it missed, so it refuses to start and
// says to restore a newer backup; a backup older than the compaction point is refused the same way; a new backup of a
// member starts and catches up.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestCluster, type TestCluster } from '../support/cluster.ts'

let c: TestCluster
let admin: string
const MGMT = '/edge/management/v1'

beforeAll(async () => {
  c = await startTestCluster({ nodes: 2, kind: ['in-process', 'child'] })
  admin = await c.login(c.nodes[0])
}, 60_000)

afterAll(async () => {
  await c?.stop()
})

/** What a refused start says: etcd compacted the log past this data, and how to get a member's newer state. */
function expectCompactionRefusal(e: unknown) {
  const text = String(e)
  expect(text).toMatch(/edgeplane run: cannot start: .*compacted/)
  expect(text).toMatch(/edgeplane backup/)
  expect(text).toMatch(/edgeplane restore --from FILE --data DIR/)
}

describe('a compacted log', () => {
  test('a stopped node whose revision etcd compacted away refuses to start; an old backup likewise; a new backup starts', async () => {
    const [a, stopped] = c.nodes
    const oldBackup = await c.backup(a)
    await c.waitForRevision()
    await c.stopNode(stopped)
    const stoppedAt = (await c.digest(stopped)).revision
    const names = Array.from({ length: 10 }, (_, i) => `while-stopped-${i}`)
    for (const name of names) expect((await c.call(a, 'POST', `${MGMT}/services`, { token: admin, body: { name, encryptionRequired: true } })).status).toBe(201)
    // compact etcd's history up to now: past the stopped node's revision and the old backup's
    const head = await c.etcdClient.currentRevision()
    expect(head).toBeGreaterThan(stoppedAt + names.length)
    await c.etcdClient.compact(head, true)
    expect(await c.etcdClient.compactRevision()).toBe(head)

    let refused: unknown
    await c.restartNode(stopped).catch((e) => (refused = e))
    expect(stopped.running()).toBe(false)
    expectCompactionRefusal(refused)
    // its data is as it was: nothing half-applied
    expect((await c.digest(stopped)).revision).toBe(stoppedAt)

    let oldRefused: unknown
    await c.addNode('node-old', { kind: 'child', backupFile: oldBackup }).catch((e) => (oldRefused = e))
    expectCompactionRefusal(oldRefused)

    // the remedy the message names: a backup of a member taken now
    const fresh = await c.addNode('node-fresh', { kind: 'child', from: a })
    const list = await c.listAll(fresh, `${MGMT}/services?filter=${encodeURIComponent('name contains "while-stopped-"')}`, admin)
    expect(list.map((s) => s.name).sort()).toEqual([...names].sort())
    const own = await c.call(fresh, 'POST', `${MGMT}/services`, { token: admin, body: { name: 'from-fresh', encryptionRequired: true } })
    expect(own.status).toBe(201)
    const digests = await c.settledDigests([a, fresh])
    expect(digests[1]).toMatchObject({ revision: digests[0].revision, digest: digests[0].digest })
  })
})
