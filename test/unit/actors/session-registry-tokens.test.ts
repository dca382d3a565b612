// The tokens the session registry keeps for the edge routers (issue 30): given with apiSession.create, kept beside
// the record (never in it), written sealed on every put of the record (domain/session/session-stored.ts), read back
// after a restart, dropped with the session (the deleted event carries it, for the routers' ApiSessionRemoved);
// records stored before tokens were kept read without one. Also the events the control plane pushes from: MFA
// completed, certificates created and deleted, service sessions deleted (their own and with their API session), and
// the node-local batch of activity marks a router heartbeat makes.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { readSealKey, sealKeyPathOf } from '../../../src/store/store-seal.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps, ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startSessionRegistryActor, type SessionRegistryActor } from '../../../src/actors/session-registry/session-registry-actor.ts'
import type { SessionRegistryEvent } from '../../../src/actors/session-registry/session-registry-messages.ts'
import { hashToken } from '../../../src/domain/session/session-types.ts'
import { apiSessionSealContext } from '../../../src/domain/session/session-stored.ts'

const change: ChangeContext = { author: 'test', source: 'rest' }

let dir: string
let store: Store
let clock: FakeClock
let bus: EventBus
let sessions: SessionRegistryActor
let stopTimers: () => void
let events: SessionRegistryEvent[]
let loaded: { withoutToken: number; unreadableTokens: number }

async function start(): Promise<void> {
  store = await openStore(dir)
  bus = new EventBus()
  events = []
  for (const t of ['apiSession.created', 'apiSession.mfaCompleted', 'apiSession.deleted', 'apiSessionCert.created', 'apiSessionCert.deleted', 'session.deleted'] as const) {
    bus.subscribe<SessionRegistryEvent>(t, (e) => events.push(e))
  }
  const deps: ActorSystemDeps = { store, bus, clock, cloneMessages: true, failStop: (e) => { throw e } }
  ;({ actor: sessions, stopTimers, loaded } = startSessionRegistryActor(store, deps, { timeoutMs: 60_000, sweepEveryMs: 3_600_000, flushEveryMs: 3_600_000 }))
}
async function stop(): Promise<void> {
  stopTimers()
  await sessions.stop()
  await store.close()
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-session-tokens-'))
  clock = new FakeClock(1_700_000_000_000)
  await start()
})
afterEach(async () => {
  await stop()
  rmSync(dir, { recursive: true, force: true })
})

const base = { identityId: 'i1', authenticatorId: 'a1', configTypes: [], ipAddress: '127.0.0.1', isMfaRequired: false, isMfaComplete: false, isCertExtendable: false, tags: {} }

async function open(token: string, more: Partial<typeof base> = {}) {
  const { session } = await sessions.ask({ type: 'apiSession.create', session: { ...base, ...more, tokenHash: hashToken(token) }, token, change })
  return session
}

describe('an API session token', () => {
  it('is kept beside the record, not in it, and the stored record holds it sealed only', async () => {
    const token = '0b9e5c55-5d2f-4f0c-9d55-3c2c9b0d8f11'
    const s = await open(token)
    expect(sessions.snapshot().routerTokenOf(s)).toBe(token)
    expect(JSON.stringify(sessions.snapshot().byId.get(s.id))).not.toContain(token)
    expect(JSON.stringify(events)).not.toContain(token)
    await stop()
    const readOnly = await openStore(dir, { readOnly: true })
    const raw = readOnly.db('api-sessions').get(s.tokenHash) as Record<string, unknown>
    await readOnly.close()
    expect(JSON.stringify(raw)).not.toContain(token)
    expect(typeof raw.sealedToken).toBe('string')
    expect(readSealKey(sealKeyPathOf(dir))!.open(raw.sealedToken as string, apiSessionSealContext(s))).toBe(token)
    await start()
  })

  it('survives a restart, and an activity flush and MFA completion rewrite it with the record', async () => {
    const token = 'c1d2e3f4-0000-4000-8000-000000000001'
    const s = await open(token, { isMfaRequired: true })
    await sessions.ask({ type: 'apiSession.touch', tokenHash: s.tokenHash, at: clock.now() + 1000 })
    await sessions.ask({ type: 'apiSession.flushActivity' })
    await sessions.ask({ type: 'apiSession.completeMfa', id: s.id, change })
    await stop()
    await start()
    const again = sessions.snapshot().byId.get(s.id)!
    expect(again.lastActivityAt).toBe(clock.now() + 1000)
    expect(again.isMfaComplete).toBe(true)
    expect(again).not.toHaveProperty('token')
    expect(sessions.snapshot().routerTokenOf(again)).toBe(token)
  })

  it('goes with its session: the deleted event carries it, the snapshot forgets it', async () => {
    const token = 'c1d2e3f4-0000-4000-8000-000000000002'
    const s = await open(token)
    await sessions.ask({ type: 'apiSession.delete', id: s.id, change: { author: 'admin', source: 'rest' } })
    expect(sessions.snapshot().routerTokenOf(s)).toBeUndefined()
    expect(events.at(-1)).toMatchObject({ type: 'apiSession.deleted', reason: 'admin', token })
  })

  it('must hash to the session\'s tokenHash', async () => {
    await expect(sessions.ask({ type: 'apiSession.create', session: { ...base, tokenHash: hashToken('one') }, token: 'another', change })).rejects.toThrow(TypeError)
  })

  it('is absent for a session opened without one and for a record stored before tokens were kept', async () => {
    const { session } = await sessions.ask({ type: 'apiSession.create', session: { ...base, tokenHash: 'h-none' }, change })
    expect(sessions.snapshot().routerTokenOf(session)).toBeUndefined()
    // a record of an older edgeplane: no sealedToken member
    const old = { ...session, id: 'c-old', tokenHash: hashToken('old-token') }
    await store.commit([{ db: 'api-sessions', key: old.tokenHash, value: old }])
    await stop()
    await start()
    const oldOne = sessions.snapshot().byId.get('c-old')!
    expect(oldOne.tokenHash).toBe(old.tokenHash)
    expect(sessions.snapshot().routerTokenOf(oldOne)).toBeUndefined()
    expect(sessions.snapshot().routerTokenOf(sessions.snapshot().byId.get(session.id)!)).toBeUndefined()
    expect(loaded).toEqual({ withoutToken: 2, unreadableTokens: 0 })
  })

  it('that does not open (a record damaged or moved behind the registry\'s back) leaves its session without one, counted', async () => {
    const token = 'c1d2e3f4-0000-4000-8000-000000000004'
    const s = await open(token)
    await stop()
    const readOnly = await openStore(dir, { readOnly: true })
    const raw = readOnly.db('api-sessions').get(s.tokenHash) as Record<string, unknown>
    await readOnly.close()
    await start()
    // the sealed token of `s` copied into another record: bound to s's id, it does not open there
    await store.commit([{ db: 'api-sessions', key: 'f'.repeat(64), value: { ...raw, id: 'c-moved', tokenHash: 'f'.repeat(64) } }])
    await stop()
    await start()
    expect(loaded).toEqual({ withoutToken: 1, unreadableTokens: 1 })
    const moved = sessions.snapshot().byId.get('c-moved')!
    expect(moved).not.toHaveProperty('sealedToken')
    expect(sessions.snapshot().routerTokenOf(moved)).toBeUndefined()
    expect(sessions.snapshot().routerTokenOf(s)).toBe(token)
  })
})

