// The log seam of the actor runtime: two "nodes" (each a policy-graph actor on its own LMDB store) share one ordered
// log held in memory here (the etcd log is tested over HTTPS in test/api/cluster-*.api.test.ts). What the runtime
// promises a replicated log: every node applies every command in log order with the proposer's clock reading and the
// same ids, stores the revision with the change, and the proposer answers the outcome of its own apply.
import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { APPLIED_KEY, type ActorSystemDeps, type LoggedCommand, type ReplicatedLog } from '../../../src/actors/runtime/actor-runtime.ts'
import { startPolicyGraphActor, type PolicyGraphActor } from '../../../src/actors/policy-graph/policy-graph-actor.ts'
import type { PolicyGraphMsg } from '../../../src/actors/policy-graph/policy-graph-messages.ts'
import { startSessionRegistryActor, SHARE_ACTIVITY_EVERY_MS, type SessionRegistryActor } from '../../../src/actors/session-registry/session-registry-actor.ts'

const change = { author: 'test', source: 'rest' as const }

interface Node {
  name: string
  store: Store
  graph: PolicyGraphActor
  sessions: SessionRegistryActor
  clock: FakeClock
  appended: string[]
  stop(): Promise<void>
}

/** An ordered log every node applies, in order, one command at a time (what the etcd watch gives each node). */
class SharedLog {
  private readonly entries: Array<{ actor: string; msg: { type: string }; now: number; key: string }> = []
  private readonly nodes: Node[] = []
  private readonly cursor = new Map<Node, number>()
  private readonly waiting = new Map<string, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>()
  private seq = 0
  join(n: Node): void {
    this.nodes.push(n)
    this.cursor.set(n, 0)
  }
  /** The log as one node sees it: appends are held until `deliver`. */
  forNode(n: Node): ReplicatedLog {
    return {
      append: (actor, msg) => {
        n.appended.push(msg.type)
        const key = `log/${n.name}/${++this.seq}`
        this.entries.push({ actor, msg: structuredClone(msg), now: n.clock.now(), key })
        return new Promise((resolve, reject) => this.waiting.set(key, { resolve, reject }))
      },
    }
  }
  /**
   * Applies every appended entry on every node, in log order; the proposer's promise gets its own node's outcome.
   * Resolves once every node's writes are committed (an apply's outcome settles after its commit).
   */
  async deliver(): Promise<void> {
    const settled: Promise<unknown>[] = []
    for (const n of this.nodes) {
      for (let i = this.cursor.get(n)!; i < this.entries.length; i++) {
        const e = this.entries[i]
        const target = e.actor === 'policy-graph' ? n.graph : n.sessions
        const cmd: LoggedCommand<never> = { msg: e.msg as never, now: e.now, seed: e.key, revision: i + 1, logTimes: { [e.key.split('/')[1]]: e.now } }
        const { handled, outcome } = target.applyLogged(cmd)
        const w = e.key.startsWith(`log/${n.name}/`) ? this.waiting.get(e.key) : undefined
        if (w) outcome.then(w.resolve, w.reject)
        settled.push(outcome.catch(() => undefined))
        await handled
        this.cursor.set(n, i + 1)
      }
    }
    await Promise.all(settled)
  }
}

const dirs: string[] = []
const open: Node[] = []

async function node(name: string, log: SharedLog, clockMs: number): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), `edgeplane-replicated-${name}-`))
  dirs.push(dir)
  const store = await openStore(dir)
  const clock = new FakeClock(clockMs)
  const n = { name, store, clock, appended: [] as string[] } as unknown as Node
  const deps: ActorSystemDeps = { store, bus: new EventBus(), clock, cloneMessages: true, failStop: (e) => { throw e } }
  deps.log = log.forNode(n)
  n.graph = await startPolicyGraphActor(store, deps, { identityExists: () => true, identityNameTaken: () => false })
  const reg = startSessionRegistryActor(store, deps, { timeoutMs: 30 * 60_000, sweepEveryMs: 3_600_000, flushEveryMs: 3_600_000, clustered: true })
  n.sessions = reg.actor
  n.stop = async () => {
    reg.stopTimers()
    await Promise.all([n.graph.stop(), n.sessions.stop()])
    await store.close()
  }
  log.join(n)
  open.push(n)
  return n
}

