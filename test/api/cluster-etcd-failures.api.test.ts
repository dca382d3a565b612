// The cluster's etcd fails under it: kill -9 of the etcd leader during writes (writes resume on the new leader, no
// acknowledged write lost, none doubled), then two of three members down (writes answer 503 CLUSTER_NO_LEADER in the
// envelope and change nothing, reads by an existing session go on, a new login is refused alike, the cluster health
// check fails) until they return.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { pollUntil, startTestCluster, type TestCluster, type TestNode } from '../support/cluster.ts'

let c: TestCluster
let admin: string
const MGMT = '/edge/management/v1'
const CLIENT = '/edge/client/v1'
const NOT_EDGE_API = 'the health-checks API is not an operation of the edge APIs (no edge spec describes it)'

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3 })
  admin = await c.login(c.nodes[0])
}, 60_000)

afterAll(async () => {
  await c?.stop()
})

const createService = (n: TestNode, name: string) => c.call(n, 'POST', `${MGMT}/services`, { token: admin, body: { name, encryptionRequired: true } })

/** The services named `prefix…` on a node. */
async function servicesNamed(n: TestNode, prefix: string): Promise<Array<{ id: string; name: string }>> {
  return c.listAll(n, `${MGMT}/services?filter=${encodeURIComponent(`name contains "${prefix}"`)}`, admin)
}

/** Polls a node's `cluster` health check until its health is `healthy`; answers the check. */
const clusterCheck = (n: TestNode, healthy: boolean) =>
  pollUntil(`the cluster health check of ${n.name} ${healthy ? 'healthy' : 'failing'}`, async () => {
    const h = await c.call(n, 'GET', '/health-checks', { offSpec: NOT_EDGE_API })
    const check = h.body?.data?.checks?.find((x: { id: string }) => x.id === 'cluster')
    return check?.healthy === healthy ? check : undefined
  }, 10_000, 100)

function expectNoLeader(r: { status: number; body: any; text: string }) {
  expect(`${r.status} ${r.body?.error?.code}`).toBe('503 CLUSTER_NO_LEADER')
  expect(typeof r.body.error.message).toBe('string')
  expect(typeof r.body.error.requestId).toBe('string')
  expect(r.body.meta).toMatchObject({ apiVersion: '0.0.1' })
}

