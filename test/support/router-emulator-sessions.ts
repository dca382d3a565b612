// The legacy API-session side of a real `ziti router` (v2), on top of the router emulator's public send/reply/
// waitFor/received (router-emulator.ts): what the router sends about sessions (ApiSessionHeartbeat, RequestClientReSync,
// ValidateSessionsRequest), the decoding of what it receives exactly as it decodes it, and a model of the table of
// legacy API sessions it keeps. Written from ziti router/state/apiSessionAdded.go, apiSessionUpdated.go,
// apiSessionRemoved.go, sessionRemoved.go and manager.go (RemoveMissingApiSessions); router-control-plane.md §3.4.
// Where the real router panics (a body that does not decode, a full state's 1014 that does not parse or has no id),
// these throw RouterWouldPanic.
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf'
import {
  ApiSessionAddedSchema,
  ApiSessionHeartbeatSchema,
  ApiSessionRemovedSchema,
  ApiSessionUpdatedSchema,
  ContentType as EdgeType,
  RequestClientReSyncSchema,
  SessionRemovedSchema,
  ValidateSessionsRequestSchema,
  type ApiSession,
} from '../../src/control/pb/edge_ctrl_pb.ts'
import type { Frame } from '../../src/control/wire/control-frame.ts'
import type { RouterEmulator } from './router-emulator.ts'

/** A message a real router would panic on. */
export class RouterWouldPanic extends Error {}

const SYNC_TYPE = 1013
const SYNC_STATE = 1014

export interface SyncState {
  id: string
  isLast: boolean
  sequence: number
}

/** A body decoded as the router decodes it (proto.Unmarshal; a failure is its Panic). */
export function decodeAsRouter<D extends DescMessage>(schema: D, frame: Pick<Frame, 'body'>) {
  try {
    return fromBinary(schema, frame.body)
  } catch (e) {
    throw new RouterWouldPanic(`could not convert message as ${schema.typeName}: ${String(e)}`)
  }
}

/**
 * The 1014 header of a full state, as the router parses it (json.Unmarshal into InstantSyncState; a failure, or an
 * empty id, is its Panic), and checked to be exactly the JSON the real controller writes (members id, isLast,
 * sequence, in that order, of those types).
 */
export function syncStateOf(frame: Frame): SyncState {
  const type = frame.headers.get(SYNC_TYPE)
  const raw = frame.headers.get(SYNC_STATE)
  if (type === undefined || raw === undefined) throw new Error('a full state without the sync headers (the router would fall back to its legacy sync)')
  if (new TextDecoder().decode(type) !== 'instant') throw new Error('a sync strategy other than instant')
  const text = new TextDecoder().decode(raw)
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    throw new RouterWouldPanic(`could not parse sync state [${text}]`)
  }
  const s = v as SyncState
  if (typeof s?.id !== 'string' || s.id === '') throw new RouterWouldPanic('syncState id is empty, cannot continue')
  if (typeof s.isLast !== 'boolean' || !Number.isInteger(s.sequence) || s.sequence < 0) throw new RouterWouldPanic(`sync state of the wrong types: ${text}`)
  if (text !== JSON.stringify({ id: s.id, isLast: s.isLast, sequence: s.sequence })) throw new Error(`sync state is not the JSON the real controller writes: ${text}`)
  return s
}

/** What these helpers read of an emulator: the frames it received (a unit test's pipe will do). */
export type Received = Pick<RouterEmulator, 'received'>

/** The ApiSessionAdded frames received, decoded (every one as the router would). */
export function apiSessionAddedFrames(router: Received) {
  return router.received
    .filter((f) => f.contentType === EdgeType.ApiSessionAddedType)
    .map((frame) => ({ frame, body: decodeAsRouter(ApiSessionAddedSchema, frame) }))
}

export interface FullState {
  id: string
  /** Its messages in sequence order: the state, the sessions. */
  chunks: Array<{ state: SyncState; sessions: ApiSession[]; frame: Frame }>
  sessions: ApiSession[]
}

