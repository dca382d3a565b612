// The API-sessions feature of the control plane (src/control/sessions/), on a real session registry over a temporary
// LMDB and control channels over pipes, every frame it sends decoded as a real router decodes it
// (test/support/router-emulator-sessions.ts): the full state (an empty one, chunks of 100 in id order, the 1013/1014
// headers, a resync superseding a run under way), the incremental pushes, what routers send (heartbeats, resyncs and
// their pacing, session validation), and the pure parts (sync ids, sync states, fingerprints).
// @see router-control-plane.md §3.4; ziti router/state/apiSessionAdded.go, controller/sync_strats/sync_instant.go
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, toBinary } from '@bufbuild/protobuf'
import { FakeClock } from '../../../src/lib/clock.ts'
import { createLogger } from '../../../src/lib/logger.ts'
import { MetricsRegistry } from '../../../src/lib/metrics.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps, ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startSessionRegistryActor, type SessionRegistryActor } from '../../../src/actors/session-registry/session-registry-actor.ts'
import type { Authenticator } from '../../../src/domain/identity/identity-types.ts'
import { hashToken, type ApiSession } from '../../../src/domain/session/session-types.ts'
import { certFingerprintsOf, isRouterVisible } from '../../../src/domain/session/session-router-view.ts'
import { ControlChannel, type ControlHandler } from '../../../src/control/channel/control-channel.ts'
import { RouterRegistry, type ConnectedRouter } from '../../../src/control/control-routers.ts'
import { SYNC_STATUS } from '../../../src/domain/router/router-presence.ts'
import { FRAME_CAPS, type Frame } from '../../../src/control/wire/control-frame.ts'
import { FrameReader } from '../../../src/control/wire/control-reader.ts'
import { createSessionsFeature } from '../../../src/control/sessions/sessions-feature.ts'
import { chunkCountOf, encodeSyncState, SyncIds, syncStatesOf } from '../../../src/control/sessions/sessions-sync.ts'
import { MAX_TOKENS } from '../../../src/control/sessions/handler-api-session-heartbeat.ts'
import type { ControlFeature } from '../../../src/control/control-feature.ts'
import {
  ApiSessionHeartbeatSchema,
  ApiSessionRemovedSchema,
  ContentType as EdgeType,
  RequestClientReSyncSchema,
  SessionRemovedSchema,
  ValidateSessionsRequestSchema,
} from '../../../src/control/pb/edge_ctrl_pb.ts'
import { apiSessionAddedFrames, decodeAsRouter, fullStates, RouterSessionTable, syncStateOf } from '../../support/router-emulator-sessions.ts'

const change: ChangeContext = { author: 'test', source: 'rest' }

