// The MFA flow (src/flows/authenticate/auth-mfa.ts) over real actors on LMDB: what is kept across a restart (the
// secret and the unused recovery codes, read back from their sealed form), that a code is used once even when two requests race (the identity actor decides
// again), what a session records (mfaCompletedAt), and that an identity's MFA goes with it.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import type { Identity } from '../../../src/domain/identity/identity-types.ts'
import { hashToken, type ApiSession } from '../../../src/domain/session/session-types.ts'
import { createMfaFlows, type MfaFlows } from '../../../src/flows/authenticate/auth-mfa.ts'
import { codeOfAsync } from '../../support/api-error-code.ts'
import { change, openCore, type Core } from './flows-support.ts'

let core: Core
let flows: MfaFlows
beforeAll(async () => {
  core = await openCore()
  flows = createMfaFlows({ identities: core.identities, sessions: core.sessions, clock: core.clock, issuer: 'test.example' })
})
afterAll(async () => {
  await core.close()
})

let n = 0
async function newIdentity(): Promise<Identity> {
  const { id } = await core.identities.ask({ type: 'identity.create', input: { name: `mfa-flow-${++n}` }, change })
  return core.identities.snapshot().identity(id)!
}

async function newSession(identity: Identity): Promise<ApiSession> {
  const { session } = await core.sessions.ask({
    type: 'apiSession.create',
    session: {
      tokenHash: hashToken(`token-${identity.id}-${Math.random()}`),
      identityId: identity.id,
      authenticatorId: 'a1',
      configTypes: [],
      ipAddress: '127.0.0.1',
      isMfaRequired: true,
      isMfaComplete: false,
      mfaCompletedAt: null,
      isCertExtendable: false,
      tags: {},
    },
    change,
  })
  return session
}

const totp = (secret: string) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: core.clock.now() })
const sessionOf = (id: string) => core.sessions.snapshot().byId.get(id)!

/** An identity with a verified MFA: its secret and its recovery codes as shown while Started. */
async function enrolled() {
  const identity = await newIdentity()
  await flows.enroll(identity, change)
  const started = flows.recordOf(identity)
  const codes = [...started.recoveryCodes]
  expect(flows.provisioningUrlOf(identity)).toBe(`otpauth://totp/test.example:${identity.name}?issuer=test.example&secret=${started.secret}`)
  await flows.verify({ identity, session: await newSession(identity) }, totp(started.secret), change)
  core.clock.advance(30_000)
  return { identity, secret: started.secret, codes }
}

describe('the MFA flow', () => {
  it('keeps the secret and the unused recovery codes across a restart (stored sealed), and hashes none of them', async () => {
    const { identity, secret, codes } = await enrolled()
    await flows.authenticate({ identity, session: await newSession(identity) }, codes[3], change)
    await core.restart()
    flows = createMfaFlows({ identities: core.identities, sessions: core.sessions, clock: core.clock, issuer: 'test.example' })
    const stored = core.identities.snapshot().mfaOf(identity.id)!
    expect(stored.isVerified).toBe(true)
    expect(stored.secret).toBe(secret)
    expect(stored.recoveryCodes).toEqual(codes.filter((c) => c !== codes[3]))
    expect(stored.recoveryCodeHashes).toEqual([])
    expect((await flows.readRecoveryCodes(identity, totp(secret), change)).recoveryCodes).toEqual([...stored.recoveryCodes])
  })

  it('uses a TOTP code once when two requests race with it', async () => {
    const { identity, secret } = await enrolled()
    const [a, b] = [await newSession(identity), await newSession(identity)]
    const code = totp(secret)
    const outcomes = await Promise.all([a, b].map((session) => codeOfAsync(flows.authenticate({ identity, session }, code, change))))
    expect(outcomes.sort()).toEqual(['401 MFA_INVALID_TOKEN', 'no error'])
  })

  it('uses a recovery code once when two requests race with it', async () => {
    const { identity, codes } = await enrolled()
    const [a, b] = [await newSession(identity), await newSession(identity)]
    const outcomes = await Promise.all([a, b].map((session) => codeOfAsync(flows.authenticate({ identity, session }, codes[0], change))))
    expect(outcomes.sort()).toEqual(['401 MFA_INVALID_TOKEN', 'no error'])
    expect(core.identities.snapshot().mfaOf(identity.id)!.recoveryCodes).toHaveLength(19)
  })

  it('stamps mfaCompletedAt on the session, and again when it answers once more', async () => {
    const { identity, secret } = await enrolled()
    const session = await newSession(identity)
    expect(session.mfaCompletedAt).toBeNull()
    await flows.authenticate({ identity, session }, totp(secret), change)
    const first = sessionOf(session.id)
    expect([first.isMfaComplete, first.mfaCompletedAt]).toEqual([true, core.clock.now()])
    core.clock.advance(30_000)
    await flows.authenticate({ identity, session: first }, totp(secret), change)
    expect(sessionOf(session.id).mfaCompletedAt).toBe(core.clock.now())
    await core.restart()
    flows = createMfaFlows({ identities: core.identities, sessions: core.sessions, clock: core.clock, issuer: 'test.example' })
    expect(sessionOf(session.id).mfaCompletedAt).toBe(core.clock.now())
  })

  it('removes an identity\'s MFA with the identity', async () => {
    const { identity } = await enrolled()
    await core.identities.ask({ type: 'identity.delete', id: identity.id, change })
    await core.restart()
    flows = createMfaFlows({ identities: core.identities, sessions: core.sessions, clock: core.clock, issuer: 'test.example' })
    expect(core.identities.snapshot().mfaOf(identity.id)).toBeUndefined()
  })

  it('refuses an MFA worked out on a record that was replaced meanwhile with 404', async () => {
    const identity = await newIdentity()
    await flows.enroll(identity, change)
    const old = flows.recordOf(identity)
    await flows.remove(identity, undefined, change)
    await flows.enroll(identity, change)
    const replay = core.identities.ask({ type: 'mfa.verify', identityId: identity.id, mfaId: old.id, step: 1, change })
    expect(await codeOfAsync(replay)).toBe('404 NOT_FOUND')
  })
})
