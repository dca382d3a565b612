// The API-session flow (src/flows/authenticate/auth-api-session.ts) over real actors: what it refuses after any
// primary method, and what the session it opens records (controller-behaviour.md §4).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ApiError } from '../../../src/errors/api-error.ts'
import { hashToken } from '../../../src/domain/session/session-types.ts'
import type { Identity } from '../../../src/domain/identity/identity-types.ts'
import { openApiSession } from '../../../src/flows/authenticate/auth-api-session.ts'
import type { PrimaryAuth } from '../../../src/flows/authenticate/auth-method.ts'
import { change, openCore, type Core } from './flows-support.ts'

let core: Core
let identity: Identity
const peer = { certChainDer: [], remoteAddress: '10.1.2.3' }
beforeAll(async () => {
  core = await openCore()
  const { id } = await core.identities.ask({ type: 'identity.create', input: { name: 'flow-user' }, change })
  identity = core.identities.snapshot().identity(id)!
})
afterAll(async () => {
  await core.close()
})

const primaryOf = (i: Identity): PrimaryAuth => ({ identity: i, authenticator: { id: 'auth-1', identityId: i.id, method: 'updb' } })

describe('openApiSession', () => {
  it('opens a fully authenticated session under the default policy and records envInfo/sdkInfo', async () => {
    const input = { configTypes: ['all'], envInfo: { os: 'linux' }, sdkInfo: { type: 'test-sdk' } }
    const opened = await openApiSession(core, { kind: 'updb' }, primaryOf(identity), input, peer, change)
    expect(opened.authQueries).toEqual([])
    expect(opened.session).toMatchObject({
      identityId: identity.id,
      authenticatorId: 'auth-1',
      configTypes: ['all'],
      ipAddress: '10.1.2.3',
      isMfaRequired: false,
      isMfaComplete: false,
      isCertExtendable: false,
    })
    expect(opened.session.tokenHash).toBe(hashToken(opened.token))
    expect(core.sessions.snapshot().byTokenHash.get(hashToken(opened.token))?.id).toBe(opened.session.id)
    expect(core.identities.snapshot().identity(identity.id)).toMatchObject({ envInfo: { os: 'linux' }, sdkInfo: { type: 'test-sdk' } })
  })

  it('refuses a disabled identity with 401 INVALID_AUTH and opens nothing, whatever the method', async () => {
    const before = core.sessions.snapshot().byId.size
    const disabled = { ...identity, disabledAt: core.clock.now() - 1, disabledUntil: null }
    for (const kind of ['updb', 'cert', 'extJwt'] as const) {
      const e = await openApiSession(core, { kind }, primaryOf(disabled), {}, peer, change).catch((err: unknown) => err)
      expect(e instanceof ApiError && [e.status, e.code]).toEqual([401, 'INVALID_AUTH'])
    }
    expect(core.sessions.snapshot().byId.size).toBe(before)
    // a lock-out that has run out no longer refuses
    const expired = { ...identity, disabledAt: core.clock.now() - 10, disabledUntil: core.clock.now() - 1 }
    expect((await openApiSession(core, { kind: 'updb' }, primaryOf(expired), {}, peer, change)).session.identityId).toBe(identity.id)
  })
})
