// The session behind an edge router's terminator request (src/flows/routers/router-session-check.ts) over the
// identity and session-registry actors on LMDB; the service and access tokens are stand-ins whose verify answers
// the claims a token was made with (their signatures are session-token.test.ts's and the OIDC tests' business).
// Codes and hints as ziti controller/handler_edge_ctrl/common.go loadSession / errors.go give them.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { createRouterSessionCheck, type RouterSessionDeps } from '../../../src/flows/routers/router-session-check.ts'
import type { VerifiedSessionToken } from '../../../src/flows/sessions/session-token.ts'
import type { TokenClaims } from '../../../src/flows/oidc/oidc-tokens.ts'
import { hashToken } from '../../../src/domain/session/session-types.ts'
import { EDGE_ERROR, RETRY_HINT } from '../../../src/domain/router/router-request-errors.ts'
import { change, openCore, type Core } from './flows-support.ts'

let core: Core
let identityId: string
let apiSessionId: string
const serviceTokens = new Map<string, VerifiedSessionToken>()
const accessTokens = new Map<string, TokenClaims>()
const TIMEOUT_MS = 60_000

beforeEach(async () => {
  core = await openCore()
  serviceTokens.clear()
  accessTokens.clear()
  identityId = (await core.identities.ask({ type: 'identity.create', input: { name: 'host' }, change })).id
  apiSessionId = (
    await core.sessions.ask({
      type: 'apiSession.create',
      session: { tokenHash: hashToken('zt-api-token'), identityId, authenticatorId: 'a1', configTypes: [], ipAddress: '127.0.0.1', isMfaRequired: false, isMfaComplete: false, isCertExtendable: false, tags: {} },
      change,
    })
  ).id
})
afterEach(async () => {
  await core.close()
})

function check(more: Partial<RouterSessionDeps> = {}) {
  return createRouterSessionCheck({
    sessions: core.sessions,
    identities: core.identities,
    serviceTokens: { verify: async (t) => serviceTokens.get(t) },
    accessTokens: { verify: async (t) => accessTokens.get(t) ?? 'invalid' },
    timeoutMs: TIMEOUT_MS,
    now: () => core.clock.now(),
    ...more,
  })
}

/** A stored Bind (or Dial) session of the API session, and its service token `ey<name>`. */
async function storedSession(name: string, type: 'Bind' | 'Dial' = 'Bind', claims: Partial<VerifiedSessionToken> = {}): Promise<string> {
  const token = `ey${name}`
  await core.sessions.ask({ type: 'session.create', session: { id: name, token, apiSessionId, identityId, serviceId: 'svc', type, tags: {} }, change })
  serviceTokens.set(token, { sessionId: name, apiSessionId, identityId, serviceId: 'svc', type, legacy: true, iat: Math.floor(core.clock.now() / 1000), ...claims })
  return token
}

const refusal = (code: number, retryHint: number) => ({ ok: false as const, error: expect.objectContaining({ code, retryHint }) })

describe('legacy (stored) sessions', () => {
  it('answers the stored Bind session of the API session the token opens', async () => {
    const token = await storedSession('s-1')
    expect(await check()({ sessionToken: token, apiSessionToken: 'zt-api-token' }, 'Bind')).toEqual({
      ok: true, session: { sessionId: 's-1', apiSessionId, identityId, serviceId: 'svc', type: 'Bind' },
    })
  })

  it('refuses an unknown, empty or expired API session, or one whose identity is disabled: invalid api session, start over', async () => {
    const token = await storedSession('s-1')
    const c = check()
    expect(await c({ sessionToken: token, apiSessionToken: 'nope' }, 'Bind')).toEqual(refusal(EDGE_ERROR.InvalidApiSession, RETRY_HINT.StartOver))
    expect(await c({ sessionToken: token, apiSessionToken: '' }, 'Bind')).toEqual(refusal(EDGE_ERROR.InvalidApiSession, RETRY_HINT.StartOver))
    core.clock.advance(TIMEOUT_MS)
    expect(await c({ sessionToken: token, apiSessionToken: 'zt-api-token' }, 'Bind')).toEqual(refusal(EDGE_ERROR.InvalidApiSession, RETRY_HINT.StartOver))
    core.clock.advance(-TIMEOUT_MS)
    await core.identities.ask({ type: 'identity.disable', id: identityId, durationMinutes: 0, change })
    expect(await c({ sessionToken: token, apiSessionToken: 'zt-api-token' }, 'Bind')).toEqual(refusal(EDGE_ERROR.InvalidApiSession, RETRY_HINT.StartOver))
  })

  it('refuses a service token that is no JWT, does not verify, names another API session, or whose session is gone: invalid session', async () => {
    const token = await storedSession('s-1')
    const c = check()
    const ask = (sessionToken: string) => c({ sessionToken, apiSessionToken: 'zt-api-token' }, 'Bind')
    expect(await ask('not-a-jwt')).toEqual(refusal(EDGE_ERROR.InvalidSession, RETRY_HINT.StartOver))
    expect(await ask('eyforged')).toEqual(refusal(EDGE_ERROR.InvalidSession, RETRY_HINT.StartOver))
    serviceTokens.set('eyother', { ...serviceTokens.get(token)!, apiSessionId: 'another' })
    expect(await ask('eyother')).toEqual(refusal(EDGE_ERROR.InvalidSession, RETRY_HINT.StartOver))
    await core.sessions.ask({ type: 'session.delete', id: 's-1', change })
    expect(await ask(token)).toEqual(refusal(EDGE_ERROR.InvalidSession, RETRY_HINT.StartOver))
  })

  it('refuses a service token of an OIDC sign-in (z_leg false) with a legacy API session: internal, retry default', async () => {
    const token = await storedSession('s-1', 'Bind', { legacy: false })
    expect(await check()({ sessionToken: token, apiSessionToken: 'zt-api-token' }, 'Bind')).toEqual(refusal(EDGE_ERROR.Internal, RETRY_HINT.Default))
  })

  it('refuses tokens longer than 64 KiB unread: invalid api session, invalid session', async () => {
    const token = await storedSession('s-1')
    const c = check()
    expect(await c({ sessionToken: token, apiSessionToken: 'x'.repeat(64 * 1024 + 1) }, 'Bind')).toEqual(refusal(EDGE_ERROR.InvalidApiSession, RETRY_HINT.StartOver))
    expect(await c({ sessionToken: `ey${'x'.repeat(64 * 1024)}`, apiSessionToken: 'zt-api-token' }, 'Bind')).toEqual(refusal(EDGE_ERROR.InvalidSession, RETRY_HINT.StartOver))
  })

  it('refuses a Dial session where a Bind one is wanted: incorrect session type', async () => {
    const token = await storedSession('s-dial', 'Dial')
    expect(await check()({ sessionToken: token, apiSessionToken: 'zt-api-token' }, 'Bind')).toEqual(refusal(EDGE_ERROR.WrongSessionType, RETRY_HINT.StartOver))
  })

  it('refuses a service token revoked by its jti: invalid session', async () => {
    const token = await storedSession('s-1')
    await core.identities.ask({ type: 'revocation.create', revocations: [{ id: 's-1', type: 'JTI', expiresAt: core.clock.now() + 60_000 }], change })
    expect(await check()({ sessionToken: token, apiSessionToken: 'zt-api-token' }, 'Bind')).toEqual(refusal(EDGE_ERROR.InvalidSession, RETRY_HINT.StartOver))
  })
})

