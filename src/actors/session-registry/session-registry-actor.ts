/**
 * The session-registry actor: sole writer of `api-sessions`, `sessions` and `api-session-certs` (service sessions and
 * certificates go in the transaction that removes their API session). Activity marks are kept in memory and flushed
 * in batches (a timer message), so an authenticated read never costs a disk write; expiry is swept by a timer message.
 * A session's token, when it came with `apiSession.create`, is kept beside its record and written with it on every
 * put (the store seals it: domain/session/session-stored.ts), so it survives restarts for the edge routers.
 */
import { ApiError } from '../../errors/api-error.ts'
import { assertNever } from '../../lib/assert-never.ts'
import { newCuid, newShortId } from '../../lib/ids.ts'
import { hashToken, isExpired, type ApiSession, type ApiSessionCertificate } from '../../domain/session/session-types.ts'
import type { ApiSessionWithToken, StoredApiSession } from '../../domain/session/session-stored.ts'
import type { Store } from '../../store/store-env.ts'
import { Actor, type ActorBehavior, type ActorSystemDeps, type Tx } from '../runtime/actor-runtime.ts'
import type { ServiceSession } from '../../domain/session/service-session-types.ts'
import type { SessionReads } from '../../domain/session/session-reads.ts'
import type { SessionRegistryEvent, SessionRegistryMsg, SessionRegistryReplies, SessionRepair } from './session-registry-messages.ts'
import { SessionRegistryState } from './session-registry-state.ts'

export type SessionRegistryActor = Actor<SessionRegistryState, SessionRegistryMsg, SessionRegistryReplies, SessionRegistryEvent, SessionReads>

/** At most this many expired sessions are removed per sweep, so one sweep never holds the mailbox long. */
const SWEEP_BATCH = 500

/** A cluster node shares a session's activity at most this often (a coalesced `apiSession.touchMany` command). */
export const SHARE_ACTIVITY_EVERY_MS = 60_000

const NODE_LOCAL: ReadonlySet<SessionRegistryMsg['type']> = new Set(['apiSession.touch', 'apiSession.touchBatch', 'apiSession.flushActivity'])

/** What `tx.put` writes for a session: its record, with the token it keeps (sealed by the store). */
function stored(state: SessionRegistryState, s: ApiSession): ApiSessionWithToken {
  const token = state.routerTokenOf(s)
  return token === undefined ? s : { ...s, token }
}

