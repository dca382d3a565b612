// The actors a flow talks to (identity, session registry, policy graph) on a temporary LMDB store, wired to each
// other as server.ts wires them, with a restart that reopens the same store.
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

export const change: ChangeContext = { author: 'test', source: 'rest', requestId: 'req-1' }

export interface Core {
  identities: IdentityActor
  sessions: SessionRegistryActor
  graph: PolicyGraphActor
  clock: FakeClock
  /** Stops the actors, closes and reopens the store, starts new actors on it (a restart after a crash: nothing else runs). */
  restart(): Promise<void>
  close(): Promise<void>
}

export async function openCore(): Promise<Core> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeplane-flows-'))
  const clock = new FakeClock(1_700_000_000_000)
  let store: Store
  let stopTimers = () => {}
  const core = { clock } as Core
  const start = async () => {
    store = await openStore(dir)
    const deps: ActorSystemDeps = {
      store,
      clock,
      bus: new EventBus(),
      cloneMessages: true,
      failStop: (e) => {
        throw e
      },
    }
    const routerNamed = (name: string) => {
      const r = graph.snapshot().routers.byName(name)
      return r?.isEdge && r.isTunnelerEnabled ? r.id : undefined
    }
    const identities = startIdentityActor(store, deps, routerNamed)
    const registry = startSessionRegistryActor(store, deps, { timeoutMs: 60_000, sweepEveryMs: 3_600_000, flushEveryMs: 3_600_000 })
    stopTimers = registry.stopTimers
    const graph = await startPolicyGraphActor(store, deps, {
      identityExists: (id) => identities.snapshot().identity(id) !== undefined,
      identityNameTaken: (name, exceptId) => {
        const id = identities.snapshot().identityIdByName(name)
        return id !== undefined && id !== exceptId
      },
    })
    Object.assign(core, { identities, sessions: registry.actor, graph })
  }
  const stop = async () => {
    stopTimers()
    await Promise.all([core.identities.stop(), core.sessions.stop(), core.graph.stop()])
    await store.close()
  }
  await start()
  core.restart = async () => {
    await stop()
    await start()
  }
  core.close = async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  }
  return core
}
