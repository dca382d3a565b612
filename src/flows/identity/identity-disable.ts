/**
 * Disabling an identity: by an admin (`POST /identities/{id}/disable`) or by the lockout of its authentication policy
 * (auth-lockout.ts). Two aggregates: the identity actor records the disabled window, then the session registry ends
 * the identity's API sessions.
 * - a disabled identity can not log in by any method (auth-api-session.ts) and none of its sessions is honoured
 *   (http-auth.ts checks the identity on every request), so the sessions are dead from the moment the disable commits
 * - failure story: the disable commits first. A crash before the sessions are removed leaves them stored but refused
 *   on every request; the next start removes the sessions of every disabled identity
 *   (`endSessionsOfDisabledIdentities`), so an enable later never brings one back
 * - `durationMinutes` 0 disables until an admin enables the identity again
 * @see edge-api management.yml disableIdentity, enableIdentity; controller-behaviour.md §4 "Lockout"
 */
import { isDisabled } from '../../domain/identity/identity-types.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../actors/session-registry/session-registry-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'

export interface IdentityDisableDeps {
  identities: IdentityActor
  sessions: SessionRegistryActor
}

/** Ends every API session of an identity that has just been disabled. */
export async function endApiSessionsOf(deps: Pick<IdentityDisableDeps, 'sessions'>, identityId: string, change: ChangeContext): Promise<void> {
  await deps.sessions.ask({ type: 'apiSession.deleteForIdentity', identityId, reason: 'identity-disabled', change })
}

/** Disables identity `id` from now for `durationMinutes` (0: until enabled) and ends its API sessions. */
export async function disableIdentity(deps: IdentityDisableDeps, id: string, durationMinutes: number, change: ChangeContext): Promise<void> {
  await deps.identities.ask({ type: 'identity.disable', id, durationMinutes, change })
  await endApiSessionsOf(deps, id, change)
}

/** At start: the API sessions of identities that are disabled (an interrupted disable left them); answers how many identities had some. */
export async function endSessionsOfDisabledIdentities(deps: IdentityDisableDeps, now: number): Promise<number> {
  const ids = new Set<string>()
  for (const s of deps.sessions.snapshot().byTokenHash.values()) {
    const identity = deps.identities.snapshot().identity(s.identityId)
    if (identity && isDisabled(identity, now)) ids.add(identity.id)
  }
  for (const id of ids) await endApiSessionsOf(deps, id, { author: 'system', source: 'system' })
  return ids.size
}