describe('etcd failures under the cluster', () => {
  test('kill -9 of the etcd leader during writes: writes resume, none lost, none doubled', async () => {
    const WRITERS = 20
    const KILL_AFTER = 60
    const AFTER_KILL = 100
    const acked = new Map<string, string>()
    const failed = new Map<string, string>() // name -> the answer (or error) of a write that was not acknowledged
    let killAt = 0
    let killing: Promise<void> | undefined
    let firstAckAfterKill = 0
    let ackedAfterKill = 0
    const leader = await c.etcd.leader()
    const deadline = Date.now() + 30_000
    const writer = async (w: number) => {
      for (let j = 0; Date.now() < deadline && (killAt === 0 || ackedAfterKill < AFTER_KILL); j++) {
        const name = `leader-w${w}-${j}`
        const startedAt = Date.now()
        try {
          const r = await createService(c.nodes[(w + j) % 3], name)
          if (r.status === 201) {
            acked.set(name, r.body.data.id)
            if (killAt > 0 && startedAt >= killAt) {
              ackedAfterKill++
              if (firstAckAfterKill === 0) firstAckAfterKill = Date.now()
            }
          } else failed.set(name, `${r.status} ${r.body?.error?.code}`)
        } catch (e) {
          failed.set(name, String(e))
        }
        if (acked.size >= KILL_AFTER && !killing) {
          killAt = Date.now()
          killing = leader.kill('SIGKILL')
        }
      }
    }
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)))
    await killing
    expect(killAt).toBeGreaterThan(0)
    expect(ackedAfterKill).toBeGreaterThanOrEqual(AFTER_KILL)
    console.log(
      `etcd leader kill: ${leader.name} killed after ${KILL_AFTER} acknowledged writes; the first write sent after the kill was acknowledged ` +
        `${firstAckAfterKill - killAt} ms after it; ${acked.size} acknowledged, ${failed.size} not (${[...new Set(failed.values())].join('; ')})`,
    )
    // none lost, none doubled, the same on every node; a write not acknowledged is there or not, never twice
    await c.waitForRevision()
    const lists = await Promise.all(c.nodes.map((n) => servicesNamed(n, 'leader-w')))
    for (const list of lists) {
      const names = list.map((s) => s.name)
      expect(new Set(names).size).toBe(names.length)
      for (const [name, id] of acked) expect(list.find((s) => s.name === name)?.id).toBe(id)
      for (const name of names) expect(acked.has(name) || failed.has(name)).toBe(true)
      expect(names.sort()).toEqual(lists[0].map((s) => s.name).sort())
    }
    // a write answered 503 CLUSTER_NO_LEADER changed nothing (other failures, if any, are of unknown outcome)
    const refusedButApplied = lists[0].filter((s) => failed.get(s.name) === '503 CLUSTER_NO_LEADER').map((s) => s.name)
    expect(refusedButApplied).toEqual([])
    // the member comes back on its data and the cluster has three again
    await leader.start()
    const digests = await c.settledDigests()
    expect(digests.map((d) => `${d.revision} ${d.digest}`)).toEqual(digests.map(() => `${digests[0].revision} ${digests[0].digest}`))
  }, 60_000)

  test('two of three etcd members down: writes 503 and change nothing, reads go on, then writes work again', async () => {
    const before = await servicesNamed(c.nodes[0], '')
    const leader = await c.etcd.leader()
    const down = c.etcd.members.filter((m) => m !== leader)
    const survivor = leader
    await Promise.all(down.map((m) => m.kill('SIGKILL')))
    // the survivor steps down once it misses its quorum (etcd's check-quorum): no leader left
    await pollUntil('the survivor has no leader', async () => {
      const res = await fetch(`${survivor.clientUrl}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) })
      const json = (await res.json()) as { leader?: string }
      return (json.leader ?? '0') === '0'
    }, 10_000, 100)

    // writes on every node (a create, an update, a new login, which writes a session), at once since each is retried
    // for a few seconds before it is refused: 503 CLUSTER_NO_LEADER in the envelope
    const refusedNames = c.nodes.map((n) => `refused-on-${n.name}`)
    const [patched, login, ...refusals] = await Promise.all([
      c.call(c.nodes[1], 'PATCH', `${MGMT}/services/${before[0].id}`, { token: admin, body: { roleAttributes: ['refused'] } }),
      c.call(c.nodes[2], 'POST', `${CLIENT}/authenticate?method=password`, { body: { username: 'admin', password: 'admin-pass-1' } }),
      ...c.nodes.map((n, i) => createService(n, refusedNames[i])),
    ])
    for (const r of refusals) expectNoLeader(r)
    expectNoLeader(patched)
    expectNoLeader(login)
    // reads by an existing session: from local state
    for (const n of c.nodes) {
      expect((await c.call(n, 'GET', `${CLIENT}/current-identity`, { token: admin })).status).toBe(200)
      const list = await servicesNamed(n, '')
      expect(list.map((s) => s.id).sort()).toEqual(before.map((s) => s.id).sort())
      expect((await c.call(n, 'GET', `${MGMT}/services/${before[0].id}`, { token: admin })).body.data.roleAttributes ?? []).not.toContain('refused')
    }

    // the health checks say so
    for (const n of c.nodes) expect((await clusterCheck(n, false)).details).toContain('etcd unreachable')

    // quorum returns: writes work again, and what was refused is not there
    await Promise.all(down.map((m) => m.start()))
    for (const n of c.nodes) expect((await clusterCheck(n, true)).details).toContain('etcd reachable')
    for (const n of c.nodes) {
      const r = await pollUntil(`a write on ${n.name} after quorum returned`, async () => {
        const res = await createService(n, `after-quorum-${n.name}`)
        if (res.status === 503) return undefined
        return res
      }, 15_000, 200)
      expect(r.status).toBe(201)
    }
    expect(await c.login(c.nodes[2])).toBeTruthy()
    await c.waitForRevision()
    for (const n of c.nodes) {
      const names = (await servicesNamed(n, '')).map((s) => s.name)
      for (const refused of refusedNames) expect(names).not.toContain(refused)
      for (const m of c.nodes) expect(names).toContain(`after-quorum-${m.name}`)
      expect((await c.call(n, 'GET', `${MGMT}/services/${before[0].id}`, { token: admin })).body.data.roleAttributes ?? []).not.toContain('refused')
    }
    const digests = await c.settledDigests()
    expect(digests.map((d) => `${d.revision} ${d.digest}`)).toEqual(digests.map(() => `${digests[0].revision} ${digests[0].digest}`))
  }, 90_000)

  test('writes in flight when the quorum goes: 201, 503 CLUSTER_NO_LEADER (never applied) or 503 TIMEOUT (outcome unknown)', async () => {
    const leader = await c.etcd.leader()
    const down = c.etcd.members.filter((m) => m !== leader)
    const names = Array.from({ length: 12 }, (_, i) => `in-flight-${i}`)
    const answers = Promise.all(names.map((name, i) => createService(c.nodes[i % c.nodes.length], name)))
    await Promise.all(down.map((m) => m.kill('SIGKILL')))
    const settled = await answers
    const outcome = new Map(names.map((name, i) => [name, `${settled[i].status} ${settled[i].body?.error?.code ?? ''}`.trim()]))
    console.log(`in-flight writes when the quorum went: ${[...outcome.values()].join(', ')}`)
    for (const o of outcome.values()) expect(['201', '503 CLUSTER_NO_LEADER', '503 TIMEOUT']).toContain(o)
    await Promise.all(down.map((m) => m.start()))
    for (const n of c.nodes) await clusterCheck(n, true)
    // a write after recovery on every node, then every node has applied the same log
    for (const n of c.nodes) {
      await pollUntil(`a write on ${n.name} after quorum returned`, async () => ((await createService(n, `after-in-flight-${n.name}`)).status === 201 ? true : undefined), 15_000, 200)
    }
    await c.waitForRevision()
    for (const n of c.nodes) {
      const present = new Set((await servicesNamed(n, 'in-flight-')).map((s) => s.name))
      for (const [name, o] of outcome) {
        if (o === '201') expect(present.has(name)).toBe(true)
        if (o === '503 CLUSTER_NO_LEADER') expect(present.has(name)).toBe(false)
      }
    }
  }, 90_000)
})
