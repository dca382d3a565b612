// A policy-graph actor on a temporary LMDB store, with a fake identity directory and a log of every event.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'bun:test'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startPolicyGraphActor, type PolicyGraphActor } from '../../../src/actors/policy-graph/policy-graph-actor.ts'
import type { PolicyGraphEvent, PolicyGraphMsg } from '../../../src/actors/policy-graph/policy-graph-messages.ts'

export const change: ChangeContext = { author: 'test', source: 'rest' }

const EVENT_TYPES: PolicyGraphEvent['type'][] = [
  'graph.service.put',
  'graph.service.deleted',
  'graph.router.put',
  'graph.router.deleted',
  'graph.policy.put',
  'graph.policy.deleted',
  'graph.services.touched',
  'graph.overrides.changed',
  'graph.terminator.created',
]

/** Distributes Omit over a union, so each message keeps its own fields. */
type NoChange<M> = M extends unknown ? Omit<M, 'change'> : never

export interface GraphHarness {
  actor: PolicyGraphActor
  store: Store
  clock: FakeClock
  /** Identity id → name: what identityExists/identityNameTaken see. */
  identities: Map<string, string>
  events: PolicyGraphEvent[]
  /** Sends a message with a test change context. */
  ask<M extends NoChange<PolicyGraphMsg>>(msg: M): Promise<unknown>
  /** Events of one type seen since the last `clearEvents()`. */
  eventsOf<T extends PolicyGraphEvent['type']>(type: T): Extract<PolicyGraphEvent, { type: T }>[]
  clearEvents(): void
  /** Stops the actor, closes and reopens the store, starts a new actor on it. */
  restart(): Promise<void>
  close(): Promise<void>
}

export async function openGraph(): Promise<GraphHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeplane-graph-'))
  const clock = new FakeClock(1_700_000_000_000)
  const identities = new Map<string, string>()
  const events: PolicyGraphEvent[] = []
  const lookups = {
    identityExists: (id: string) => identities.has(id),
    identityNameTaken: (name: string, exceptId?: string) => [...identities].some(([id, n]) => n === name && id !== exceptId),
  }
  const start = async () => {
    const store = await openStore(dir)
    const bus = new EventBus()
    for (const t of EVENT_TYPES) bus.subscribe<PolicyGraphEvent>(t, (e) => events.push(e))
    const actor = await startPolicyGraphActor(
      store,
      { store, bus, clock, cloneMessages: true, failStop: (e) => { throw e } },
      lookups,
    )
    return { store, actor }
  }
  let { store, actor } = await start()
  const h: GraphHarness = {
    get actor() {
      return actor
    },
    get store() {
      return store
    },
    clock,
    identities,
    events,
    ask: (msg) => actor.ask({ ...msg, change } as PolicyGraphMsg),
    eventsOf: <T extends PolicyGraphEvent['type']>(type: T) =>
      events.filter((e): e is Extract<PolicyGraphEvent, { type: T }> => e.type === type),
    clearEvents: () => void events.splice(0),
    async restart() {
      await actor.stop()
      await store.close()
      ;({ store, actor } = await start())
    },
    async close() {
      await actor.stop()
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return h
}

/** Asserts a COULD_NOT_VALIDATE rejection with this field cause (and reason/value when given). */
export async function expectInvalid(p: Promise<unknown>, field: string, reason?: string | RegExp, value?: unknown): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toMatchObject({ code: 'COULD_NOT_VALIDATE', apiCause: { kind: 'field', field } })
  const cause = (err as { apiCause: { reason: string; value: unknown } }).apiCause
  if (typeof reason === 'string') expect(cause.reason).toBe(reason)
  else if (reason) expect(cause.reason).toMatch(reason)
  if (value !== undefined) expect(cause.value).toEqual(value)
}

export async function expectCode(p: Promise<unknown>, code: string, message?: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toMatchObject({ code })
  if (message !== undefined) expect(err).toMatchObject({ apiCause: { kind: 'api', message } })
}

/** Creates a service (and returns its id). */
export async function mkService(h: GraphHarness, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  return ((await h.ask({ type: 'service.create', input: { name, ...extra } })) as { id: string }).id
}
export async function mkRouter(h: GraphHarness, name: string, extra: Record<string, unknown> = {}, isEdge = true): Promise<string> {
  return ((await h.ask({ type: 'router.create', input: { name, ...extra }, isEdge })) as { id: string }).id
}
export async function mkConfigType(h: GraphHarness, name: string, schema?: Record<string, unknown>): Promise<string> {
  return ((await h.ask({ type: 'configType.create', input: { name, ...(schema ? { schema } : {}) } })) as { id: string }).id
}
export async function mkConfig(h: GraphHarness, name: string, configTypeId: string, data: Record<string, unknown> = {}): Promise<string> {
  return ((await h.ask({ type: 'config.create', input: { name, configTypeId, data } })) as { id: string }).id
}