let dir: string
let store: Store
let clock: FakeClock
let bus: EventBus
let sessions: SessionRegistryActor
let stopTimers: () => void
let registry: RouterRegistry
let feature: ControlFeature
let metrics: MetricsRegistry
const certs = new Map<string, Authenticator[]>()

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-sessions-feature-'))
  store = await openStore(dir)
  clock = new FakeClock(1_700_000_000_000)
  bus = new EventBus()
  const deps: ActorSystemDeps = { store, bus, clock, cloneMessages: true, failStop: (e) => { throw e } }
  ;({ actor: sessions, stopTimers } = startSessionRegistryActor(store, deps, { timeoutMs: 60_000, sweepEveryMs: 3_600_000, flushEveryMs: 3_600_000 }))
  registry = new RouterRegistry(() => {})
  metrics = new MetricsRegistry()
  certs.clear()
  feature = createSessionsFeature(
    { sessions, identities: { snapshot: () => ({ authenticatorsOf: (id: string) => certs.get(id) ?? [] }) }, bus, resyncGapMs: 40 },
    { registry, clock, logger: createLogger({ level: 'error', write: () => {} }), metrics },
  )
})
afterEach(async () => {
  await feature.stop?.()
  registry.closeAll('test over')
  stopTimers()
  await sessions.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A connected router on a pipe: what it received, decoded; `say` hands it a frame as if the router sent it. */
function connect(id: string, opts: { isEdge?: boolean } = {}) {
  const received: Frame[] = []
  let seq = 0
  const reader = new FrameReader(FRAME_CAPS)
  const channel = new ControlChannel({
    label: id,
    // a frame may come in two writes (a large body after its head): cut frames as a router's reader does
    transport: { write: (b) => void received.push(...reader.push(b)), bufferedBytes: () => 0, close: () => {} },
    log: () => {},
    monotonicMs: () => 0,
  })
  const router: ConnectedRouter = {
    id, name: id, isEdge: opts.isEdge ?? true, channel, connectedAt: 0, fingerprint: 'f', remoteAddress: '127.0.0.1',
    versionInfo: { version: 'v0.0.0', revision: 'local', buildDate: '', os: 'linux', arch: 'amd64' }, capabilities: 0n,
    linkListeners: [], ctrlChanListeners: {}, hostname: '', supportedProtocols: {}, dataModel: { supported: true, index: 0n }, syncStatus: SYNC_STATUS.New,
  }
  channel.bind(new Map<number, ControlHandler>(feature.handlers?.(router) ?? []))
  registry.add(router)
  const say = (contentType: number, body: Uint8Array) => channel.receive({ contentType, sequence: ++seq, headers: new Map(), body })
  return { router, received, say }
}

let n = 0
async function open(more: Partial<Pick<ApiSession, 'identityId' | 'isMfaRequired'>> & { noToken?: boolean } = {}) {
  const token = `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`
  const { session } = await sessions.ask({
    type: 'apiSession.create',
    session: { identityId: more.identityId ?? 'i1', authenticatorId: 'a1', configTypes: [], ipAddress: '::1', isMfaRequired: more.isMfaRequired ?? false, isMfaComplete: false, isCertExtendable: false, tags: {}, tokenHash: hashToken(token) },
    ...(more.noToken ? {} : { token }),
    change,
  })
  return { session, token }
}

const ofType = (received: Frame[], ct: number) => received.filter((f) => f.contentType === ct)

describe('the full state of a router\'s sync', () => {
  it('with no session is one empty message, isLast, with the instant headers', async () => {
    const r = connect('r1')
    await feature.synchronize!(r.router)
    const [only, ...rest] = apiSessionAddedFrames(r)
    expect(rest).toEqual([])
    expect(only.body.isFullState).toBe(true)
    expect(only.body.apiSessions).toEqual([])
    expect(syncStateOf(only.frame)).toMatchObject({ isLast: true, sequence: 0 })
    // the router, holding sessions of an earlier connection, drops them all
    const table = new RouterSessionTable()
    table.sessions.set('stale', { token: 'stale', id: 'c0', identityId: 'i', certFingerprints: [] } as never)
    table.follow(r)
    expect(table.tokens()).toEqual([])
  })

  it('comes in chunks of 100 in id order: one sync id, sequences 0.., isLast on the last only; MFA-owed and tokenless sessions left out', async () => {
    const opened: Array<{ session: ApiSession; token: string }> = []
    for (let i = 0; i < 250; i++) opened.push(await open({ identityId: `i${i % 7}` }))
    await open({ isMfaRequired: true })
    await open({ noToken: true })
    const r = connect('r1')
    await feature.synchronize!(r.router)
    const [fs] = fullStates(r)
    expect(fullStates(r)).toHaveLength(1)
    expect(fs.chunks.map((c) => [c.sessions.length, c.state.sequence, c.state.isLast])).toEqual([[100, 0, false], [100, 1, false], [50, 2, true]])
    expect(new Set(fs.chunks.map((c) => c.state.id))).toEqual(new Set([fs.id]))
    for (const c of fs.chunks) {
      expect(new TextDecoder().decode(c.frame.headers.get(1013)!)).toBe('instant')
      expect(new TextDecoder().decode(c.frame.headers.get(1014)!)).toBe(JSON.stringify({ id: fs.id, isLast: c.state.isLast, sequence: c.state.sequence }))
    }
    const ids = fs.sessions.map((s) => s.id)
    expect(ids).toEqual([...ids].sort())
    expect(fs.sessions.map((s) => s.token).sort()).toEqual(opened.map((o) => o.token).sort())
    const one = fs.sessions.find((s) => s.id === opened[3].session.id)!
    expect(one).toMatchObject({ token: opened[3].token, identityId: 'i3', certFingerprints: [] })
    expect(new RouterSessionTable().follow(r).tokens()).toEqual(opened.map((o) => o.token).sort())
  })

  it('is superseded by a later one under a greater id: the earlier stops before its next message', async () => {
    for (let i = 0; i < 150; i++) await open()
    const r = connect('r1')
    const first = feature.synchronize!(r.router)
    const second = feature.synchronize!(r.router)
    await Promise.all([first, second])
    const [a, b] = fullStates(r)
    expect(a.chunks.map((c) => c.state.sequence)).toEqual([0])
    expect(b.chunks.map((c) => c.state.sequence)).toEqual([0, 1])
    expect(b.id > a.id).toBe(true)
    // the router takes the newer sync whole
    const table = new RouterSessionTable().follow(r)
    expect(table.completedSyncs).toEqual([b.id])
    expect(table.sessions.size).toBe(150)
  })

  it('stops when the router leaves', async () => {
    for (let i = 0; i < 150; i++) await open()
    const r = connect('r1')
    const run = feature.synchronize!(r.router)
    r.router.channel.close('gone')
    await run
    expect(fullStates(r)[0].chunks).toHaveLength(1)
  })
})

describe('incremental pushes', () => {
  it('tell every connected edge router (not fabric routers) of a new session, and of one completing its MFA', async () => {
    const a = connect('ra')
    const b = connect('rb')
    const fabric = connect('rf', { isEdge: false })
    const { session, token } = await open()
    for (const r of [a, b]) {
      const [added] = apiSessionAddedFrames(r)
      expect(added.body).toMatchObject({ isFullState: false, apiSessions: [{ token, id: session.id, identityId: 'i1', certFingerprints: [] }] })
      expect(new TextDecoder().decode(added.frame.headers.get(1013)!)).toBe('instant')
    }
    expect(fabric.received).toEqual([])
    const owing = await open({ isMfaRequired: true })
    expect(apiSessionAddedFrames(a)).toHaveLength(1)
    await sessions.ask({ type: 'apiSession.completeMfa', id: owing.session.id, change })
    expect(apiSessionAddedFrames(a).at(-1)!.body.apiSessions.map((s) => s.token)).toEqual([owing.token])
  })

  it('update a session whose fingerprints change (its certificate, its identity\'s cert authenticator), and remove one that ends', async () => {
    const r = connect('r1')
    const { session, token } = await open({ identityId: 'i-cert' })
    const cert = await sessions.ask({
      type: 'apiSessionCert.create',
      certificate: { apiSessionId: session.id, identityId: 'i-cert', subject: 'CN=i-cert', fingerprint: 'AA'.repeat(20), certPem: 'PEM', validFrom: clock.now(), validTo: clock.now() + 1000 },
      change,
    })
    const updated = ofType(r.received, EdgeType.ApiSessionUpdatedType)
    expect(updated).toHaveLength(1)
    expect(new RouterSessionTable().follow(r).sessions.get(token)!.certFingerprints).toEqual(['aa'.repeat(20)])
    const authenticator = { id: 'au1', identityId: 'i-cert', method: 'cert', fingerprint: 'bb'.repeat(20), tags: {}, createdAt: 0, updatedAt: 0 } as Authenticator
    certs.set('i-cert', [authenticator])
    bus.publish({ type: 'authenticator.saved', authenticator })
    expect(new RouterSessionTable().follow(r).sessions.get(token)!.certFingerprints).toEqual(['bb'.repeat(20), 'aa'.repeat(20)])
    await sessions.ask({ type: 'apiSessionCert.delete', id: cert.id, apiSessionId: session.id, change })
    expect(new RouterSessionTable().follow(r).sessions.get(token)!.certFingerprints).toEqual(['bb'.repeat(20)])

    await sessions.ask({ type: 'session.create', session: { id: 'ss1', token: 'jwt', apiSessionId: session.id, identityId: 'i-cert', serviceId: 'svc', type: 'Dial', tags: {} }, change })
    await sessions.ask({ type: 'apiSession.delete', id: session.id, change })
    const [removedServices] = ofType(r.received, EdgeType.SessionRemovedType)
    expect(decodeAsRouter(SessionRemovedSchema, removedServices)).toMatchObject({ tokens: ['ss1'], ids: ['ss1'] })
    const [removed] = ofType(r.received, EdgeType.ApiSessionRemovedType)
    expect(decodeAsRouter(ApiSessionRemovedSchema, removed)).toMatchObject({ tokens: [token], ids: [session.id] })
    const table = new RouterSessionTable().follow(r)
    expect(table.sessions.has(token)).toBe(false)
    expect(table.removedServiceSessions).toEqual(['ss1'])
  })
})

describe('what routers send', () => {
  it('a heartbeat marks the activity of the sessions it names and answers unknown tokens with ApiSessionRemoved', async () => {
    const r = connect('r1')
    const { session, token } = await open()
    clock.advance(30_000)
    const long = 'x'.repeat(300)
    r.say(EdgeType.ApiSessionHeartbeatType, toBinary(ApiSessionHeartbeatSchema, create(ApiSessionHeartbeatSchema, { tokens: [token, 'not-a-token-of-ours', 'not-a-token-of-ours', long] })))
    await sessions.ask({ type: 'apiSession.flushActivity' })
    expect(sessions.snapshot().byId.get(session.id)!.lastActivityAt).toBe(clock.now())
    const [removed] = ofType(r.received, EdgeType.ApiSessionRemovedType)
    expect(decodeAsRouter(ApiSessionRemovedSchema, removed)).toMatchObject({ tokens: ['not-a-token-of-ours'], ids: [] })
    expect(metrics.render()).toContain('edgeplane_control_api_session_heartbeat_tokens_total{result="ignored"} 1')
  })

  it('a heartbeat past 10,000 tokens is read up to 10,000; an undecodable one is dropped', async () => {
    const r = connect('r1')
    const tokens = Array.from({ length: MAX_TOKENS + 5 }, (_, i) => `unknown-${i}`)
    r.say(EdgeType.ApiSessionHeartbeatType, toBinary(ApiSessionHeartbeatSchema, create(ApiSessionHeartbeatSchema, { tokens })))
    const [removed] = ofType(r.received, EdgeType.ApiSessionRemovedType)
    expect(decodeAsRouter(ApiSessionRemovedSchema, removed).tokens).toHaveLength(MAX_TOKENS)
    r.say(EdgeType.ApiSessionHeartbeatType, Uint8Array.of(0x0a, 0xff, 0xff))
    r.say(EdgeType.ValidateSessionsRequestType, Uint8Array.of(0x0a, 0xff))
    r.say(EdgeType.RequestClientReSyncType, Uint8Array.of(0xff))
    expect(r.router.channel.isClosed).toBe(false)
    expect(ofType(r.received, EdgeType.ApiSessionRemovedType)).toHaveLength(1)
  })

  it('a validation answers the ids of no service session with SessionRemoved, ids and tokens alike', async () => {
    const r = connect('r1')
    const { session } = await open()
    await sessions.ask({ type: 'session.create', session: { id: 'ss-live', token: 'jwt', apiSessionId: session.id, identityId: 'i1', serviceId: 'svc', type: 'Bind', tags: {} }, change })
    r.say(EdgeType.ValidateSessionsRequestType, toBinary(ValidateSessionsRequestSchema, create(ValidateSessionsRequestSchema, { sessionTokens: ['ss-live', 'ss-gone'] })))
    const [removed] = ofType(r.received, EdgeType.SessionRemovedType)
    expect(decodeAsRouter(SessionRemovedSchema, removed)).toMatchObject({ tokens: ['ss-gone'], ids: ['ss-gone'] })
    r.say(EdgeType.ValidateSessionsRequestType, toBinary(ValidateSessionsRequestSchema, create(ValidateSessionsRequestSchema, { sessionTokens: ['ss-live'] })))
    expect(ofType(r.received, EdgeType.SessionRemovedType)).toHaveLength(1)
  })

  it('a resync request repeats the full state, paced: a flood of requests makes one more full state, not one each', async () => {
    await open()
    const r = connect('r1')
    await feature.synchronize!(r.router)
    const resync = toBinary(RequestClientReSyncSchema, create(RequestClientReSyncSchema, { reason: 'error during api session sync: timeout' }))
    for (let i = 0; i < 50; i++) r.say(EdgeType.RequestClientReSyncType, resync)
    await Bun.sleep(150)
    const states = fullStates(r)
    expect(states).toHaveLength(2)
    expect(states[1].id > states[0].id).toBe(true)
    expect(states[1].sessions).toHaveLength(1)
    // once the pace allows, a request is served at once
    await Bun.sleep(50)
    r.say(EdgeType.RequestClientReSyncType, resync)
    await Bun.sleep(5)
    expect(fullStates(r)).toHaveLength(3)
  })
})

describe('the pure parts', () => {
  it('sync ids grow in string order, even when the clock goes back or stands still', () => {
    let now = 5_000
    const ids = new SyncIds(() => now)
    const seen = [ids.next(), ids.next()]
    now = 1_000
    seen.push(ids.next())
    now = 9_999_999_999_999
    seen.push(ids.next())
    expect([...seen].sort()).toEqual(seen)
    expect(new Set(seen).size).toBe(4)
  })

  it('sync states: one per message, isLast on the last; the JSON of a valid state only', () => {
    expect(syncStatesOf('c1', chunkCountOf(0))).toEqual([{ id: 'c1', isLast: true, sequence: 0 }])
    expect(chunkCountOf(100)).toBe(1)
    expect(chunkCountOf(101)).toBe(2)
    expect(syncStatesOf('c1', 2).map((s) => s.isLast)).toEqual([false, true])
    expect(new TextDecoder().decode(encodeSyncState({ id: 'c1', isLast: false, sequence: 3 }))).toBe('{"id":"c1","isLast":false,"sequence":3}')
    expect(() => encodeSyncState({ id: '', isLast: true, sequence: 0 })).toThrow(TypeError)
  })

  it('fingerprints: the identity\'s cert authenticators, then the session\'s certificates valid now, each once, lowercase', () => {
    const auth = [{ method: 'cert' as const, fingerprint: 'AB' }, { method: 'updb' as const }, { method: 'cert' as const, fingerprint: 'ab' }]
    const sessionCerts = [
      { fingerprint: 'cd', validFrom: 10, validTo: 20 },
      { fingerprint: 'ef', validFrom: 21, validTo: 30 },
      { fingerprint: 'gh', validFrom: 0, validTo: 15 },
    ]
    expect(certFingerprintsOf(auth, sessionCerts, 15)).toEqual(['ab', 'cd'])
    expect(isRouterVisible({ isMfaRequired: true, isMfaComplete: false })).toBe(false)
    expect(isRouterVisible({ isMfaRequired: true, isMfaComplete: true })).toBe(true)
    expect(isRouterVisible({ isMfaRequired: false, isMfaComplete: false })).toBe(true)
  })
})
