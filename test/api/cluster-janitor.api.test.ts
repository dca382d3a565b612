// The janitor keeps etcd small: command keys every registered node applied are deleted, this node's own and leftovers
// of other proposers (an earlier run, `edgeplane cluster remove`); keys some node still needs are kept.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startEtcdCluster, etcdAvailable, type EtcdCluster } from '../support/etcd.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { EtcdClient } from '../../src/cluster/etcd-client.ts'

let etcd: EtcdCluster
let a: TestServer | undefined
const prefix = `/janitor-test-${process.pid}`

beforeAll(async () => {
  etcd = await startEtcdCluster({ members: 1 })
})
afterAll(async () => {
  await a?.stop().catch(() => undefined)
  await etcd?.stop()
})

async function eventually(f: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`)
    await Bun.sleep(50)
  }
}

describe.skipIf(!etcdAvailable())('the cluster janitor', () => {
  it('deletes applied command keys, its own and other proposers’, and keeps those a registered node has not applied', async () => {
    a = await startTestServer({ cluster: { endpoints: etcd.endpoints, nodeName: 'node-a', prefix, heartbeatEveryMs: 100, janitorEveryMs: 100 } })
    // the test's own client: patient, as its 2,500 filler puts load etcd on a busy machine (the node's client is not)
    const client = new EtcdClient({ endpoints: etcd.endpoints, timeoutMs: 10_000 })
    // a leftover of another proposer (not a sealed command: every node skips it, and it is still a key to clean)
    await client.putIfAbsent(`${prefix}/log/cli-old/000000000001`, 'leftover')
    for (let i = 0; i < 5; i++) await a.create('/services', { name: `janitor-${i}`, encryptionRequired: true })
    const logKeys = async () => (await client.range(`${prefix}/log/`, { prefix: true, keysOnly: true })).kvs
    await eventually(async () => (await logKeys()).length === 0, 'every applied command key is deleted')

    // a registered node that is behind (its applied revision registered low) holds the keys after it
    const head = await client.currentRevision()
    await client.put(`${prefix}/applied/node-behind`, String(head))
    await a.create('/services', { name: 'kept-for-the-node-behind', encryptionRequired: true })
    // long enough for several own-key deletions and one leftover sweep (every 10 ticks) to have run
    await Bun.sleep(1_500)
    const kept = await logKeys()
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.every((kv) => kv.modRevision > head)).toBe(true)
    await client.deleteRange(`${prefix}/applied/node-behind`)
    await eventually(async () => (await logKeys()).length === 0, 'the keys go once the node behind is removed')

    // compaction: once 1,000 revisions can go, up to the lowest revision a registered node stored, in chunks
    for (let b = 0; b < 25; b++) await Promise.all(Array.from({ length: 100 }, (_, i) => client.put(`${prefix}/filler/${b * 100 + i}`, 'x')))
    await a.create('/services', { name: 'after-the-filler', encryptionRequired: true })
    const stored = async () => (await a!.server.cluster!.digest()).revision
    await eventually(async () => (await client.compactRevision()) >= (await stored()) - 1 && (await stored()) > 2_500, 'etcd compacted up to the stored revision')
    expect(await client.compactRevision()).toBeLessThanOrEqual(await stored())
    client.close()
  }, 60_000)
})
