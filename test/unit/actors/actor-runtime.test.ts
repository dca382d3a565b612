// The actor runtime contract (src/actors/README.md): FIFO, decide-then-apply, replies after a durable commit, bursts
// batched, failed decisions write nothing, reads never queue.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../../src/errors/api-error.ts'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { Actor, type ActorBehavior } from '../../../src/actors/runtime/actor-runtime.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'

type Msg = { type: 'put'; key: string; value: string } | { type: 'fail'; key: string } | { type: 'slow'; key: string }
type Replies = { put: number; fail: void; slow: void }
type State = { order: string[]; values: Map<string, string> }

const behavior: ActorBehavior<State, Msg, Replies, { type: 'put.done'; key: string }> = {
  owner: 'identity',
  handle(state, msg, tx) {
    switch (msg.type) {
      case 'put':
        state.order.push(msg.key)
        state.values.set(msg.key, msg.value)
        tx.put('enrollments', msg.key, { value: msg.value })
        tx.emit({ type: 'put.done', key: msg.key })
        return state.order.length
      case 'fail':
        throw ApiError.invalidField('key', 'refused', msg.key)
      case 'slow':
        return (async () => {
          await Bun.sleep(5)
          state.order.push(msg.key)
        })()
    }
  },
}

let dir: string
let store: Store
let bus: EventBus
let actor: Actor<State, Msg, Replies, { type: 'put.done'; key: string }>

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-actor-'))
  store = await openStore(dir)
  bus = new EventBus()
  actor = new Actor('test', { order: [], values: new Map() }, behavior, {
    store,
    bus,
    clock: new FakeClock(0),
    failStop: (e) => {
      throw e
    },
    cloneMessages: true,
  })
})
afterEach(async () => {
  await actor.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('Actor', () => {
  it('processes messages in arrival order, one at a time, even when a handler awaits', async () => {
    const replies = await Promise.all([
      actor.ask({ type: 'slow', key: 'a' }),
      actor.ask({ type: 'put', key: 'b', value: '1' }),
      actor.ask({ type: 'slow', key: 'c' }),
      actor.ask({ type: 'put', key: 'd', value: '2' }),
    ])
    expect(actor.snapshot().order).toEqual(['a', 'b', 'c', 'd'])
    expect(replies[1]).toBe(2)
  })

  it('replies only after the write is in LMDB', async () => {
    await actor.ask({ type: 'put', key: 'k1', value: 'v1' })
    expect(store.db('enrollments').get('k1')).toEqual({ value: 'v1' })
  })

  it('rejects a refused message with its ApiError and writes nothing', async () => {
    await expect(actor.ask({ type: 'fail', key: 'nope' })).rejects.toMatchObject({ code: 'COULD_NOT_VALIDATE' })
    expect(store.db('enrollments').get('nope')).toBeUndefined()
    // and the mailbox keeps going
    await actor.ask({ type: 'put', key: 'after', value: 'x' })
    expect(store.db('enrollments').get('after')).toEqual({ value: 'x' })
  })

  it('delivers events synchronously before the reply resolves', async () => {
    const seen: string[] = []
    bus.subscribe<{ type: 'put.done'; key: string }>('put.done', (e) => seen.push(e.key))
    await actor.ask({ type: 'put', key: 'e1', value: 'x' })
    expect(seen).toEqual(['e1'])
  })

  it('commits a burst of writes durably, every one of them', async () => {
    const n = 2000
    await Promise.all(Array.from({ length: n }, (_, i) => actor.ask({ type: 'put', key: `burst-${i}`, value: String(i) })))
    let count = 0
    for (const _ of store.db('enrollments').getRange({ start: 'burst-', end: 'burst.' })) count++
    expect(count).toBe(n)
  })

  it('lets reads see applied state without queueing', async () => {
    const p = actor.ask({ type: 'put', key: 'r1', value: 'x' })
    // apply is synchronous: the snapshot already shows it before the commit resolves
    expect(actor.snapshot().values.get('r1')).toBe('x')
    await p
  })

  it('refuses writes to a sub-db the actor does not own', async () => {
    const rogue = new Actor<State, Msg, Replies>('rogue', { order: [], values: new Map() }, {
      owner: 'identity',
      handle(_s, _m, tx) {
        tx.put('api-sessions', 'x', {})
        return 0
      },
    }, { store, bus, clock: new FakeClock(0), failStop: () => {} })
    await expect(rogue.ask({ type: 'put', key: 'x', value: 'y' })).rejects.toBeInstanceOf(TypeError)
  })
})

describe('what health checks and metrics read (issue 12, part G)', () => {
  it('case=mailbox depth counts the message being handled; the oldest wait grows while it runs; the observer hears handler and commit times', async () => {
    const heard: string[] = []
    const observed = new Actor('observed', { order: [], values: new Map() }, behavior, {
      store,
      bus,
      clock: new FakeClock(0),
      failStop: (e) => {
        throw e
      },
      observer: { handled: (name, ms) => heard.push(`handled ${name} ${ms >= 0}`), committed: (ms) => heard.push(`committed ${ms >= 0}`) },
    })
    expect([observed.mailboxDepth(), observed.oldestWaitMs()]).toEqual([0, 0])
    const slow = observed.ask({ type: 'slow', key: 's' })
    const put = observed.ask({ type: 'put', key: 'p', value: 'v' })
    expect(observed.mailboxDepth()).toBe(2)
    await Bun.sleep(2)
    expect(observed.oldestWaitMs()).toBeGreaterThan(0)
    await Promise.all([slow, put])
    expect(observed.mailboxDepth()).toBe(0)
    expect(heard).toEqual(['handled observed true', 'handled observed true', 'committed true'])
    await observed.stop()
  })
})
