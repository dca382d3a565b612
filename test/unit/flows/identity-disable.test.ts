// The failure story of disabling an identity (src/flows/identity/identity-disable.ts): the disable commits before the
// API sessions are ended, so a crash in between leaves sessions of a disabled identity; the next start ends them.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { disableIdentity, endSessionsOfDisabledIdentities } from '../../../src/flows/identity/identity-disable.ts'
import { change, openCore, type Core } from './flows-support.ts'

let core: Core
beforeEach(async () => {
  core = await openCore()
})
afterEach(async () => {
  await core.close()
})

async function identityWithSession(name: string): Promise<string> {
  const { id } = await core.identities.ask({ type: 'identity.create', input: { name }, change })
  await core.sessions.ask({
    type: 'apiSession.create',
    session: {
      tokenHash: `hash-${name}`, identityId: id, authenticatorId: 'a1', configTypes: [], ipAddress: '127.0.0.1',
      isMfaRequired: false, isMfaComplete: false, isCertExtendable: false, tags: {},
    },
    change,
  })
  return id
}

const sessionCount = (identityId: string) => [...core.sessions.snapshot().byTokenHash.values()].filter((s) => s.identityId === identityId).length

describe('disabling an identity', () => {
  it('ends its API sessions and keeps the others', async () => {
    const gone = await identityWithSession('gone')
    const kept = await identityWithSession('kept')
    await disableIdentity(core, gone, 0, change)
    expect(sessionCount(gone)).toBe(0)
    expect(sessionCount(kept)).toBe(1)
  })

  it('after a crash between the two steps, the start-up pass ends the sessions of disabled identities only', async () => {
    const interrupted = await identityWithSession('interrupted')
    const expired = await identityWithSession('expired-window')
    const active = await identityWithSession('active')
    // the first step only, as a crash right after it leaves things
    await core.identities.ask({ type: 'identity.disable', id: interrupted, durationMinutes: 0, change })
    await core.identities.ask({ type: 'identity.disable', id: expired, durationMinutes: 1, change })
    core.clock.advance(60_000)
    await core.restart()
    expect(sessionCount(interrupted)).toBe(1)
    expect(await endSessionsOfDisabledIdentities(core, core.clock.now())).toBe(1)
    expect(sessionCount(interrupted)).toBe(0)
    expect(sessionCount(expired)).toBe(1)
    expect(sessionCount(active)).toBe(1)
  })
})
