/**
 * Deleting a third-party CA deletes what hangs on it in the identity aggregate: the cert authenticators of
 * certificates that came through it (ottca, auto-enrollment, an admin's create) and its outstanding ottca enrollments.
 * - the CA actor deletes the CA and emits `ca.deleted`; the subscriber tells the identity actor
 *   (`identity.forgetCa`), whose handler runs before the CA's reply resolves (events are delivered synchronously and
 *   the identity handler is synchronous), so the request after the delete's 200 no longer sees them
 *
 * Failure story (two aggregates, two commits, CA first): a crash after the CA's commit and before the identity
 * actor's leaves authenticators and enrollments naming a CA that is gone. They are harmless meanwhile: the CA is no
 * longer a trust anchor, so such a certificate logs nobody in, and an ottca redeem of a missing CA is refused
 * INVALID_ENROLLMENT_TOKEN. `forgetDeletedCas` runs at every start and removes them.
 */
import type { CaEvent } from '../../actors/ca/ca-messages.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { EventBus } from '../../actors/runtime/event-bus.ts'

export interface CaCascadeDeps {
  identities: IdentityActor
  /** Whether a third-party CA exists (the CA actor's snapshot). */
  caExists: (caId: string) => boolean
}

const SYSTEM: ChangeContext = { author: 'system', source: 'system' }

/** Subscribes the cascade to `ca.deleted`; answers the unsubscribe function. */
export function cascadeCaDeletes(bus: EventBus, deps: Pick<CaCascadeDeps, 'identities'>): () => void {
  return bus.subscribe<Extract<CaEvent, { type: 'ca.deleted' }>>('ca.deleted', (e) =>
    deps.identities.tell({ type: 'identity.forgetCa', caId: e.ca.id, change: SYSTEM }),
  )
}

/** Removes the authenticators and enrollments of CAs that no longer exist; answers the ids of those CAs. */
export async function forgetDeletedCas(deps: CaCascadeDeps): Promise<string[]> {
  const s = deps.identities.snapshot()
  const gone = new Set<string>()
  for (const a of s.authenticators.values()) if (a.caId !== undefined && !deps.caExists(a.caId)) gone.add(a.caId)
  for (const e of s.enrollments.values()) if (e.caId !== null && !deps.caExists(e.caId)) gone.add(e.caId)
  for (const caId of gone) await deps.identities.ask({ type: 'identity.forgetCa', caId, change: SYSTEM })
  return [...gone]
}
