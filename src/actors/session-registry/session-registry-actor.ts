/**
 * The session-registry actor: sole writer of `api-sessions`, `sessions` and `api-session-certs` (service sessions and
 * certificates go in the transaction that removes their API session). Activity marks are kept in memory and flushed
 * in batches (a timer message), so an authenticated read never costs a disk write; expiry is swept by a timer message.
 */
import { ApiError } from '../../errors/api-error.ts'
import { assertNever } from '../../lib/assert-never.ts'
import { newCuid, newShortId } from '../../lib/ids.ts'
import { isExpired, type ApiSession, type ApiSessionCertificate } from '../../domain/session/session-types.ts'
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

const NODE_LOCAL: ReadonlySet<SessionRegistryMsg['type']> = new Set(['apiSession.touch', 'apiSession.flushActivity'])

function behavior(timeoutMs: number, clustered: boolean): ActorBehavior<SessionRegistryState, SessionRegistryMsg, SessionRegistryReplies, SessionRegistryEvent> {
  const remove = (state: SessionRegistryState, s: ApiSession, reason: Extract<SessionRegistryEvent, { type: 'apiSession.deleted' }>['reason'], tx: Tx<SessionRegistryEvent>) => {
    state.remove(s)
    tx.remove('api-sessions', s.tokenHash)
    // service sessions and certificates die with their API session
    for (const ss of state.serviceSessionsOf(s.id)) removeServiceSession(state, ss, tx)
    for (const c of state.sessionCertificatesOf(s.id)) removeSessionCertificate(state, c, tx)
    tx.emit({ type: 'apiSession.deleted', session: s, reason })
  }
  const removeServiceSession = (state: SessionRegistryState, ss: ServiceSession, tx: Tx<SessionRegistryEvent>) => {
    state.removeServiceSession(ss)
    tx.remove('sessions', ss.id)
  }
  const removeSessionCertificate = (state: SessionRegistryState, c: ApiSessionCertificate, tx: Tx<SessionRegistryEvent>) => {
    state.removeSessionCertificate(c)
    tx.remove('api-session-certs', c.id)
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
        if (ss) removeServiceSession(state, ss, tx)
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
          const s: ApiSession = { ...msg.session, mfaCompletedAt: null, id: newCuid(tx.now), createdAt: tx.now, updatedAt: tx.now, lastActivityAt: tx.now }
          state.put(s)
          tx.put('api-sessions', s.tokenHash, s)
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
        case 'apiSession.touch': {
          const s = state.byTokenHash.get(msg.tokenHash)
          if (clustered) {
            // the record changes only through the log: the mark stays this node's until it is shared
            if (s && msg.at > state.activityOf(s)) state.localActivity.set(msg.tokenHash, msg.at)
            return
          }
          if (s && msg.at > s.lastActivityAt) {
            // replaced, not changed in place: a record handed out never changes under its reader
            state.put({ ...s, lastActivityAt: msg.at })
            state.dirty.add(s.tokenHash)
          }
          return
        }
        case 'apiSession.completeMfa': {
          const s = state.byId.get(msg.id)
          if (!s) throw ApiError.unauthorized()
          const next: ApiSession = { ...s, isMfaRequired: true, isMfaComplete: true, mfaCompletedAt: tx.now, updatedAt: tx.now }
          state.put(next)
          tx.put('api-sessions', next.tokenHash, next)
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
            if (s) tx.put('api-sessions', h, s)
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
            tx.put('api-sessions', h, next)
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
          return
        }
        case 'session.deleteMany': {
          for (const id of msg.ids) {
            const ss = state.serviceSessions.get(id)
            if (ss) removeServiceSession(state, ss, tx)
          }
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
          return c
        }
        case 'apiSessionCert.delete': {
          const c = state.sessionCertificates.get(msg.id)
          if (!c || c.apiSessionId !== msg.apiSessionId) throw ApiError.notFound()
          removeSessionCertificate(state, c, tx)
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
): { actor: SessionRegistryActor; stopTimers: () => void } {
  const state = new SessionRegistryState()
  // sessions stored before mfaCompletedAt existed read as null
  for (const { value } of store.db('api-sessions').getRange()) {
    const s = value as ApiSession
    state.put(s.mfaCompletedAt === undefined ? { ...s, mfaCompletedAt: null } : s)
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
  }
}