/** Every full state received, by sync id, in the order their first message came. */
export function fullStates(router: Received): FullState[] {
  const byId = new Map<string, FullState>()
  for (const { frame, body } of apiSessionAddedFrames(router)) {
    if (!body.isFullState) continue
    const state = syncStateOf(frame)
    let fs = byId.get(state.id)
    if (!fs) byId.set(state.id, (fs = { id: state.id, chunks: [], sessions: [] }))
    fs.chunks.push({ state, sessions: body.apiSessions, frame })
  }
  for (const fs of byId.values()) {
    fs.chunks.sort((a, b) => a.state.sequence - b.state.sequence)
    fs.sessions = fs.chunks.flatMap((c) => c.sessions)
  }
  return [...byId.values()]
}

const isComplete = (fs: FullState) => {
  const last = fs.chunks.find((c) => c.state.isLast)
  return last !== undefined && fs.chunks.length === last.state.sequence + 1 && fs.chunks.every((c, i) => c.state.sequence === i)
}

/** Waits for a complete full state (every sequence up to isLast) other than those in `seen` (their ids). */
export async function waitForFullState(router: RouterEmulator, seen: readonly string[] = [], timeoutMs = 5_000): Promise<FullState> {
  const pick = () => fullStates(router).find((fs) => !seen.includes(fs.id) && isComplete(fs))
  await router.waitFor(() => pick() !== undefined, timeoutMs, 'a complete full state of API sessions')
  return pick()!
}

/** Waits for a frame of `contentType` whose body (decoded as the router would) satisfies `pred`. */
export async function waitForMessage<D extends DescMessage>(
  router: RouterEmulator,
  contentType: number,
  schema: D,
  pred: (body: ReturnType<typeof decodeAsRouter<D>>, frame: Frame) => boolean,
  what: string,
  timeoutMs = 5_000,
) {
  const f = await router.waitFor((f) => f.contentType === contentType && pred(decodeAsRouter(schema, f), f), timeoutMs, what)
  return { frame: f, body: decodeAsRouter(schema, f) }
}

export const waitForAdded = (router: RouterEmulator, pred: (s: ApiSession, fullState: boolean) => boolean, what = 'an ApiSessionAdded', timeoutMs?: number) =>
  waitForMessage(router, EdgeType.ApiSessionAddedType, ApiSessionAddedSchema, (b) => b.apiSessions.some((s) => pred(s, b.isFullState)), what, timeoutMs)

export const waitForUpdated = (router: RouterEmulator, pred: (s: ApiSession) => boolean, what = 'an ApiSessionUpdated', timeoutMs?: number) =>
  waitForMessage(router, EdgeType.ApiSessionUpdatedType, ApiSessionUpdatedSchema, (b) => b.apiSessions.some(pred), what, timeoutMs)

export const waitForApiSessionRemoved = (router: RouterEmulator, token: string, what = 'an ApiSessionRemoved', timeoutMs?: number) =>
  waitForMessage(router, EdgeType.ApiSessionRemovedType, ApiSessionRemovedSchema, (b) => b.tokens.includes(token), what, timeoutMs)

export const waitForSessionRemoved = (router: RouterEmulator, id: string, what = 'a SessionRemoved', timeoutMs?: number) =>
  waitForMessage(router, EdgeType.SessionRemovedType, SessionRemovedSchema, (b) => b.ids.includes(id) || b.tokens.includes(id), what, timeoutMs)

function sendMessage<D extends DescMessage>(router: RouterEmulator, contentType: number, schema: D, init: MessageInitShape<D>): number {
  return router.send({ contentType, body: toBinary(schema, create(schema, init)) })
}

/** The router's heartbeat: the legacy tokens its SDKs use (router/state/heartbeat.go). */
export const sendHeartbeat = (router: RouterEmulator, tokens: string[]) => sendMessage(router, EdgeType.ApiSessionHeartbeatType, ApiSessionHeartbeatSchema, { tokens })
/** What the router sends when its API-session sync failed (apiSessionAdded.go syncFailed). */
export const sendResync = (router: RouterEmulator, reason = 'error during api session sync: timeout, did not receive all updates in time') =>
  sendMessage(router, EdgeType.RequestClientReSyncType, RequestClientReSyncSchema, { reason })
