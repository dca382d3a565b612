/**
 * Counting failed authentication attempts toward the lockout of an identity's authentication policy: the one entry
 * point for every kind of wrong credential (a wrong password here; a wrong TOTP or recovery code from the MFA flows).
 * - the count is kept per identity and persisted by the identity actor (it survives a restart; the real controller
 *   counts in memory per authenticator and forgets on restart)
 * - with `maxAttempts` 0 nothing is counted; the failure that reaches `maxAttempts` disables the identity for
 *   `lockoutDurationMinutes` (0: until an admin enables it), starts the count again and ends the identity's API
 *   sessions at once (identity-disable.ts, with its failure story)
 * - a success starts the count again; it costs a message only when there is a count to forget
 * @see controller-behaviour.md §4 "Lockout"; controller/model/authenticator_mod_updb.go
 */
import { endApiSessionsOf, type IdentityDisableDeps } from '../identity/identity-disable.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'

/** Counts one failed attempt of `identityId`; answers whether it locked the identity out. */
export async function recordFailedAttempt(deps: IdentityDisableDeps, identityId: string, change: ChangeContext): Promise<boolean> {
  const { disabled } = await deps.identities.ask({ type: 'identity.recordAuthFailure', id: identityId, change })
  if (disabled) await endApiSessionsOf(deps, identityId, change)
  return disabled
}

/** A successful authentication of `identityId`: its failed-attempt count starts again. */
export async function recordSuccess(deps: Pick<IdentityDisableDeps, 'identities'>, identityId: string, change: ChangeContext): Promise<void> {
  if (deps.identities.snapshot().authFailuresOf(identityId) === 0) return
  await deps.identities.ask({ type: 'identity.recordAuthSuccess', id: identityId, change })
}