afterEach(async () => {
  for (const n of open.splice(0)) await n.stop()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const createService = (n: Node, name: string) => n.graph.ask({ type: 'service.create', input: { name }, change } as PolicyGraphMsg)

describe('applying a replicated log', () => {
  it('gives every node the same record (id and clock reading of the proposer) and stores the revision with it', async () => {
    const log = new SharedLog()
    const a = await node('a', log, 1_700_000_000_000)
    const b = await node('b', log, 1_800_000_000_000)
    const created = createService(a, 'web')
    await log.deliver()
    const { id } = (await created) as { id: string }
    const onA = a.graph.snapshot().services.get(id)
    const onB = b.graph.snapshot().services.get(id)
    expect(onB).toEqual(onA!)
    expect(onA!.createdAt).toBe(1_700_000_000_000)
    // every node stored the same record, and the revision it applied, in the commit of the change
    expect(b.store.db('services').get(id)).toEqual(a.store.db('services').get(id))
    expect(a.store.db('meta').get(APPLIED_KEY)).toEqual({ revision: 1, logTimes: { a: 1_700_000_000_000 } })
    expect(b.store.db('meta').get(APPLIED_KEY)).toEqual({ revision: 1, logTimes: { a: 1_700_000_000_000 } })
    expect(a.appended).toEqual(['service.create'])
    expect(b.appended).toEqual([])
  })

  it('has one winner when two nodes create the same name: the loser gets the same refusal its node applied', async () => {
    const log = new SharedLog()
    const a = await node('a', log, 1_700_000_000_000)
    const b = await node('b', log, 1_700_000_000_000)
    const fromA = createService(a, 'same').then((r) => ({ ok: r }), (e) => ({ err: e as { code: string } }))
    const fromB = createService(b, 'same').then((r) => ({ ok: r }), (e) => ({ err: e as { code: string } }))
    await log.deliver()
    const [ra, rb] = await Promise.all([fromA, fromB])
    expect('ok' in ra).toBe(true)
    expect('err' in rb && rb.err.code).toBe('COULD_NOT_VALIDATE')
    for (const n of [a, b]) expect([...n.graph.snapshot().services.values()].map((s) => s.name)).toEqual(['same'])
  })

  it('keeps node-local messages off the log: an activity mark stays on its node until a coalesced touch shares it', async () => {
    const log = new SharedLog()
    const a = await node('a', log, 1_700_000_000_000)
    const b = await node('b', log, 1_700_000_000_000)
    const session = { token: undefined, tokenHash: 'h1', identityId: 'i1', authenticatorId: 'x', configTypes: [], isMfaRequired: false, isMfaComplete: false, isCertExtendRequested: false, isCertKeyRollRequested: false, ipAddress: '127.0.0.1' }
    const created = a.sessions.ask({ type: 'apiSession.create', session: session as never, change })
    await log.deliver()
    const { id } = await created
    expect(b.sessions.snapshot().byId.get(id)).toEqual(a.sessions.snapshot().byId.get(id)!)
    const later = 1_700_000_000_000 + SHARE_ACTIVITY_EVERY_MS + 1
    await a.sessions.ask({ type: 'apiSession.touch', tokenHash: 'h1', at: later })
    expect(a.appended).toEqual(['apiSession.create'])
    const s = a.sessions.snapshot()
    expect(s.activityOf(s.byId.get(id)!)).toBe(later)
    // the record itself did not move on either node
    expect(s.byId.get(id)!.lastActivityAt).toBe(1_700_000_000_000)
    const flush = await a.sessions.ask({ type: 'apiSession.flushActivity' })
    expect(flush.share).toEqual([['h1', later]])
    const shared = a.sessions.ask({ type: 'apiSession.touchMany', marks: flush.share })
    await log.deliver()
    await shared
    for (const n of [a, b]) expect(n.sessions.snapshot().byId.get(id)!.lastActivityAt).toBe(later)
  })
})
