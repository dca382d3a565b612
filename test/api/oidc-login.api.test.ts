// The login half of OIDC sign-in, acting as the C SDK 1.18.2 does on the wire (oidc-and-ha.md §1 login rows,
// "When login is complete", "Auth-query entries"; §2a-2b; traps §7.2-7.5, 7.7): authorize by POST with the
// parameters in the query and an empty body, login/cert over mTLS with a JSON {sdkInfo, envInfo}, the 302 to the
// callback on the controller's host, the callback's 302 to the redirect URI with the code first; password and
// ext-jwt logins; TOTP owed, given, refused (400 INVALID TOTP CODE, counted toward the lockout) and enrolled during
// login; bare {code,message} errors. Every login goes through the legacy login's rules (throttle, policy, disabled
// identities), so those are checked here only as an OIDC client sees them.
// /oidc answers are not edge-API answers: they go through test/support/oidc.ts (fetch, no spec check); everything
// read from the edge APIs goes through the harness's checked clients.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import { SignJWT } from 'jose'
import { AUTH_REQUEST_TTL_MS } from '../../src/flows/oidc/oidc-types.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { authPolicyBody, createPasswordUser } from '../support/auth-policy.ts'
import { enrollNewIdentity, type EnrolledIdentity } from '../support/enroll.ts'
import { makeTestCa } from '../support/pki.ts'
import { followToCode, oidcCall, pathOf, pkcePair, sdkAuthorize, sdkAuthorizeQuery, SDK_REDIRECT_URI, type OidcAnswer } from '../support/oidc.ts'

