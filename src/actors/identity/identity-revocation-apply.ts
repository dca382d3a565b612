/**
 * The identity actor's handlers for revocations of OIDC tokens (sub-db `revocations`, keyed by id). The identity
 * actor owns them so that an identity's disable, lockout or delete, and an authenticator's delete, write the
 * identity's revocation in the same commit as the change (`revokeIdentity`): no crash can leave a disabled identity
 * whose tokens still work.
 * - every revocation is created anew: one of an id already stored replaces it (new `createdAt`, so a new cut-off)
 * - an admin's revocation is checked before anything is staged (`decideAdminRevocation`); the others are not
 * - expired revocations are pruned by a timer message, at most `PRUNE_BATCH` a message
 */
import { assertNever } from '../../lib/assert-never.ts'
import { decideAdminRevocation, REVOCATION_TYPES, toRevocation, type NewRevocation, type Revocation } from '../../domain/identity/identity-revocation.ts'
import type { Tx } from '../runtime/actor-runtime.ts'
import type { IdentityEvent, IdentityMsg } from './identity-messages.ts'
import type { IdentityState } from './identity-state.ts'

type RevocationMsg = Extract<IdentityMsg, { type: 'revocation.create' | 'revocation.prune' }>

/** At most this many expired revocations are removed by one prune message, so one never holds the mailbox long. */
export const PRUNE_BATCH = 10_000

/** The identity actor's `revocation.*` messages. */
export function handleRevocation(state: IdentityState, msg: RevocationMsg, tx: Tx<IdentityEvent>) {
  switch (msg.type) {
    case 'revocation.create': {
      if (msg.validate) for (const n of msg.revocations) decideAdminRevocation((id) => state.identity(id) !== undefined, n)
      const stored = storeRevocations(state, tx, msg.revocations)
      return { ids: stored.map((r) => r.id) }
    }
    case 'revocation.prune':
      return { removed: pruneRevocations(state, tx) }
    default:
      return assertNever(msg, 'revocation message')
  }
}

/** Stores revocations (apply only), each id once (the last of an id given wins), and tells subscribers. */
function storeRevocations(state: IdentityState, tx: Tx<IdentityEvent>, asked: readonly NewRevocation[]): Revocation[] {
  const byId = new Map<string, Revocation>()
  for (const n of asked) byId.set(n.id, toRevocation(n, tx.now, state.revocationLifetimeMs))
  const stored = [...byId.values()]
  for (const r of stored) {
    state.putRevocation(r)
    tx.put('revocations', r.id, r)
  }
  if (stored.length > 0) tx.emit({ type: 'revocation.created', revocations: stored })
  return stored
}

/**
 * Revokes every token of an identity issued until now (apply only): written in the same transaction as the change
 * that calls it (disable, lockout, delete, authenticator delete).
 */
export function revokeIdentity(state: IdentityState, tx: Tx<IdentityEvent>, identityId: string): void {
  storeRevocations(state, tx, [{ id: identityId, type: 'IDENTITY' }])
}

/** The integrity repair: removes the stored revocation `id` when its type is unknown; false when there is nothing to do. */
export function removeMalformedRevocation(state: IdentityState, tx: Tx<IdentityEvent>, id: string): boolean {
  const held = state.revocation(id)
  if (!held || (REVOCATION_TYPES as readonly string[]).includes(held.type)) return false
  state.removeRevocation(id)
  tx.remove('revocations', id)
  tx.emit({ type: 'revocation.removed', ids: [id] })
  return true
}

/** Removes up to PRUNE_BATCH revocations that expired by `tx.now`; answers how many. */
function pruneRevocations(state: IdentityState, tx: Tx<IdentityEvent>): number {
  const expired: string[] = []
  for (const r of state.revocations()) {
    if (r.expiresAt > tx.now) continue
    expired.push(r.id)
    if (expired.length >= PRUNE_BATCH) break
  }
  for (const id of expired) {
    state.removeRevocation(id)
    tx.remove('revocations', id)
  }
  if (expired.length > 0) tx.emit({ type: 'revocation.removed', ids: expired })
  return expired.length
}