function behavior(timeoutMs: number, clustered: boolean): ActorBehavior<SessionRegistryState, SessionRegistryMsg, SessionRegistryReplies, SessionRegistryEvent> {
  const remove = (state: SessionRegistryState, s: ApiSession, reason: Extract<SessionRegistryEvent, { type: 'apiSession.deleted' }>['reason'], tx: Tx<SessionRegistryEvent>) => {
    const token = state.routerTokenOf(s)
    state.remove(s)
    tx.remove('api-sessions', s.tokenHash)
    // service sessions and certificates die with their API session
    const serviceSessions = state.serviceSessionsOf(s.id)
    for (const ss of serviceSessions) removeServiceSession(state, ss, tx)
    for (const c of state.sessionCertificatesOf(s.id)) removeSessionCertificate(state, c, tx)
    if (serviceSessions.length > 0) tx.emit({ type: 'session.deleted', sessions: serviceSessions })
    tx.emit({ type: 'apiSession.deleted', session: s, reason, ...(token !== undefined ? { token } : {}) })
  }
  const removeServiceSession = (state: SessionRegistryState, ss: ServiceSession, tx: Tx<SessionRegistryEvent>) => {
    state.removeServiceSession(ss)
    tx.remove('sessions', ss.id)
  }
  const removeSessionCertificate = (state: SessionRegistryState, c: ApiSessionCertificate, tx: Tx<SessionRegistryEvent>) => {
    state.removeSessionCertificate(c)
    tx.remove('api-session-certs', c.id)
  }
  const touch = (state: SessionRegistryState, tokenHash: string, at: number) => {
    const s = state.byTokenHash.get(tokenHash)
    if (clustered) {
      // the record changes only through the log: the mark stays this node's until it is shared
      if (s && at > state.activityOf(s)) state.localActivity.set(tokenHash, at)
      return
    }
    if (s && at > s.lastActivityAt) {
      // replaced, not changed in place: a record handed out never changes under its reader
      state.put({ ...s, lastActivityAt: at })
      state.dirty.add(s.tokenHash)
    }
  }
  // the identity's and service's existence are not this actor's to know: a finding naming them is trusted; the API
  // session's is re-checked (a finding may be older than the latest writes)
  const repair = (state: SessionRegistryState, r: SessionRepair, tx: Tx<SessionRegistryEvent>) => {
    switch (r.kind) {
      case 'apiSessions.removeForIdentity':
        for (const s of state.sessionsOf(r.identityId)) remove(state, s, 'identity-deleted', tx)
        return
      case 'session.remove': {
        const ss = state.serviceSessions.get(r.id)
        if (ss) {
          removeServiceSession(state, ss, tx)
          tx.emit({ type: 'session.deleted', sessions: [ss] })
        }
        // not loaded (its API session was gone at start): only the stored record is left
        else tx.remove('sessions', r.id)
        return
      }
      case 'apiSessionCert.remove': {
        if (state.byId.has(r.apiSessionId)) return
        const c = state.sessionCertificates.get(r.id)
        if (c) removeSessionCertificate(state, c, tx)
        else tx.remove('api-session-certs', r.id)
        return
      }
      default:
        return assertNever(r, 'session registry repair')
    }
  }
  return {
    owner: 'session-registry',
    nodeLocal: NODE_LOCAL,
    handle(state, msg, tx) {
      switch (msg.type) {
        case 'apiSession.create': {
          if (msg.token !== undefined && hashToken(msg.token) !== msg.session.tokenHash) throw new TypeError('an API session\'s token must hash to its tokenHash')
          const s: ApiSession = { ...msg.session, mfaCompletedAt: null, id: newCuid(tx.now), createdAt: tx.now, updatedAt: tx.now, lastActivityAt: tx.now }
          state.put(s)
          if (msg.token !== undefined) state.putToken(s.tokenHash, msg.token)
          tx.put('api-sessions', s.tokenHash, stored(state, s))
          tx.emit({ type: 'apiSession.created', session: s })
          return { id: s.id, session: s }
        }
        case 'apiSession.delete': {
          const s = state.byId.get(msg.id)
          if (!s) throw ApiError.notFound()
          remove(state, s, msg.change.source === 'rest' && msg.change.author === s.identityId ? 'logout' : 'admin', tx)
          return
        }
        case 'apiSession.deleteForIdentity': {
          for (const s of state.sessionsOf(msg.identityId)) remove(state, s, msg.reason ?? 'identity-deleted', tx)
          return
        }
        case 'apiSession.touch':
          return touch(state, msg.tokenHash, msg.at)
        case 'apiSession.touchBatch':
          for (const h of msg.tokenHashes) touch(state, h, msg.at)
          return
        case 'apiSession.completeMfa': {
          const s = state.byId.get(msg.id)
          if (!s) throw ApiError.unauthorized()
          const next: ApiSession = { ...s, isMfaRequired: true, isMfaComplete: true, mfaCompletedAt: tx.now, updatedAt: tx.now }
          state.put(next)
          tx.put('api-sessions', next.tokenHash, stored(state, next))
          tx.emit({ type: 'apiSession.mfaCompleted', session: next })
          return { session: next }
        }
        case 'apiSession.flushActivity': {
          const share: Array<[string, number]> = []
          if (clustered) {
            for (const [h, at] of state.localActivity) {
              const s = state.byTokenHash.get(h)
              if (!s || at <= s.lastActivityAt) state.localActivity.delete(h)
              else if (at - s.lastActivityAt >= SHARE_ACTIVITY_EVERY_MS) share.push([h, at])
            }
            return { share }
          }
          for (const h of state.dirty) {
            const s = state.byTokenHash.get(h)
            if (s) tx.put('api-sessions', h, stored(state, s))
          }
          state.dirty.clear()
          return { share }
        }
        case 'apiSession.touchMany': {
          for (const [h, at] of msg.marks) {
            const s = state.byTokenHash.get(h)
            if (!s || at <= s.lastActivityAt) continue
            const next: ApiSession = { ...s, lastActivityAt: at }
            state.put(next)
            tx.put('api-sessions', h, stored(state, next))
            if (state.localActivity.get(h) === at) state.localActivity.delete(h)
          }
          return
        }
        case 'apiSession.sweep': {
          let removed = 0
          for (const s of state.byId.values()) {
            if (removed >= SWEEP_BATCH) break
            if (isExpired(s, tx.now, timeoutMs)) {
              remove(state, s, 'timeout', tx)
              removed++
            }
          }
          return { removed }
        }
        case 'session.create': {
          const api = state.byId.get(msg.session.apiSessionId)
          if (!api) throw ApiError.unauthorized()
          const same = state
            .serviceSessionsOf(api.id)
            .find((x) => x.serviceId === msg.session.serviceId && x.type === msg.session.type)
          if (same) return { session: same, existing: true }
          const ss: ServiceSession = { ...msg.session, createdAt: tx.now, updatedAt: tx.now }
          state.putServiceSession(ss)
          tx.put('sessions', ss.id, ss)
          return { session: ss, existing: false }
        }
        case 'session.delete': {
          const ss = state.serviceSessions.get(msg.id)
          if (!ss) throw ApiError.notFound()
          removeServiceSession(state, ss, tx)
          tx.emit({ type: 'session.deleted', sessions: [ss] })
          return
        }
        case 'session.deleteMany': {
          const removed: ServiceSession[] = []
          for (const id of msg.ids) {
            const ss = state.serviceSessions.get(id)
            if (ss) {
              removeServiceSession(state, ss, tx)
              removed.push(ss)
            }
          }
          if (removed.length > 0) tx.emit({ type: 'session.deleted', sessions: removed })
          return
        }
        case 'apiSessionCert.create': {
          if (!state.byId.has(msg.certificate.apiSessionId)) throw ApiError.unauthorized()
          if (state.sessionCertificateByFingerprint(msg.certificate.fingerprint)) {
            // the CA issued it moments ago with a random serial: a second holder is a bug, not a client's doing
            throw new TypeError(`certificate ${msg.certificate.fingerprint} already belongs to an API session`)
          }
          const c: ApiSessionCertificate = { ...msg.certificate, id: newShortId(), createdAt: tx.now, updatedAt: tx.now }
          state.putSessionCertificate(c)
          tx.put('api-session-certs', c.id, c)
          tx.emit({ type: 'apiSessionCert.created', certificate: c })
          return c
        }
        case 'apiSessionCert.delete': {
          const c = state.sessionCertificates.get(msg.id)
          if (!c || c.apiSessionId !== msg.apiSessionId) throw ApiError.notFound()
          removeSessionCertificate(state, c, tx)
          tx.emit({ type: 'apiSessionCert.deleted', certificate: c })
          return
        }
        case 'integrity.repair':
          return msg.repairs.filter((r) => {
            const before = tx.ops.length
            repair(state, r, tx)
            return tx.ops.length > before
          }).length
        default:
          return assertNever(msg, 'session registry message')
      }
    },
  }
}