describe('the events the control plane pushes from', () => {
  it('tells an MFA completion, a certificate created and deleted, and service sessions deleted', async () => {
    const s = await open('c1d2e3f4-0000-4000-8000-000000000003', { isMfaRequired: true })
    await sessions.ask({ type: 'apiSession.completeMfa', id: s.id, change })
    expect(events.at(-1)).toMatchObject({ type: 'apiSession.mfaCompleted', session: { id: s.id, isMfaComplete: true } })
    const cert = await sessions.ask({
      type: 'apiSessionCert.create',
      certificate: { apiSessionId: s.id, identityId: 'i1', subject: 'CN=i1', fingerprint: 'ab'.repeat(20), certPem: 'PEM', validFrom: 0, validTo: 1 },
      change,
    })
    expect(events.at(-1)).toMatchObject({ type: 'apiSessionCert.created', certificate: { id: cert.id } })
    await sessions.ask({ type: 'apiSessionCert.delete', id: cert.id, apiSessionId: s.id, change })
    expect(events.at(-1)).toMatchObject({ type: 'apiSessionCert.deleted', certificate: { id: cert.id } })
    const ss = (id: string, serviceId: string) => ({ id, token: 'jwt', apiSessionId: s.id, identityId: 'i1', serviceId, type: 'Dial' as const, tags: {} })
    await sessions.ask({ type: 'session.create', session: ss('ss1', 'svc1'), change })
    await sessions.ask({ type: 'session.create', session: ss('ss2', 'svc2'), change })
    await sessions.ask({ type: 'session.create', session: ss('ss3', 'svc3'), change })
    await sessions.ask({ type: 'session.delete', id: 'ss1', change })
    expect(events.at(-1)).toMatchObject({ type: 'session.deleted', sessions: [{ id: 'ss1' }] })
    await sessions.ask({ type: 'session.deleteMany', ids: ['ss2', 'gone'], change })
    expect(events.at(-1)).toMatchObject({ type: 'session.deleted', sessions: [{ id: 'ss2' }] })
    // with its API session: the service sessions first, then the API session; its certificates tell nothing
    await sessions.ask({ type: 'apiSessionCert.create', certificate: { apiSessionId: s.id, identityId: 'i1', subject: 'CN=i1', fingerprint: 'cd'.repeat(20), certPem: 'PEM', validFrom: 0, validTo: 1 }, change })
    const before = events.length
    await sessions.ask({ type: 'apiSession.delete', id: s.id, change })
    expect(events.slice(before).map((e) => e.type)).toEqual(['session.deleted', 'apiSession.deleted'])
    expect(events[before]).toMatchObject({ sessions: [{ id: 'ss3' }] })
  })
})

describe('apiSession.touchBatch', () => {
  it('marks every named session that exists, ignores the others, and writes nothing until the flush', async () => {
    const a = await open('c1d2e3f4-0000-4000-8000-00000000000a')
    const b = await open('c1d2e3f4-0000-4000-8000-00000000000b')
    const at = clock.now() + 5_000
    await sessions.ask({ type: 'apiSession.touchBatch', tokenHashes: [a.tokenHash, 'unknown', b.tokenHash], at })
    expect(sessions.snapshot().byId.get(a.id)!.lastActivityAt).toBe(at)
    expect(sessions.snapshot().byId.get(b.id)!.lastActivityAt).toBe(at)
    expect((store.db('api-sessions').get(a.tokenHash) as { lastActivityAt: number }).lastActivityAt).toBe(a.lastActivityAt)
    await sessions.ask({ type: 'apiSession.flushActivity' })
    expect((store.db('api-sessions').get(a.tokenHash) as { lastActivityAt: number }).lastActivityAt).toBe(at)
  })
})