/** The router's validation of the service sessions in use after a reconnect: their ids (manager.go ValidateSessions). */
export const sendValidateSessions = (router: RouterEmulator, sessionTokens: string[]) =>
  sendMessage(router, EdgeType.ValidateSessionsRequestType, ValidateSessionsRequestSchema, { sessionTokens })

/**
 * The router's table of legacy API sessions, kept across connections as the router keeps it (one state manager for
 * all its control channels), fed with the frames one emulator received (`follow`, then `catchUp` after each wait):
 * - ApiSessionAdded: every session added at once; a full state (isFullState) also runs the instant sync: a sync with a
 *   greater id starts a new tracker, an older one is ignored; once every sequence up to isLast is in, the sessions it
 *   did not name are dropped, except those whose id is greater than the greatest id it named (no id named: all);
 *   sessions added by non-full messages while a sync runs count as named by it;
 * - ApiSessionUpdated: set; ApiSessionRemoved: dropped by token;
 * - SessionRemoved: the service session ids it closes (the id of each, or "unknown" when ids are not as many as tokens).
 */
export class RouterSessionTable {
  readonly sessions = new Map<string, ApiSession>()
  readonly removedServiceSessions: string[] = []
  readonly completedSyncs: string[] = []
  private tracker: { id: string; chunks: Map<number, ApiSession[]>; post: ApiSession[]; lastSeq: number | undefined; done: boolean } | undefined
  private router: Received | undefined
  private read = 0

  /** Reads the frames of `router` from now on (the frames it received so far included). */
  follow(router: Received): this {
    this.router = router
    this.read = 0
    this.tracker = undefined
    return this.catchUp()
  }

  /** Applies the frames received since the last call. */
  catchUp(): this {
    const received = this.router?.received ?? []
    while (this.read < received.length) this.apply(received[this.read++])
    return this
  }

  tokens(): string[] {
    return [...this.sessions.keys()].sort()
  }

  private apply(f: Frame): void {
    switch (f.contentType) {
      case EdgeType.ApiSessionAddedType: {
        const body = decodeAsRouter(ApiSessionAddedSchema, f)
        for (const s of body.apiSessions) this.sessions.set(s.token, s)
        if (body.isFullState) this.instantSync(syncStateOf(f), body.apiSessions)
        else if (this.tracker && !this.tracker.done) this.tracker.post.push(...body.apiSessions)
        return
      }
      case EdgeType.ApiSessionUpdatedType:
        for (const s of decodeAsRouter(ApiSessionUpdatedSchema, f).apiSessions) this.sessions.set(s.token, s)
        return
      case EdgeType.ApiSessionRemovedType:
        for (const t of decodeAsRouter(ApiSessionRemovedSchema, f).tokens) this.sessions.delete(t)
        return
      case EdgeType.SessionRemovedType: {
        const body = decodeAsRouter(SessionRemovedSchema, f)
        const hasIds = body.ids.length === body.tokens.length
        body.tokens.forEach((_, i) => this.removedServiceSessions.push(hasIds ? body.ids[i] : 'unknown'))
        return
      }
    }
  }

  private instantSync(state: SyncState, sessions: ApiSession[]): void {
    const t = this.tracker
    if (!t || t.done || t.id < state.id) this.tracker = { id: state.id, chunks: new Map(), post: [], lastSeq: undefined, done: false }
    const tracker = this.tracker!
    if (tracker.id > state.id) return
    tracker.chunks.set(state.sequence, sessions)
    if (state.isLast) tracker.lastSeq = state.sequence
    if (tracker.lastSeq === undefined) return
    for (let i = 0; i <= tracker.lastSeq; i++) if (!tracker.chunks.has(i)) return
    const named = [...Array.from({ length: tracker.lastSeq + 1 }, (_, i) => tracker.chunks.get(i)!).flat(), ...tracker.post]
    const valid = new Set(named.map((s) => s.token))
    const lastId = named.reduce((max, s) => (s.id > max ? s.id : max), '')
    for (const [token, s] of [...this.sessions]) if (!valid.has(token) && (lastId === '' || s.id <= lastId)) this.sessions.delete(token)
    tracker.done = true
    this.completedSyncs.push(tracker.id)
  }
}
