// kill -9 of an edgeplane node (a child process) while 50 writers create services on all three nodes: every write
// that was acknowledged is on every surviving node at once, and on the killed node after it restarts; no name is
// there twice; a write whose answer was lost with the node is there or not, never half; and all nodes end with the
// same state: their digests at the same revision are equal.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestCluster, type TestCluster, type TestNode } from '../support/cluster.ts'

let c: TestCluster
let admin: string
const MGMT = '/edge/management/v1'
const WRITERS = 50
const WRITES_EACH = 6
const KILL_AFTER_ACKED = 90

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3, kind: ['in-process', 'in-process', 'child'] })
  admin = await c.login(c.nodes[0])
}, 90_000)

afterAll(async () => {
  await c?.stop()
})

describe('kill -9 of a node during 50 concurrent writers', () => {
  test('every acknowledged write is on every node, none twice, and the states are equal', async () => {
    const [a, b, victim] = c.nodes
    const acked = new Map<string, string>() // name -> id
    const unknown = new Set<string>() // the answer was lost (the node died with the request)
    const refused: string[] = []
    let killedAt = 0
    let killing: Promise<void> | undefined
    const writer = async (w: number) => {
      let target = w % 3
      for (let j = 0; j < WRITES_EACH; j++) {
        const node = c.nodes[target]
        const name = `crash-w${w}-${j}`
        try {
          const r = await c.call(node, 'POST', `${MGMT}/services`, { token: admin, body: { name, encryptionRequired: true } })
          if (r.status === 201) acked.set(name, r.body.data.id)
          else refused.push(`${node.name} ${name}: ${r.status} ${r.text}`)
        } catch {
          // the connection died with the node: the write may or may not have reached the log
          unknown.add(name)
          target = (target + 1) % 2 // the survivors are node-1 and node-2
        }
        if (acked.size >= KILL_AFTER_ACKED && !killing) {
          killedAt = acked.size
          killing = c.killNode(victim)
        }
        if (!victim.running() || killing) target = target % 2
      }
    }
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)))
    await killing
    expect(killedAt).toBeGreaterThan(0)
    expect(victim.running()).toBe(false)
    expect(refused).toEqual([])
    expect(acked.size + unknown.size).toBe(WRITERS * WRITES_EACH)
    expect(acked.size).toBeGreaterThan(WRITERS * WRITES_EACH - WRITERS)

    const check = async (n: TestNode) => {
      const list = await c.listAll(n, `${MGMT}/services?filter=${encodeURIComponent('name contains "crash-"')}`, admin)
      const names = list.map((s) => s.name as string)
      expect(new Set(names).size).toBe(names.length)
      for (const [name, id] of acked) expect(list.find((s) => s.name === name)?.id).toBe(id)
      // nothing but what was written: acknowledged, or lost with the node
      for (const name of names) expect(acked.has(name) || unknown.has(name)).toBe(true)
      return names.sort()
    }
    // the survivors: at once on the node that wrote, within the apply lag on the other
    await c.waitForRevision(undefined, [a, b])
    const onA = await check(a)
    const lostButThere = [...unknown].filter((n) => onA.includes(n)).length
    console.log(`node crash: killed after ${killedAt} acknowledged writes; ${acked.size} acknowledged, ${unknown.size} answers lost with the node (${lostButThere} of them applied)`)
    expect(await check(b)).toEqual(onA)

    await c.restartNode(victim)
    // it caught up before it answered
    expect(await check(victim)).toEqual(onA)

    const digests = await c.settledDigests([a, b, victim])
    expect(digests.map((d) => `${d.revision} ${d.digest}`)).toEqual(digests.map(() => `${digests[0].revision} ${digests[0].digest}`))
    expect(digests[0].records).toBeGreaterThan(acked.size)
  }, 60_000)
})
