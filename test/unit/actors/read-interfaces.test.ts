// What actors hand to everyone else (src/actors/README.md): a snapshot typed as the aggregate's read interface, with
// deeply read-only records that are replaced on every change and never mutated; and every actor refuses a message
// it has no case for (the assertNever at the end of its switch) instead of answering nothing.
// The type-level half of these checks runs in `bun run typecheck` (the @ts-expect-error lines below).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps, ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startIdentityActor, type IdentityActor } from '../../../src/actors/identity/identity-actor.ts'
import { startSessionRegistryActor, type SessionRegistryActor } from '../../../src/actors/session-registry/session-registry-actor.ts'
import { startPolicyGraphActor, type PolicyGraphActor } from '../../../src/actors/policy-graph/policy-graph-actor.ts'
import type { CaActor } from '../../../src/actors/ca/ca-actor.ts'
import type { IdentityReads } from '../../../src/domain/identity/identity-reads.ts'
import type { SessionReads } from '../../../src/domain/session/session-reads.ts'
import type { PolicyGraphReads } from '../../../src/domain/policy/graph-reads.ts'

const change: ChangeContext = { author: 'test', source: 'rest' }

let dir: string
let store: Store
let clock: FakeClock
let identities: IdentityActor
let sessions: SessionRegistryActor
let stopTimers: () => void
let graph: PolicyGraphActor

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-reads-'))
  store = await openStore(dir)
  clock = new FakeClock(1_700_000_000_000)
  const deps: ActorSystemDeps = { store, bus: new EventBus(), clock, cloneMessages: true, failStop: (e) => { throw e } }
  identities = startIdentityActor(store, deps)
  ;({ actor: sessions, stopTimers } = startSessionRegistryActor(store, deps, { timeoutMs: 60_000, sweepEveryMs: 3_600_000, flushEveryMs: 3_600_000 }))
  graph = await startPolicyGraphActor(store, deps, { identityExists: () => false, identityNameTaken: () => false })
})
afterEach(async () => {
  stopTimers()
  await Promise.all([identities.stop(), sessions.stop(), graph.stop()])
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Never called: each line must fail to compile, which `bun run typecheck` checks. */
export function mutationsTheTypesRefuse(identities: IdentityActor, sessions: SessionRegistryActor, graph: PolicyGraphActor, ca: CaActor): void {
  const ids = identities.snapshot()
  const ss = sessions.snapshot()
  const g = graph.snapshot()
  // @ts-expect-error the snapshot offers no mutator of the state class
  ids.putIdentity(ids.identity('x')!)
  // @ts-expect-error maps are read-only views
  ids.identities.delete('x')
  // @ts-expect-error records are read-only
  ids.identity('x')!.name = 'changed'
  // @ts-expect-error ...all the way down
  ids.identity('x')!.roleAttributes!.push('a')
  // @ts-expect-error ...maps inside records too
  ids.identity('x')!.tags!.k = 1
  // @ts-expect-error the session snapshot has no activity set to mark
  ss.dirty.clear()
  // @ts-expect-error an activity mark replaces the record, it does not change it
  ss.byId.get('x')!.lastActivityAt = 0
  // @ts-expect-error the graph snapshot offers no mutator of the state class
  g.putService(g.services.get('x')!)
  // @ts-expect-error nor of its tables
  g.services.put(g.services.get('x')!)
  // @ts-expect-error service records (keys of the client list's rendering cache) are read-only
  g.services.get('x')!.configs.push('c')
  // @ts-expect-error config data is read-only
  g.configs.get('x')!.data = {}
  const cas = ca.snapshot()
  // @ts-expect-error the CA snapshot offers no mutator of the state class
  cas.putCa(cas.cas.get('x')!)
  // @ts-expect-error the trust list is read-only
  cas.verifiedCas().push(cas.cas.get('x')!)
  // @ts-expect-error the trust version moves with the actor's writes only
  cas.trustVersion = 0
  // @ts-expect-error third-party CA records are read-only, down to their claim
  cas.cas.get('x')!.externalIdClaim!.index = 1
}

describe('snapshots', () => {
  it('hand out the state through the read interfaces', () => {
    const ids: IdentityReads = identities.snapshot()
    const ss: SessionReads = sessions.snapshot()
    const g: PolicyGraphReads = graph.snapshot()
    expect(ids.identities.size).toBe(0)
    expect(ss.byId.size).toBe(0)
    expect(g.configTypes.size).toBeGreaterThan(0)
  })

  it('replace an identity on update and leave the record handed out before as it was', async () => {
    const { id } = await identities.ask({ type: 'identity.create', input: { name: 'alice', roleAttributes: ['a'] }, change })
    const before = identities.snapshot().identity(id)!
    clock.advance(1000)
    await identities.ask({ type: 'identity.update', id, input: { name: 'bob', roleAttributes: ['b'] }, replace: false, change })
    const after = identities.snapshot().identity(id)!
    expect(after).not.toBe(before)
    expect([before.name, before.roleAttributes]).toEqual(['alice', ['a']])
    expect([after.name, after.roleAttributes]).toEqual(['bob', ['b']])
  })

  it('replace an API session on an activity mark and persist the new mark on flush', async () => {
    const { session } = await sessions.ask({
      type: 'apiSession.create',
      session: {
        tokenHash: 'h1', identityId: 'i1', authenticatorId: 'a1', configTypes: [], ipAddress: '127.0.0.1',
        isMfaRequired: false, isMfaComplete: false, mfaCompletedAt: null, isCertExtendable: false, tags: {},
      },
      change,
    })
    const before = sessions.snapshot().byTokenHash.get('h1')!
    const at = session.lastActivityAt + 5000
    await sessions.ask({ type: 'apiSession.touch', tokenHash: 'h1', at })
    const after = sessions.snapshot().byTokenHash.get('h1')!
    expect(after).not.toBe(before)
    expect(before.lastActivityAt).toBe(session.lastActivityAt)
    expect(after.lastActivityAt).toBe(at)
    expect(sessions.snapshot().byId.get(session.id)).toBe(after)
    expect(sessions.snapshot().sessionsOf('i1')).toEqual([after])
    await sessions.ask({ type: 'apiSession.flushActivity' })
    expect((store.db('api-sessions').get('h1') as { lastActivityAt: number }).lastActivityAt).toBe(at)
  })

  it('leave an API session alone on an activity mark older than its last one', async () => {
    await sessions.ask({
      type: 'apiSession.create',
      session: {
        tokenHash: 'h2', identityId: 'i1', authenticatorId: 'a1', configTypes: [], ipAddress: '127.0.0.1',
        isMfaRequired: false, isMfaComplete: false, mfaCompletedAt: null, isCertExtendable: false, tags: {},
      },
      change,
    })
    const before = sessions.snapshot().byTokenHash.get('h2')!
    await sessions.ask({ type: 'apiSession.touch', tokenHash: 'h2', at: before.lastActivityAt - 1 })
    expect(sessions.snapshot().byTokenHash.get('h2')).toBe(before)
  })
})

describe('message handling', () => {
  // a message without a case is a type error; one that arrives anyway (an old serialised command) is refused
  it.each([
    ['identity', () => identities.ask({ type: 'identity.unknown', change } as never), 'unexpected identity message'],
    ['session registry', () => sessions.ask({ type: 'apiSession.unknown' } as never), 'unexpected session registry message'],
    ['policy graph', () => graph.ask({ type: 'graph.unknown', change } as never), 'unexpected policy graph message'],
  ])('the %s actor refuses a message it has no case for', async (_name, send, message) => {
    const err = await send().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(TypeError)
    expect((err as Error).message).toStartWith(message)
  })
})
