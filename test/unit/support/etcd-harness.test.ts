// The etcd test harness (test/support/etcd.ts): members on their own ports and data dirs, a leader, a member killed
// and started again on its data dir, and stop() ending every member even when the last one has lost its quorum.
import { describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { etcdAvailable, etcdSkipReason, startEtcdCluster } from '../../support/etcd.ts'

if (!etcdAvailable()) console.log(`skipping the etcd harness tests: ${etcdSkipReason()}`)

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.skipIf(!etcdAvailable())('startEtcdCluster', () => {
  it('starts healthy members, restarts a killed one on its data, and stop() ends a member without quorum and removes the dir', async () => {
    const cluster = await startEtcdCluster({ members: 3 })
    const pids = cluster.members.map((m) => m.pid()!)
    try {
      expect(new Set(cluster.endpoints).size).toBe(3)
      expect(pids.every((pid) => typeof pid === 'number' && processExists(pid))).toBe(true)
      expect(existsSync(cluster.dir)).toBe(true)
      for (const endpoint of cluster.endpoints) {
        expect(await (await fetch(`${endpoint}/health`)).json()).toMatchObject({ health: 'true' })
      }
      const leader = await cluster.leader()
      const put = await fetch(`${leader.clientUrl}/v3/kv/put`, {
        method: 'POST',
        body: JSON.stringify({ key: btoa('harness'), value: btoa('kept') }),
      })
      expect(put.status).toBe(200)

      await leader.kill('SIGKILL')
      expect(leader.isRunning()).toBe(false)
      expect(leader.pid()).toBeUndefined()
      expect(processExists(pids[cluster.members.indexOf(leader)])).toBe(false)
      const next = await cluster.leader()
      expect(next).not.toBe(leader)

      await leader.start()
      expect(leader.isRunning()).toBe(true)
      // the restarted member serves the data written before its kill (it rejoined with its own data dir)
      const range = await fetch(`${leader.clientUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: btoa('harness') }) })
      const kvs = ((await range.json()) as { kvs?: { value: string }[] }).kvs ?? []
      expect(kvs.map((kv) => atob(kv.value))).toEqual(['kept'])

      // leave one member without quorum: stop() still ends it (SIGKILL after the SIGTERM grace)
      const others = cluster.members.filter((m) => m !== next)
      await Promise.all(others.map((m) => m.kill('SIGKILL')))
    } finally {
      await cluster.stop()
    }
    expect(cluster.members.every((m) => !m.isRunning())).toBe(true)
    expect(cluster.members.map((m) => m.pid())).toEqual([undefined, undefined, undefined])
    expect(existsSync(cluster.dir)).toBe(false)
  })
})
