/**
 * What ties the aggregates together once they run: the cascades between actors (a deleted identity's sessions and
 * policy references, a deleted CA's authenticators), the repairs of writes a crash interrupted, and the default admin
 * of a new data directory.
 */
import { randomBytes } from 'node:crypto'
import type { IdentityActor } from '../actors/identity/identity-actor.ts'
import type { IdentityEvent } from '../actors/identity/identity-messages.ts'
import type { EventBus } from '../actors/runtime/event-bus.ts'
import { cascadeCaDeletes, forgetDeletedCas } from '../flows/ca/ca-delete-cascade.ts'
import { endSessionsOfDisabledIdentities } from '../flows/identity/identity-disable.ts'
import { reconcileRouterIdentities } from '../flows/routers/router-identity.ts'
import { hashPassword } from '../auth/auth-password.ts'
import type { Actors } from './boot-actors.ts'
import type { ServerOptions } from './boot-options.ts'

/** Subscribes the cascades between actors to the bus. */
export function wireCascades(bus: EventBus, actors: Actors): void {
  const { identities, sessions, graph } = actors
  bus.subscribe<Extract<IdentityEvent, { type: 'identity.deleted' }>>('identity.deleted', (e) =>
    sessions.tell({ type: 'apiSession.deleteForIdentity', identityId: e.identity.id, change: { author: 'system', source: 'system' } }),
  )
  bus.subscribe<Extract<IdentityEvent, { type: 'identity.deleted' }>>('identity.deleted', (e) =>
    graph.tell({ type: 'identity.removed', identityId: e.identity.id, change: { author: 'system', source: 'system' } }),
  )
  // a deleted CA's cert authenticators and ottca enrollments go with it (flows/ca/ca-delete-cascade.ts)
  cascadeCaDeletes(bus, { identities })
}

/** Finishes what a crash interrupted between two aggregates; notes each kind of repair made. */
export async function repairInterruptedWrites(actors: Actors, now: number, log: (line: string) => void): Promise<void> {
  const { identities, sessions, graph, ca } = actors
  const forgotten = await forgetDeletedCas({ identities, caExists: (id) => ca.snapshot().cas.has(id) })
  if (forgotten.length > 0) log(`note: ${forgotten.length} deleted CAs still had authenticators or enrollments (an interrupted delete); removed`)
  const cutOff = await endSessionsOfDisabledIdentities({ identities, sessions }, now)
  if (cutOff > 0) log(`note: ${cutOff} disabled identities still had API sessions (an interrupted disable); ended`)
  const reconciled = await reconcileRouterIdentities({ graph, identities }, { author: 'system', source: 'system' })
  if (reconciled.length > 0) log(`note: ${reconciled.length} router identities did not follow their routers (an interrupted write); repaired`)
}

/** Creates the default admin on a new data directory; returns the password when it had to be generated. */
export async function ensureDefaultAdmin(identities: IdentityActor, opts: ServerOptions, log: (l: string) => void): Promise<string | undefined> {
  for (const i of identities.snapshot().identities.values()) if (i.isDefaultAdmin) return undefined
  const username = opts.adminUsername ?? 'admin'
  let password = opts.adminPassword
  let generated: string | undefined
  if (!password) {
    password = generated = randomBytes(18).toString('base64url')
    log(`generated password for the default admin '${username}' (shown once): ${generated}`)
  }
  await identities.ask({
    type: 'identity.create',
    input: { name: 'Default Admin', isAdmin: true, typeId: 'Default' },
    isDefaultAdmin: true,
    updb: { username, passwordHash: await hashPassword(password) },
    change: { author: 'system', source: 'system' },
  })
  return generated
}
