// The CA delete cascade (src/flows/ca/ca-delete-cascade.ts): a deleted CA's cert authenticators and ottca
// enrollments leave the identity aggregate on `ca.deleted`, and start-up repairs a delete interrupted between the CA
// actor's commit and the identity actor's (simulated by never telling the identity actor, then restarting).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { cascadeCaDeletes, forgetDeletedCas } from '../../../src/flows/ca/ca-delete-cascade.ts'
import type { ThirdPartyCa } from '../../../src/domain/ca/ca-types.ts'
import { change, openCore, type Core } from './flows-support.ts'

let core: Core
beforeEach(async () => {
  core = await openCore()
})
afterEach(async () => {
  await core.close()
})

let seq = 0
/** An identity enrolled through CA `caId` (a cert authenticator of it) with an outstanding ottca enrollment of it. */
async function hangingOn(caId: string): Promise<string> {
  const id = `id-${++seq}`
  await core.identities.ask({
    type: 'identity.enrollByCa', id, name: `through-${caId}-${seq}`, roleAttributes: [], externalId: null,
    cert: { certPem: 'PEM', fingerprint: `fp-${seq}`, caId }, change,
  })
  const enrollment = { method: 'ottca' as const, token: `tok-${seq}`, jwt: 'jwt', expiresAt: core.clock.now() + 60_000, caId, username: null }
  await core.identities.ask({ type: 'enrollment.create', identityId: id, enrollment, change })
  return id
}

const counts = (identityId: string) => ({
  authenticators: [...core.identities.snapshot().authenticatorsOf(identityId)].length,
  enrollments: [...core.identities.snapshot().enrollmentsOf(identityId)].length,
})

describe('the CA delete cascade', () => {
  it('removes what hangs on a deleted CA when ca.deleted is published, and nothing else', async () => {
    const bus = new EventBus()
    cascadeCaDeletes(bus, core)
    const gone = await hangingOn('ca-gone')
    const kept = await hangingOn('ca-kept')
    bus.publish({ type: 'ca.deleted', ca: { id: 'ca-gone' } as ThirdPartyCa })
    // the identity actor's handler ran before publish returned
    expect(counts(gone)).toEqual({ authenticators: 0, enrollments: 0 })
    expect(counts(kept)).toEqual({ authenticators: 1, enrollments: 1 })
    expect(core.identities.snapshot().identity(gone)).toBeDefined()
  })

  it('repairs an interrupted delete at start: authenticators and enrollments of CAs that no longer exist go', async () => {
    const gone = await hangingOn('ca-gone')
    const kept = await hangingOn('ca-kept')
    await core.restart()
    const forgotten = await forgetDeletedCas({ identities: core.identities, caExists: (id) => id === 'ca-kept' })
    expect(forgotten).toEqual(['ca-gone'])
    expect(counts(gone)).toEqual({ authenticators: 0, enrollments: 0 })
    expect(counts(kept)).toEqual({ authenticators: 1, enrollments: 1 })
    await core.restart()
    expect(counts(gone)).toEqual({ authenticators: 0, enrollments: 0 })
    expect(await forgetDeletedCas({ identities: core.identities, caExists: (id) => id === 'ca-kept' })).toEqual([])
  })
})
