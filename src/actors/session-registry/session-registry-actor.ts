/**
 * The session-registry actor: sole writer of `api-sessions`. Activity marks are kept in memory and flushed in batches
 * (a timer message), so an authenticated read never costs a disk write; expiry is swept by a timer message.
 */
import { ApiError } from '../../errors/api-error.ts'
import { newCuid } from '../../lib/ids.ts'
import { isExpired, type ApiSession } from '../../domain/session/session-types.ts'
import type { Store } from '../../store/store-env.ts'
import { Actor, type ActorBehavior, type ActorSystemDeps, type Tx } from '../runtime/actor-runtime.ts'
import type { SessionRegistryEvent, SessionRegistryMsg, SessionRegistryReplies } from './session-registry-messages.ts'
import { SessionRegistryState } from './session-registry-state.ts'

export type SessionRegistryActor = Actor<SessionRegistryState, SessionRegistryMsg, SessionRegistryReplies, SessionRegistryEvent>

/** At most this many expired sessions are removed per sweep, so one sweep never holds the mailbox long. */
const SWEEP_BATCH = 500

function behavior(timeoutMs: number): ActorBehavior<SessionRegistryState, SessionRegistryMsg, SessionRegistryReplies, SessionRegistryEvent> {
  const remove = (state: SessionRegistryState, s: ApiSession, reason: 'logout' | 'admin' | 'timeout' | 'identity-deleted', tx: Tx<SessionRegistryEvent>) => {
    state.remove(s)
    tx.remove('api-sessions', s.tokenHash)
    tx.emit({ type: 'apiSession.deleted', session: s, reason })
  }
  return {
    owner: 'session-registry',
    handle(state, msg, tx) {
      switch (msg.type) {
        case 'apiSession.create': {
          const s: ApiSession = { ...msg.session, id: newCuid(tx.now), createdAt: tx.now, updatedAt: tx.now, lastActivityAt: tx.now }
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
          for (const s of state.sessionsOf(msg.identityId)) remove(state, s, 'identity-deleted', tx)
          return
        }
        case 'apiSession.touch': {
          const s = state.byTokenHash.get(msg.tokenHash)
          if (s && msg.at > s.lastActivityAt) {
            s.lastActivityAt = msg.at
            state.dirty.add(s.tokenHash)
          }
          return
        }
        case 'apiSession.flushActivity': {
          for (const h of state.dirty) {
            const s = state.byTokenHash.get(h)
            if (s) tx.put('api-sessions', h, s)
          }
          state.dirty.clear()
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
      }
    },
  }
}

/** Loads the sessions from LMDB, starts the actor and its activity-flush and sweep timers. */
export function startSessionRegistryActor(
  store: Store,
  deps: ActorSystemDeps,
  opts: { timeoutMs: number; sweepEveryMs: number; flushEveryMs: number },
): { actor: SessionRegistryActor; stopTimers: () => void } {
  const state = new SessionRegistryState()
  for (const { value } of store.db('api-sessions').getRange()) state.put(value as ApiSession)
  const actor = new Actor('session-registry', state, behavior(opts.timeoutMs), deps)
  const sweep = setInterval(() => actor.tell({ type: 'apiSession.sweep' }), opts.sweepEveryMs)
  const flush = setInterval(() => actor.tell({ type: 'apiSession.flushActivity' }), opts.flushEveryMs)
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