let srv: TestServer
let device: EnrolledIdentity
let tls: { cert: string; key: string }
beforeAll(async () => {
  srv = await startTestServer()
  device = await enrollNewIdentity(srv, 'oidc-device')
  tls = { cert: device.cert, key: device.key }
})
afterAll(async () => {
  await srv.stop()
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const STEP_MS = 30_000

/** Asserts a bare `{code,message}` error: no `{error,meta}` envelope. */
function expectBare(res: OidcAnswer, status: number, code: string): void {
  if (res.status !== status || res.body?.code !== code) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`)
  expect(typeof res.body.message).toBe('string')
  expect(res.body.error).toBeUndefined()
  expect(res.body.meta).toBeUndefined()
}

/** Asserts a login's 302 to this controller's callback for `id`, with no body and no JSON content type. */
function expectToCallback(res: OidcAnswer, id: string): void {
  if (res.status !== 302) throw new Error(`expected 302, got ${res.status}: ${res.text}`)
  expect(res.location).toBe(`${srv.url}/oidc/authorize/callback?id=${id}`)
  expect(res.headers.get('content-type') ?? '').not.toContain('json')
  expect(res.text).toBe('')
}

/** The redirect-URI query of a 302 that does not carry a code. */
function redirectedError(res: OidcAnswer): URLSearchParams {
  expect(res.status).toBe(302)
  expect(res.location!.startsWith(`${SDK_REDIRECT_URI}?`)).toBe(true)
  return new URL(res.location!).searchParams
}

const certLogin = (id: string, body: unknown = { sdkInfo: { type: 'ziti-sdk-c', version: '1.18.2' }, envInfo: { os: 'Linux', arch: 'x86_64' } }, t = tls) =>
  oidcCall(srv, '/login/cert', { method: 'POST', query: { id }, json: body, tls: t })

let userSeq = 0
async function passwordUser(authPolicyId?: string): Promise<{ id: string; username: string; password: string }> {
  const username = `oidc-user-${++userSeq}`
  const password = 'oidc-pass-1'
  const { id } = await createPasswordUser(srv, username, password, authPolicyId)
  return { id, username, password }
}

async function policy(over: { updb?: Record<string, unknown>; secondary?: Record<string, unknown> }): Promise<string> {
  const base = authPolicyBody(`oidc policy ${++userSeq}`, over.updb ?? {})
  return srv.create('/auth-policies', { ...base, secondary: { ...base.secondary, ...over.secondary } })
}

/** TOTP code of `secret` at the server's clock. */
function totp(secret: string): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: srv.clock.now() })
}

/** Enrolls and verifies a TOTP for a password user through the Client API (legacy session); answers the secret. */
async function enrollTotp(u: { username: string; password: string }): Promise<{ secret: string; recoveryCodes: string[] }> {
  const token = await srv.login(u.username, u.password, 'client')
  const c = srv.as(token, 'client')
  expectStatus(await c.post('/current-identity/mfa', {}), 201)
  const started = (await c.get('/current-identity/mfa')).body.data
  const secret = new URL(started.provisioningUrl).searchParams.get('secret')!
  srv.clock.advance(STEP_MS)
  expectStatus(await c.post('/current-identity/mfa/verify', { code: totp(secret) }), 200)
  srv.clock.advance(STEP_MS)
  return { secret, recoveryCodes: started.recoveryCodes }
}

describe('GET|POST /oidc/authorize', () => {
  it('answers the SDK\'s POST (query only, empty body) with a client certificate: 302 to the cert login', async () => {
    const { challenge } = pkcePair()
    const res = await oidcCall(srv, '/authorize', { method: 'POST', query: sdkAuthorizeQuery(challenge), tls })
    expect(res.status).toBe(302)
    const m = /^\/oidc\/login\/cert\?authRequestID=([^&]+)$/.exec(res.location!)
    expect(m?.[1]).toMatch(UUID)
  })

  it('sends a caller without a client certificate to the username page, GET as POST', async () => {
    const { challenge } = pkcePair()
    for (const method of ['POST', 'GET']) {
      const res = await oidcCall(srv, '/authorize', { method, query: sdkAuthorizeQuery(challenge) })
      expect(res.status).toBe(302)
      expect(res.location).toMatch(/^\/oidc\/login\/username\?authRequestID=[0-9a-f-]{36}$/)
    }
  })

  it('reads the parameters of a POSTed form', async () => {
    const { challenge } = pkcePair()
    const form = sdkAuthorizeQuery(challenge, { method: 'ext-jwt' }) as Record<string, string>
    const res = await oidcCall(srv, '/authorize', { method: 'POST', form })
    expect(res.status).toBe(302)
    expect(res.location).toMatch(/^\/oidc\/login\/ext-jwt\?authRequestID=/)
  })

  it('follows the method asked for: cert without a certificate, username with one', async () => {
    const { challenge } = pkcePair()
    const cert = await oidcCall(srv, '/authorize', { query: sdkAuthorizeQuery(challenge, { method: 'cert' }) })
    expect(cert.location).toMatch(/^\/oidc\/login\/cert\?/)
    const password = await oidcCall(srv, '/authorize', { query: sdkAuthorizeQuery(challenge, { method: 'password' }), tls })
    expect(password.location).toMatch(/^\/oidc\/login\/username\?/)
  })

  it('refuses an unknown client with the OAuth error invalid_client', async () => {
    const { challenge } = pkcePair()
    const res = await oidcCall(srv, '/authorize', { method: 'POST', query: sdkAuthorizeQuery(challenge, { client_id: 'someone' }) })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) })
  })

  it('refuses a foreign or missing redirect URI with 400 invalid_request, never redirecting to it', async () => {
    const { challenge } = pkcePair()
    for (const redirect_uri of ['https://evil.example/auth/callback', 'http://localhost:1@evil.example/auth/callback', undefined]) {
      const res = await oidcCall(srv, '/authorize', { method: 'POST', query: sdkAuthorizeQuery(challenge, { redirect_uri }) })
      expect(res.status).toBe(400)
      expect(res.location).toBeNull()
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) })
    }
  })

  it('accepts every default redirect pattern', async () => {
    const { challenge } = pkcePair()
    for (const redirect_uri of ['openziti://auth/callback', 'https://127.0.0.1:4444/auth/callback', 'http://localhost:9/auth/callback']) {
      const res = await oidcCall(srv, '/authorize', { query: sdkAuthorizeQuery(challenge, { redirect_uri }) })
      expect(res.status).toBe(302)
      expect(res.location).toStartWith('/oidc/login/')
    }
  })

  it('requires PKCE with S256: a missing challenge or the plain method is sent back as invalid_request with the state', async () => {
    const { challenge } = pkcePair()
    for (const over of [{ code_challenge: undefined }, { code_challenge_method: 'plain' }, { code_challenge_method: undefined }]) {
      const query = sdkAuthorizeQuery(challenge, over)
      const q = redirectedError(await oidcCall(srv, '/authorize', { method: 'POST', query }))
      expect(q.get('error')).toBe('invalid_request')
      expect(q.get('state')).toBe(query.state as string)
    }
  })

  it('answers prompt=none with login_required', async () => {
    const { challenge } = pkcePair()
    const q = redirectedError(await oidcCall(srv, '/authorize', { query: sdkAuthorizeQuery(challenge, { prompt: 'none' }) }))
    expect(q.get('error')).toBe('login_required')
  })

  it('refuses a missing scope, one without openid, and another response type', async () => {
    const { challenge } = pkcePair()
    const cases: [Record<string, string | undefined>, string][] = [
      [{ scope: undefined }, 'invalid_request'],
      [{ scope: 'profile email' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
    ]
    for (const [over, error] of cases) {
      const q = redirectedError(await oidcCall(srv, '/authorize', { query: sdkAuthorizeQuery(challenge, over) }))
      expect(q.get('error')).toBe(error)
    }
  })
})

describe('the login pages', () => {
  it('GET /oidc/login/username is an HTML form that escapes the id it echoes', async () => {
    const res = await oidcCall(srv, '/login/username', { query: { authRequestID: '"><script>x</script>' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    expect(res.text).toContain('<form method="post"')
    expect(res.text).not.toContain('<script>')
    expect(res.text).toContain('&#34;&#62;&#60;script&#62;')
  })

  it('GET /oidc/login/cert and /oidc/login/ext-jwt say to POST, with the auth-request-id header', async () => {
    for (const page of ['cert', 'ext-jwt']) {
      const res = await oidcCall(srv, `/login/${page}`, { query: { authRequestID: 'abc' } })
      expect(res.status).toBe(200)
      expect(res.text).toBe('please POST to this URL')
      expect(res.headers.get('auth-request-id')).toBe('abc')
    }
  })
})

describe('certificate login as the C SDK does it', () => {
  it('POST /oidc/login/cert over mTLS → 302 to the callback → 302 to the redirect URI with a URL-safe code, then state', async () => {
    const started = await sdkAuthorize(srv, tls)
    expect(started.location).toStartWith('/oidc/login/cert?authRequestID=')
    const login = await certLogin(started.id)
    expectToCallback(login, started.id)
    const { code, state, location } = await followToCode(srv, login, tls)
    expect(location).toBe(`${SDK_REDIRECT_URI}?code=${code}&state=${started.state}`)
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(state).toBe(started.state)
    // the identity's sdkInfo and envInfo are recorded as the legacy login records them
    const me = await srv.mgmt.get(`/identities/${device.id}`)
    expect(me.body.data.sdkInfo).toMatchObject({ type: 'ziti-sdk-c', version: '1.18.2' })
    expect(me.body.data.envInfo).toMatchObject({ os: 'Linux', arch: 'x86_64' })
  })

  it('takes the id from the body, then from authRequestID in the query', async () => {
    const a = await sdkAuthorize(srv, tls)
    expectToCallback(await oidcCall(srv, '/login/cert', { method: 'POST', json: { id: a.id }, tls }), a.id)
    const b = await sdkAuthorize(srv, tls)
    expectToCallback(await oidcCall(srv, pathOf(b.location), { method: 'POST', json: {}, tls }), b.id)
    // the body's id wins over the query's
    const c = await sdkAuthorize(srv, tls)
    expectToCallback(await oidcCall(srv, '/login/cert', { method: 'POST', query: { id: 'not-this' }, json: { id: c.id }, tls }), c.id)
  })

  it('refuses a login without a client certificate with a bare 401 INVALID_AUTH', async () => {
    const started = await sdkAuthorize(srv)
    expectBare(await oidcCall(srv, '/login/cert', { method: 'POST', query: { id: started.id }, json: {} }), 401, 'INVALID_AUTH')
  })

  it('refuses an unknown auth request with a bare 401 UNAUTHORIZED', async () => {
    expectBare(await certLogin('00000000-0000-4000-8000-000000000000'), 401, 'UNAUTHORIZED')
    expectBare(await oidcCall(srv, '/login/cert', { method: 'POST', tls }), 401, 'UNAUTHORIZED')
  })

  it('refuses a body that is neither JSON nor a form with a bare 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const started = await sdkAuthorize(srv, tls)
    const res = await oidcCall(srv, '/login/cert', { method: 'POST', query: { id: started.id }, rawBody: 'hello', headers: { 'content-type': 'text/plain' }, tls })
    expectBare(res, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('refuses an sdkInfo that is not an object with a bare 400', async () => {
    const started = await sdkAuthorize(srv, tls)
    expectBare(await certLogin(started.id, { sdkInfo: 'x' }), 400, 'COULD_NOT_VALIDATE')
  })

  it('refuses a disabled identity with 401 INVALID_AUTH', async () => {
    const other = await enrollNewIdentity(srv, 'oidc-disabled-device')
    expectStatus(await srv.mgmt.post(`/identities/${other.id}/disable`, { durationMinutes: 0 }), 200)
    const started = await sdkAuthorize(srv, other)
    expectBare(await certLogin(started.id, {}, other), 401, 'INVALID_AUTH')
  })

  it('refuses a certificate login the identity\'s policy does not allow', async () => {
    const base = authPolicyBody(`oidc no-cert ${++userSeq}`)
    const policyId = await srv.create('/auth-policies', { ...base, primary: { ...base.primary, cert: { allowed: false, allowExpiredCerts: true } } })
    const other = await enrollNewIdentity(srv, 'oidc-no-cert-device', 'ec-p256', { authPolicyId: policyId })
    const started = await sdkAuthorize(srv, other)
    expectBare(await certLogin(started.id, {}, other), 401, 'INVALID_AUTH')
  })
})

describe('the callback', () => {
  it('sends a request not yet logged in back with interaction_required and its state', async () => {
    const started = await sdkAuthorize(srv, tls)
    const res = await oidcCall(srv, '/authorize/callback', { query: { id: started.id } })
    const q = redirectedError(res)
    expect(q.get('error')).toBe('interaction_required')
    expect(q.get('state')).toBe(started.state)
  })

  it('answers an unknown id with 400 plain text', async () => {
    const res = await oidcCall(srv, '/authorize/callback', { query: { id: 'nope' } })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toStartWith('text/plain')
  })

  it('leaves state out when authorize had none', async () => {
    const started = await sdkAuthorize(srv, tls, { state: undefined })
    const { location, code } = await followToCode(srv, await certLogin(started.id), tls)
    expect(location).toBe(`${SDK_REDIRECT_URI}?code=${code}`)
  })

  it('refuses a request after its 10 minutes: login 401 UNAUTHORIZED, callback 400', async () => {
    const started = await sdkAuthorize(srv, tls)
    srv.clock.advance(AUTH_REQUEST_TTL_MS)
    expectBare(await certLogin(started.id), 401, 'UNAUTHORIZED')
    expect((await oidcCall(srv, '/authorize/callback', { query: { id: started.id } })).status).toBe(400)
  })
})

describe('password login', () => {
  it('logs in with JSON and with a form (login/password and login/username)', async () => {
    const u = await passwordUser()
    const a = await sdkAuthorize(srv)
    expectToCallback(await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: u.password } }), a.id)
    const b = await sdkAuthorize(srv)
    const form = { id: b.id, username: u.username, password: u.password, sdkType: 'form-sdk', envOs: 'plan9' }
    const login = await oidcCall(srv, '/login/username', { method: 'POST', form })
    expectToCallback(login, b.id)
    const { state } = await followToCode(srv, login)
    expect(state).toBe(b.state)
    const me = await srv.mgmt.get(`/identities/${u.id}`)
    expect(me.body.data.sdkInfo).toMatchObject({ type: 'form-sdk' })
    expect(me.body.data.envInfo).toMatchObject({ os: 'plan9' })
  })

  it('refuses a wrong password with a bare 401 INVALID_AUTH', async () => {
    const u = await passwordUser()
    const a = await sdkAuthorize(srv)
    expectBare(await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: 'wrong-pass' } }), 401, 'INVALID_AUTH')
    // the request is still open: the right password then completes it
    expectToCallback(await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: u.password } }), a.id)
  })

  it('passes the failed-login throttle of POST /authenticate: a guessed username is refused with a bare 429 and Retry-After', async () => {
    const u = await passwordUser()
    const a = await sdkAuthorize(srv)
    const attempt = (password: string) => oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password } })
    let res: OidcAnswer | undefined
    for (let i = 0; i < 10; i++) {
      res = await attempt(`wrong-pass-${i}`)
      if (res.status !== 401) break
    }
    expectBare(res!, 429, 'SERVER_TOO_MANY_REQUESTS')
    expect(Number(res!.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  it('answers a missing password with a bare 400 COULD_NOT_VALIDATE', async () => {
    const a = await sdkAuthorize(srv)
    expectBare(await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: 'x' } }), 400, 'COULD_NOT_VALIDATE')
  })
})

describe('ext-jwt login', () => {
  const AUDIENCE = 'oidc-tests'
  const nowS = () => Math.floor(srv.clock.now() / 1000)
  let signer: { id: string; issuer: string; key: CryptoKey }
  beforeAll(async () => {
    const ca = await makeTestCa({ commonName: 'oidc ext-jwt', clock: srv.clock })
    const issuer = 'https://idp.oidc.test'
    const id = await srv.create('/external-jwt-signers', { name: 'oidc-signer', enabled: true, issuer, audience: AUDIENCE, certPem: ca.certPem })
    signer = { id, issuer, key: ca.keyPair.privateKey }
  })
  const tokenFor = (sub: string) =>
    new SignJWT({ iss: signer.issuer, aud: AUDIENCE, sub, iat: nowS(), exp: nowS() + 300 }).setProtectedHeader({ alg: 'ES256' }).sign(signer.key)

  it('logs in with Authorization: Bearer <external JWT>', async () => {
    const id = await srv.create('/identities', { name: 'oidc-jwt-user', type: 'User', isAdmin: false })
    const a = await sdkAuthorize(srv, undefined, { method: 'ext-jwt' })
    expect(a.location).toStartWith('/oidc/login/ext-jwt?')
    const login = await oidcCall(srv, '/login/ext-jwt', { method: 'POST', query: { id: a.id }, json: {}, headers: { authorization: `Bearer ${await tokenFor(id)}` } })
    expectToCallback(login, a.id)
    await followToCode(srv, login)
  })

  it('refuses a missing token with a bare 401 UNAUTHORIZED and the primary ext-jwt challenge', async () => {
    const a = await sdkAuthorize(srv)
    const res = await oidcCall(srv, '/login/ext-jwt', { method: 'POST', query: { id: a.id }, json: {} })
    expectBare(res, 401, 'UNAUTHORIZED')
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer realm="openziti-primary-ext-jwt"')
  })

  it('owes the EXT-JWT auth query when the policy requires the signer and its token is missing; with it the login is done', async () => {
    const policyId = await policy({ secondary: { requireExtJwtSigner: signer.id } })
    const other = await enrollNewIdentity(srv, 'oidc-ejs-device', 'ec-p256', { authPolicyId: policyId })
    const a = await sdkAuthorize(srv, other)
    const owed = await certLogin(a.id, {}, other)
    expect(owed.status).toBe(200)
    expect(owed.headers.get('totp-required')).toBeNull()
    expect(owed.body).toEqual({ authQueries: [{ typeId: 'EXT-JWT', provider: 'url', httpUrl: '', clientId: '', scopes: [], id: signer.id }] })
    // the callback gives no code yet
    expect(redirectedError(await oidcCall(srv, '/authorize/callback', { query: { id: a.id } })).get('error')).toBe('interaction_required')
    const login = await oidcCall(srv, '/login/cert', { method: 'POST', query: { id: a.id }, json: {}, tls: other, headers: { authorization: `Bearer ${await tokenFor(other.id)}` } })
    expectToCallback(login, a.id)
  })
})

describe('TOTP at login', () => {
  it('owes TOTP when the identity has one: 200 authQueries and totp-required; a wrong code is 400 INVALID TOTP CODE; the right one is a 302', async () => {
    const u = await passwordUser()
    const { secret } = await enrollTotp(u)
    const a = await sdkAuthorize(srv)
    const login = await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: u.password } })
    expect(login.status).toBe(200)
    expect(login.headers.get('totp-required')).toBe('true')
    expect(login.body).toEqual({
      authQueries: [{ typeId: 'TOTP', provider: 'ziti', format: 'numeric', httpMethod: 'POST', httpUrl: './oidc/login/totp', minLength: 6, maxLength: 8, isTotpEnrolled: true }],
    })
    // the auth queries can be read again
    const queries = await oidcCall(srv, '/login/auth-queries', { query: { id: a.id } })
    expect(queries.status).toBe(200)
    expect(queries.body).toEqual(login.body)
    expect(queries.headers.get('totp-required')).toBe('true')
    // no code before the TOTP
    expect(redirectedError(await oidcCall(srv, '/authorize/callback', { query: { id: a.id } })).get('error')).toBe('interaction_required')

    const wrong = await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: '000000' === totp(secret) ? '111111' : '000000' } })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toEqual({ code: 'INVALID TOTP CODE', message: 'an invalid TOTP code was supplied' })
    const right = await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: totp(secret) } })
    expectToCallback(right, a.id)
    await followToCode(srv, right)
  })

  it('starts the factors again when another identity logs in on the same request', async () => {
    const first = await passwordUser()
    const second = await passwordUser()
    const { secret } = await enrollTotp(first)
    await enrollTotp(second)
    const a = await sdkAuthorize(srv)
    const loginAs = (u: { username: string; password: string }) =>
      oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: u.password } })
    expect((await loginAs(first)).status).toBe(200)
    expectToCallback(await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: totp(secret) } }), a.id)
    // the first identity's TOTP is not the second's
    const again = await loginAs(second)
    expect(again.status).toBe(200)
    expect(again.headers.get('totp-required')).toBe('true')
    expect(redirectedError(await oidcCall(srv, '/authorize/callback', { query: { id: a.id } })).get('error')).toBe('interaction_required')
    // the same identity logging in again keeps what it gave
    const b = await sdkAuthorize(srv)
    const loginB = () => oidcCall(srv, '/login/password', { method: 'POST', json: { id: b.id, username: first.username, password: first.password } })
    expect((await loginB()).status).toBe(200)
    srv.clock.advance(STEP_MS)
    expectToCallback(await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: b.id, code: totp(secret) } }), b.id)
    expectToCallback(await loginB(), b.id)
  })

  it('accepts a recovery code, as JSON', async () => {
    const u = await passwordUser()
    const { recoveryCodes } = await enrollTotp(u)
    const a = await sdkAuthorize(srv)
    expect((await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: u.password } })).status).toBe(200)
    expectToCallback(await oidcCall(srv, '/login/totp', { method: 'POST', json: { id: a.id, code: recoveryCodes[0] } }), a.id)
  })

  it('answers every other failure with the same 400: unknown request, no login yet, no TOTP record, an over-long code', async () => {
    const invalid = { code: 'INVALID TOTP CODE', message: 'an invalid TOTP code was supplied' }
    const unknown = await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: '00000000-0000-4000-8000-000000000000', code: '123456' } })
    expect([unknown.status, unknown.body]).toEqual([400, invalid])
    const a = await sdkAuthorize(srv, tls)
    const early = await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: '123456' } })
    expect([early.status, early.body]).toEqual([400, invalid])
    expectToCallback(await certLogin(a.id), a.id)
    const noRecord = await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: '123456' } })
    expect([noRecord.status, noRecord.body]).toEqual([400, invalid])
    const long = await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: '12345678901234' } })
    expect([long.status, long.body]).toEqual([400, invalid])
  })

  it('counts a wrong code toward the lockout of the identity\'s policy', async () => {
    const policyId = await policy({ updb: { maxAttempts: 2, lockoutDurationMinutes: 0 } })
    const u = await passwordUser(policyId)
    const { secret } = await enrollTotp(u)
    const a = await sdkAuthorize(srv)
    expect((await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: u.password } })).status).toBe(200)
    const wrongCode = totp(secret) === '000000' ? '111111' : '000000'
    for (let i = 0; i < 2; i++) expect((await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: wrongCode } })).status).toBe(400)
    const me = await srv.mgmt.get(`/identities/${u.id}`)
    expect(me.body.data.disabled).toBe(true)
    // locked out: even the right code no longer completes the login
    expect((await oidcCall(srv, '/login/totp', { method: 'POST', form: { id: a.id, code: totp(secret) } })).status).toBe(400)
  })

  it('enrolls a TOTP during login when the policy requires one (DELETE, POST enroll 201, verify 302)', async () => {
    const policyId = await policy({ secondary: { requireTotp: true } })
    const u = await passwordUser(policyId)
    const a = await sdkAuthorize(srv)
    const login = await oidcCall(srv, '/login/password', { method: 'POST', json: { id: a.id, username: u.username, password: u.password } })
    expect(login.status).toBe(200)
    expect(login.headers.get('totp-required')).toBe('true')
    expect(login.body.authQueries[0]).toMatchObject({ typeId: 'TOTP', isTotpEnrolled: false })
    // the SDK first deletes any enrolment (form content type, empty body); with none there is nothing to delete
    const del = await oidcCall(srv, '/login/totp/enroll', { method: 'DELETE', query: { id: a.id }, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expectBare(del, 404, 'NOT_FOUND')
    const enroll = await oidcCall(srv, '/login/totp/enroll', { method: 'POST', form: { id: a.id } })
    expect(enroll.status).toBe(201)
    expect(enroll.body).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      isVerified: false,
      provisioningUrl: expect.stringMatching(/^otpauth:\/\/totp\//),
      recoveryCodes: expect.any(Array),
    })
    expect(enroll.body.recoveryCodes).toHaveLength(20)
    // a second start while one exists is refused as the MFA flows refuse it
    expectBare(await oidcCall(srv, '/login/totp/enroll', { method: 'POST', form: { id: a.id } }), 409, 'MFA_EXISTS')
    // a Started enrolment deletes without a code, and can be started again
    expect((await oidcCall(srv, '/login/totp/enroll', { method: 'DELETE', query: { id: a.id } })).status).toBe(200)
    const again = await oidcCall(srv, '/login/totp/enroll', { method: 'POST', form: { id: a.id } })
    expect(again.status).toBe(201)
    const secret = new URL(again.body.provisioningUrl).searchParams.get('secret')!
    expectBare(await oidcCall(srv, '/login/totp/enroll/verify', { method: 'POST', form: { id: a.id, code: totp(secret) === '000000' ? '111111' : '000000' } }), 401, 'MFA_INVALID_TOKEN')
    const verify = await oidcCall(srv, '/login/totp/enroll/verify', { method: 'POST', form: { id: a.id, code: totp(secret) } })
    expectToCallback(verify, a.id)
    await followToCode(srv, verify)
    expect((await srv.mgmt.get(`/identities/${u.id}`)).body.data.isMfaEnabled).toBe(true)
  })

  it('refuses enrolment for a request with no login yet, or an unknown one, with a bare 401 UNAUTHORIZED', async () => {
    const a = await sdkAuthorize(srv)
    expectBare(await oidcCall(srv, '/login/totp/enroll', { method: 'POST', form: { id: a.id } }), 401, 'UNAUTHORIZED')
    expectBare(await oidcCall(srv, '/login/totp/enroll/verify', { method: 'POST', form: { id: 'nope', code: '123456' } }), 401, 'UNAUTHORIZED')
  })

  it('GET /oidc/login/auth-queries: an empty list for a completed login, 401 plain text for an unknown id', async () => {
    const a = await sdkAuthorize(srv, tls)
    expectToCallback(await certLogin(a.id), a.id)
    const done = await oidcCall(srv, '/login/auth-queries', { query: { id: a.id } })
    expect([done.status, done.body]).toEqual([200, { authQueries: [] }])
    expect(done.headers.get('totp-required')).toBeNull()
    const unknown = await oidcCall(srv, '/login/auth-queries', { query: { id: 'nope' } })
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get('content-type')).toStartWith('text/plain')
  })
})