describe('OIDC sessions (the API session token is an access JWT)', () => {
  const access = (over: Partial<TokenClaims> = {}): TokenClaims => ({
    identityId, apiSessionId: 'oidc-as', authenticatorId: 'a1', clientId: 'openziti', amr: ['pwd'], authTime: 0, scopes: [], configTypeIds: [],
    certFingerprints: null, authCertFingerprint: '', sdkInfo: null, envInfo: null, remoteAddress: '', isCertExtendable: false,
    type: 'a', jti: 'access-1', iat: Math.floor(core.clock.now() / 1000), exp: Math.floor(core.clock.now() / 1000) + 600, isAdmin: false, ...over,
  })
  const service = (over: Partial<VerifiedSessionToken> = {}): VerifiedSessionToken => ({
    sessionId: 'oidc-s', apiSessionId: 'oidc-as', identityId, serviceId: 'svc', type: 'Bind', legacy: false, iat: Math.floor(core.clock.now() / 1000), ...over,
  })

  it('answers the service token\'s session, nothing stored', async () => {
    accessTokens.set('eyaccess', access())
    serviceTokens.set('eyservice', service())
    expect(await check()({ sessionToken: 'eyservice', apiSessionToken: 'eyaccess' }, 'Bind')).toEqual({
      ok: true, session: { sessionId: 'oidc-s', apiSessionId: 'oidc-as', identityId, serviceId: 'svc', type: 'Bind' },
    })
  })

  it('refuses, as internal errors with retry default, a bad access token, a service token of another API session or identity, OIDC off', async () => {
    serviceTokens.set('eyservice', service())
    serviceTokens.set('eyotheras', service({ apiSessionId: 'elsewhere' }))
    serviceTokens.set('eyotherid', service({ identityId: 'someone' }))
    accessTokens.set('eyaccess', access())
    const c = check()
    const internal = refusal(EDGE_ERROR.Internal, RETRY_HINT.Default)
    expect(await c({ sessionToken: 'eyservice', apiSessionToken: 'eyunknown' }, 'Bind')).toEqual(internal)
    expect(await c({ sessionToken: 'eyotheras', apiSessionToken: 'eyaccess' }, 'Bind')).toEqual(internal)
    expect(await c({ sessionToken: 'eyotherid', apiSessionToken: 'eyaccess' }, 'Bind')).toEqual(internal)
    expect(await c({ sessionToken: 'eynothing', apiSessionToken: 'eyaccess' }, 'Bind')).toEqual(internal)
    expect(await check({ accessTokens: undefined })({ sessionToken: 'eyservice', apiSessionToken: 'eyaccess' }, 'Bind')).toEqual(internal)
    await core.identities.ask({ type: 'revocation.create', revocations: [{ id: 'access-1', type: 'JTI', expiresAt: core.clock.now() + 60_000 }], change })
    expect(await c({ sessionToken: 'eyservice', apiSessionToken: 'eyaccess' }, 'Bind')).toEqual(internal)
  })

  it('refuses a Dial session where a Bind one is wanted', async () => {
    accessTokens.set('eyaccess', access())
    serviceTokens.set('eydial', service({ type: 'Dial' }))
    expect(await check()({ sessionToken: 'eydial', apiSessionToken: 'eyaccess' }, 'Bind')).toEqual(refusal(EDGE_ERROR.WrongSessionType, RETRY_HINT.StartOver))
  })
})
