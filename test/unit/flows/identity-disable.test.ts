// The failure story of disabling an identity (src/flows/identity/identity-disable.ts): the disable commits before the
// API sessions are ended, so a crash in between leaves sessions of a disabled identity; the next start ends them.
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
import { disableIdentity, endSessionsOfDisabledIdentities } from '../../../src/flows/identity/identity-disable.ts'

const change: ChangeContext = { author: 'test', source: 'rest' }

let dir: string
let store: Store
let clock: FakeClock
let identities: IdentityActor
let sessions: SessionRegistryActor
let stopTimers: () => void

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-disable-'))
  clock = new FakeClock(1_700_000_000_000)
  store = await openStore(dir, { now: clock.now() })
  const deps: ActorSystemDeps = { store, bus: new EventBus(), clock, cloneMessages: true, failStop: (e) => { throw e } }
  identities = startIdentityActor(store, deps)
  ;({ actor: sessions, stopTimers } = startSessionRegistryActor(store, deps, { timeoutMs: 60_000, sweepEveryMs: 3_600_000, flushEveryMs: 3_600_000 }))
})
afterEach(async () => {
  stopTimers()
  await Promise.all([identities.stop(), sessions.stop()])
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

async function identityWithSession(name: string): Promise<string> {
  const { id } = await identities.ask({ type: 'identity.create', input: { name }, change })
  await sessions.ask({
    type: 'apiSession.create',
    session: {
      tokenHash: `hash-${name}`, identityId: id, authenticatorId: 'a1', configTypes: [], ipAddress: '127.0.0.1',
      isMfaRequired: false, isMfaComplete: false, isCertExtendable: false, tags: {},
    },
    change,
  })
  return id
}

const sessionCount = (identityId: string) => [...sessions.snapshot().byTokenHash.values()].filter((s) => s.identityId === identityId).length

describe('disabling an identity', () => {
  it('ends its API sessions and keeps the others', async () => {
    const gone = await identityWithSession('gone')
    const kept = await identityWithSession('kept')
    await disableIdentity({ identities, sessions }, gone, 0, change)
    expect(sessionCount(gone)).toBe(0)
    expect(sessionCount(kept)).toBe(1)
  })

  it('after a crash between the two steps, the start-up pass ends the sessions of disabled identities only', async () => {
    const interrupted = await identityWithSession('interrupted')
    const expired = await identityWithSession('expired-window')
    const active = await identityWithSession('active')
    await identities.ask({ type: 'identity.disable', id: interrupted, durationMinutes: 0, change })
    await identities.ask({ type: 'identity.disable', id: expired, durationMinutes: 1, change })
    clock.advance(60_000)
    expect(sessionCount(interrupted)).toBe(1)
    expect(await endSessionsOfDisabledIdentities({ identities, sessions }, clock.now())).toBe(1)
    expect(sessionCount(interrupted)).toBe(0)
    expect(sessionCount(expired)).toBe(1)
    expect(sessionCount(active)).toBe(1)
  })
})
