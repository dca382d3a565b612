// etcd's history compacted past what a node or a backup holds: the log can no longer replay what they missed.
// - A member (a data directory that joined) comes back through a live member's state snapshot, started as
//   `edgeplane run` in a child process, and ends with the same state as the others; with no live member to ask, it
//   refuses to start and says why.
// - A restored backup older than the compaction point that never joined is refused, with what to do: a newer backup.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestCluster, type TestCluster, type TestNode } from '../support/cluster.ts'

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

async function writeWhileDown(a: TestNode, tag: string): Promise<string[]> {
  const names = Array.from({ length: 10 }, (_, i) => `${tag}-${i}`)
  for (const name of names) expect((await c.call(a, 'POST', `${MGMT}/services`, { token: admin, body: { name, encryptionRequired: true } })).status).toBe(201)
  return names
}

/** Compacts etcd's history up to its current revision (the etcd client, as an operator's etcdctl would). */
async function compactAll(): Promise<number> {
  const head = await c.etcdClient.currentRevision()
  await c.etcdClient.compact(head, true)
  expect(await c.etcdClient.compactRevision()).toBe(head)
  return head
}

const servicesNamed = (n: TestNode, tag: string) =>
  c.listAll(n, `${MGMT}/services?filter=${encodeURIComponent(`name contains "${tag}-"`)}`, admin).then((l) => l.map((s) => s.name as string).sort())

describe('a compacted log', () => {
  test('a backup older than the compaction point is refused with what to do; a member behind it comes back from a snapshot', async () => {
    const [a, member] = c.nodes
    const oldBackup = await c.backup(a)
    await c.waitForRevision()
    await c.stopNode(member)
    const stoppedAt = (await c.digest(member)).revision
    const names = await writeWhileDown(a, 'while-stopped')
    expect(await compactAll()).toBeGreaterThan(stoppedAt + names.length)

    // the old backup never joined: the log cannot bring it up to date, and the node says what to do
    let refused: unknown
    await c.addNode('node-old', { kind: 'child', backupFile: oldBackup }).catch((e) => (refused = e))
    expect(String(refused)).toMatch(/edgeplane run: cannot start: .*compacted the cluster's log.*take a newer backup of a member \(edgeplane backup\), restore it \(edgeplane restore --from FILE --data DIR\)/)

    // the member: replaced by a live member's snapshot, then caught up; its first answers hold what it missed
    await c.restartNode(member)
    expect(await servicesNamed(member, 'while-stopped')).toEqual([...names].sort())
    const own = await c.call(member, 'POST', `${MGMT}/services`, { token: admin, body: { name: 'after-snapshot', encryptionRequired: true } })
    expect(own.status).toBe(201)
    await c.waitForRevision()
    expect((await c.call(a, 'GET', `${MGMT}/services/${own.body.data.id}`, { token: admin })).status).toBe(200)
    const digests = await c.settledDigests([a, member])
    expect(digests[1]).toMatchObject({ revision: digests[0].revision, digest: digests[0].digest })
  }, 60_000)

  test('a member behind the compaction point with no live member to ask refuses to start, and starts once one is back', async () => {
    const [a, member] = c.nodes
    if (!member.running()) await c.restartNode(member)
    await c.waitForRevision()
    await c.stopNode(member)
    const names = await writeWhileDown(a, 'alone')
    await compactAll()
    await c.stopNode(a)

    let refused: unknown
    await c.restartNode(member).catch((e) => (refused = e))
    expect(member.running()).toBe(false)
    expect(String(refused)).toMatch(
      /edgeplane run: cannot start: this node applied the log up to revision \d+, but etcd compacted it up to \d+, and no member gave a usable state snapshot \(no other member is live\): start it again once another member is live, or take a newer backup/,
    )

    await c.restartNode(a)
    await c.restartNode(member)
    expect(await servicesNamed(member, 'alone')).toEqual([...names].sort())
    const digests = await c.settledDigests([a, member])
    expect(digests[1]).toMatchObject({ revision: digests[0].revision, digest: digests[0].digest })
  }, 60_000)
})