/** Loads the sessions from LMDB, starts the actor and its activity-flush and sweep timers. */
export function startSessionRegistryActor(
  store: Store,
  deps: ActorSystemDeps,
  opts: { timeoutMs: number; sweepEveryMs: number; flushEveryMs: number; clustered?: boolean },
): { actor: SessionRegistryActor; stopTimers: () => void; loaded: { withoutToken: number; unreadableTokens: number } } {
  const state = new SessionRegistryState()
  let unreadableTokens = 0
  let withoutToken = 0
  for (const { value } of store.db('api-sessions').getRange()) {
    // the token (opened by the store) is kept beside the record, never in it; one that did not open is dropped
    const { token, sealedToken, ...s } = value as ApiSessionWithToken & StoredApiSession
    if (token === undefined && sealedToken !== undefined) unreadableTokens++
    // sessions stored before mfaCompletedAt existed read as null
    state.put(s.mfaCompletedAt === undefined ? { ...s, mfaCompletedAt: null } : s)
    if (token !== undefined) state.putToken(s.tokenHash, token)
    else withoutToken++
  }
  for (const { value } of store.db('sessions').getRange()) {
    const ss = value as ServiceSession
    // a service session whose API session is gone (crash between the two writes) is not loaded
    if (state.byId.has(ss.apiSessionId)) state.putServiceSession(ss)
  }
  for (const { value } of store.db('api-session-certs').getRange()) {
    const c = value as ApiSessionCertificate
    if (state.byId.has(c.apiSessionId)) state.putSessionCertificate(c)
  }
  const clustered = opts.clustered ?? false
  const actor = new Actor('session-registry', state, behavior(opts.timeoutMs, clustered), deps)
  // a cluster node asks for a sweep (a command every node applies) only when a session is due: idle ticks cost no write
  const due = () => {
    const now = deps.clock.now()
    for (const s of state.byId.values()) if (isExpired(s, now, opts.timeoutMs)) return true
    return false
  }
  const sweep = setInterval(() => {
    if (!clustered || due()) actor.tell({ type: 'apiSession.sweep' })
  }, opts.sweepEveryMs)
  const flush = setInterval(() => {
    if (!clustered) return actor.tell({ type: 'apiSession.flushActivity' })
    // a cluster node: the marks due are shared by one command (refused while the cluster has no quorum: kept, retried)
    actor
      .ask({ type: 'apiSession.flushActivity' })
      .then((r) => (r.share.length > 0 ? actor.ask({ type: 'apiSession.touchMany', marks: r.share }) : undefined))
      .catch((e) => console.error(`[session-registry] sharing activity failed: ${e instanceof Error ? e.message : String(e)}`))
  }, opts.flushEveryMs)
  sweep.unref?.()
  flush.unref?.()
  return {
    actor,
    stopTimers: () => {
      clearInterval(sweep)
      clearInterval(flush)
    },
    // sessions stored before tokens were kept, and (among them) those whose sealed token did not open
    loaded: { withoutToken, unreadableTokens },
  }
}
