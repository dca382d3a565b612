// TOTP MFA of the current identity and the session's second factor, on both APIs: every row of the seed's "TOTP
// enrollment of the current identity" table and the TOTP rows of its "API session authentication" table, with the
// real controller's answers (controller-behaviour.md §4 authQueries, §5). Stricter than the real controller, after
// RFC 6238 §5.2: a TOTP code is accepted once (a replay inside its window is refused) and only within one step of
// now; each recovery code works once. The secret and the recovery codes are stored sealed, and the recovery codes can
// be read again (after a TOTP code). Wrong codes are 401 MFA_INVALID_TOKEN (the seed).
// Codes come from a real TOTP generator (otpauth) at the fake clock's time.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Secret, TOTP } from 'otpauth'
import { PNG } from 'pngjs'
import jsQR from 'jsqr'
import { TOTP_AUTH_QUERY } from '../../src/flows/authenticate/auth-api-session.ts'
import { authPolicyBody } from '../support/auth-policy.ts'
import { AUTH_MFA_401_OFF_SPEC, expectError, expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'

let t: TestServer
beforeAll(async () => {
  t = await startTestServer()
})
afterAll(async () => {
  await t.stop()
})

// the values of the reference (§4 authQueries), pinned in 'login answers a partial session…' below
const TOTP_QUERY = TOTP_AUTH_QUERY
const STEP_MS = 30_000

let userCount = 0
interface User {
  id: string
  name: string
  username: string
  password: string
}

/** A new identity with a password, not admin. */
async function newUser(): Promise<User> {
  const name = `mfa-user-${++userCount}`
  const id = await t.create('/identities', { name, type: 'User', isAdmin: false })
  const username = `${name}-login`
  const password = 'mfa-pass-1'
  expectStatus(await t.mgmt.post('/authenticators', { identityId: id, method: 'updb', username, password }), 201)
  return { id, name, username, password }
}

async function loginAs(u: User, api: 'client' | 'management' = 'client') {
  const res = await t.raw.post(`/edge/${api}/v1/authenticate?method=password`, { username: u.username, password: u.password })
  expectStatus(res, 200)
  return { client: t.as(res.body.data.token, api), session: res.body.data }
}

/** The secret of a Started enrollment, from its provisioning URL. */
async function secretOf(c: ApiClient): Promise<string> {
  const res = await c.get('/current-identity/mfa')
  expectStatus(res, 200)
  return new URL(res.body.data.provisioningUrl).searchParams.get('secret')!
}

/** The TOTP code of `secret` `steps` time steps from the fake clock's now. */
function totp(secret: string, steps = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now() + steps * STEP_MS })
}

/** Moves the fake clock to the next time step, so a fresh code can be accepted. */
function nextStep(): void {
  t.clock.advance(STEP_MS)
}

/** Starts and verifies an MFA for `u` on a session of `api`; answers the secret, the recovery codes and that session. */
async function enrolled(u: User, api: 'client' | 'management' = 'client') {
  const { client } = await loginAs(u, api)
  expectStatus(await client.post('/current-identity/mfa', {}), 201)
  const started = (await client.get('/current-identity/mfa')).body.data
  const secret = new URL(started.provisioningUrl).searchParams.get('secret')!
  nextStep()
  expectStatus(await client.post('/current-identity/mfa/verify', { code: totp(secret) }), 200)
  return { secret, recoveryCodes: started.recoveryCodes as string[], client }
}

/** POST /authenticate/mfa with `code`, expecting the refusal 401 MFA_INVALID_TOKEN. */
async function expectMfaRefused(c: ApiClient, code: string): Promise<void> {
  expectError(await c('POST', '/authenticate/mfa', { body: { code }, offSpec: AUTH_MFA_401_OFF_SPEC }), 401, 'MFA_INVALID_TOKEN')
}

/** The PNG answer of the QR code route: status, content type and bytes. */
async function qrCode(token: string, api = 'client') {
  const res = await fetch(`${t.url}/edge/${api}/v1/current-identity/mfa/qr-code`, { headers: { 'zt-session': token }, tls: { ca: t.caPem } } as RequestInit)
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) }
}

describe('TOTP enrollment: Not started', () => {
  it('GET /current-identity/mfa is 404, and so are the QR code, recovery codes and delete', async () => {
    const { client } = await loginAs(await newUser())
    expectError(await client.get('/current-identity/mfa'), 404, 'NOT_FOUND')
    expect((await qrCode(client.session!)).status).toBe(404)
    expectError(await client.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': '123456' } }), 404, 'NOT_FOUND')
    expectError(await client.post('/current-identity/mfa/recovery-codes', { code: '123456' }), 404, 'NOT_FOUND')
    expectError(await client.post('/current-identity/mfa/verify', { code: '123456' }), 404, 'NOT_FOUND')
    expectError(await client.del('/current-identity/mfa'), 404, 'NOT_FOUND')
  })

  it('POST /authenticate/mfa without an MFA is 409 MFA_NOT_ENROLLED', async () => {
    const { client } = await loginAs(await newUser())
    expectError(await client.post('/authenticate/mfa', { code: '123456' }), 409, 'MFA_NOT_ENROLLED')
  })
})

describe('TOTP enrollment: Not started → Started (POST /current-identity/mfa)', () => {
  for (const api of ['client', 'management'] as const) {
    it(`answers 201 and makes the provisioning URL and 20 recovery codes readable on the ${api} API`, async () => {
      const u = await newUser()
      const { client } = await loginAs(u, api)
      const res = await client.post('/current-identity/mfa', {})
      expectStatus(res, 201)
      expect(res.body.data.id).toBeString()
      expect(res.body.data._links.self.href).toBe('./current-identity/mfa')
      const got = await client.get('/current-identity/mfa')
      expectStatus(got, 200)
      const d = got.body.data
      expect(d.id).toBe(res.body.data.id)
      expect(d.isVerified).toBe(false)
      expect(d.provisioningUrl).toMatch(new RegExp(`^otpauth://totp/openziti\\.io:${u.name}\\?issuer=openziti\\.io&secret=[A-Z2-7]{16}$`))
      expect(d.recoveryCodes).toHaveLength(20)
      expect(new Set(d.recoveryCodes).size).toBe(20)
      for (const c of d.recoveryCodes) expect(c).toMatch(/^[A-Z2-7]{6}$/)
      // not enabled until verified
      expect((await t.mgmt.get(`/identities/${u.id}`)).body.data.isMfaEnabled).toBe(false)
    })
  }

  it('refuses a second start while Started with 409 MFA_EXISTS', async () => {
    const { client } = await loginAs(await newUser())
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    expectError(await client.post('/current-identity/mfa', {}), 409, 'MFA_EXISTS')
  })

  it('draws the provisioning URL as a 256×256 PNG QR code while Started', async () => {
    const { client } = await loginAs(await newUser())
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    const url = (await client.get('/current-identity/mfa')).body.data.provisioningUrl
    for (const api of ['client', 'management']) {
      const qr = await qrCode(client.session!, api)
      expect(qr.status).toBe(200)
      expect(qr.type).toBe('image/png')
      expect([...qr.bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
      const png = PNG.sync.read(Buffer.from(qr.bytes))
      expect([png.width, png.height]).toEqual([256, 256])
      expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(url)
    }
  })
})

describe('TOTP enrollment: Started → Verified (POST /current-identity/mfa/verify)', () => {
  it('refuses a recovery code, a wrong code and a code two steps old with 401 MFA_INVALID_TOKEN', async () => {
    const { client } = await loginAs(await newUser())
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    const started = (await client.get('/current-identity/mfa')).body.data
    const secret = await secretOf(client)
    expectError(await client.post('/current-identity/mfa/verify', { code: started.recoveryCodes[0] }), 401, 'MFA_INVALID_TOKEN')
    const wrong = String((Number(totp(secret)) + 1) % 1_000_000).padStart(6, '0')
    expectError(await client.post('/current-identity/mfa/verify', { code: wrong }), 401, 'MFA_INVALID_TOKEN')
    expectError(await client.post('/current-identity/mfa/verify', { code: totp(secret, -2) }), 401, 'MFA_INVALID_TOKEN')
    expectError(await client.post('/current-identity/mfa/verify', { code: '' }), 401, 'MFA_INVALID_TOKEN')
    expect((await client.get('/current-identity/mfa')).body.data.isVerified).toBe(false)
  })

  it('accepts the current TOTP code: then GET shows only isVerified, the QR code is gone, isMfaEnabled is true', async () => {
    const u = await newUser()
    const { client } = await loginAs(u)
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    const secret = await secretOf(client)
    const res = await client.post('/current-identity/mfa/verify', { code: totp(secret) })
    expectStatus(res, 200)
    expect(res.body).toEqual({ data: {}, meta: {} })
    const d = (await client.get('/current-identity/mfa')).body.data
    expect(d.isVerified).toBe(true)
    expect(d.provisioningUrl).toBeUndefined()
    expect(d.recoveryCodes).toBeUndefined()
    expect((await qrCode(client.session!)).status).toBe(404)
    expect((await t.mgmt.get(`/identities/${u.id}`)).body.data.isMfaEnabled).toBe(true)
    expect((await client.get('/current-identity')).body.data.isMfaEnabled).toBe(true)
    expect((await t.mgmt.get(`/identities?filter=${encodeURIComponent(`id="${u.id}"`)}`)).body.data[0].isMfaEnabled).toBe(true)
    // verifying again: nothing is Started any more
    nextStep()
    expectError(await client.post('/current-identity/mfa/verify', { code: totp(secret) }), 404, 'NOT_FOUND')
  })

  it('accepts a code of the step before or after now (window ±1)', async () => {
    for (const steps of [-1, 1]) {
      const { client } = await loginAs(await newUser())
      expectStatus(await client.post('/current-identity/mfa', {}), 201)
      expectStatus(await client.post('/current-identity/mfa/verify', { code: totp(await secretOf(client), steps) }), 200)
    }
  })

  it('completes the session it was verified on (isMfaRequired and isMfaComplete true, no query)', async () => {
    const { client } = await loginAs(await newUser())
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    expectStatus(await client.post('/current-identity/mfa/verify', { code: totp(await secretOf(client)) }), 200)
    const s = (await client.get('/current-api-session')).body.data
    expect([s.isMfaRequired, s.isMfaComplete, s.authQueries]).toEqual([true, true, []])
  })
})

describe('TOTP enrollment: Started → Not started (DELETE /current-identity/mfa)', () => {
  it('abandons the enrollment without a code, so a new one can begin', async () => {
    const { client } = await loginAs(await newUser())
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    const first = await secretOf(client)
    expectStatus(await client.del('/current-identity/mfa'), 200)
    expectError(await client.get('/current-identity/mfa'), 404, 'NOT_FOUND')
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    expect(await secretOf(client)).not.toBe(first)
  })
})

describe('TOTP enrollment: Verified', () => {
  it('refuses a new start with 409 MFA_EXISTS', async () => {
    const { client } = await enrolled(await newUser())
    expectError(await client.post('/current-identity/mfa', {}), 409, 'MFA_EXISTS')
  })

  it('DELETE needs a valid code: none or a wrong one is 401 MFA_INVALID_TOKEN and keeps the MFA', async () => {
    const { client } = await enrolled(await newUser())
    expectError(await client.del('/current-identity/mfa'), 401, 'MFA_INVALID_TOKEN')
    expectError(await client.del('/current-identity/mfa', { headers: { 'mfa-validation-code': '000000' } }), 401, 'MFA_INVALID_TOKEN')
    expectError(await client.del('/current-identity/mfa', { body: { code: 'AAAAAA' } }), 401, 'MFA_INVALID_TOKEN')
    expect((await client.get('/current-identity/mfa')).body.data.isVerified).toBe(true)
  })

  it('DELETE with a TOTP code in the mfa-validation-code header → Not started', async () => {
    const u = await newUser()
    const { client, secret } = await enrolled(u)
    nextStep()
    expectStatus(await client.del('/current-identity/mfa', { headers: { 'mfa-validation-code': totp(secret) } }), 200)
    expectError(await client.get('/current-identity/mfa'), 404, 'NOT_FOUND')
    expect((await t.mgmt.get(`/identities/${u.id}`)).body.data.isMfaEnabled).toBe(false)
    // later logins owe no second factor
    expect((await loginAs(u)).session.authQueries).toEqual([])
  })

  it('DELETE with a recovery code in the body code (the seed) → Not started', async () => {
    const { client, recoveryCodes } = await enrolled(await newUser())
    expectStatus(await client.del('/current-identity/mfa', { body: { code: recoveryCodes[5] } }), 200)
    expectError(await client.get('/current-identity/mfa'), 404, 'NOT_FOUND')
  })

  it('POST recovery-codes with a valid code replaces all 20 and answers the new ones; the old ones stop working', async () => {
    const u = await newUser()
    const { client, secret, recoveryCodes } = await enrolled(u)
    nextStep()
    const res = await client.post('/current-identity/mfa/recovery-codes', { code: totp(secret) })
    expectStatus(res, 200)
    const fresh = res.body.data.recoveryCodes as string[]
    expect(fresh).toHaveLength(20)
    for (const c of fresh) expect(c).toMatch(/^[A-Z2-7]{6}$/)
    const partial = (await loginAs(u)).client
    const old = recoveryCodes.find((c) => !fresh.includes(c))!
    await expectMfaRefused(partial, old)
    expectStatus(await partial.post('/authenticate/mfa', { code: fresh[0] }), 200)
    // a recovery code regenerates too
    expectStatus(await client.post('/current-identity/mfa/recovery-codes', { code: fresh[1] }), 200)
  })

  it('POST recovery-codes refuses a wrong code with 401 MFA_INVALID_TOKEN; while Started it is 404', async () => {
    const { client } = await enrolled(await newUser())
    expectError(await client.post('/current-identity/mfa/recovery-codes', { code: '000000' }), 401, 'MFA_INVALID_TOKEN')
    const started = (await loginAs(await newUser())).client
    expectStatus(await started.post('/current-identity/mfa', {}), 201)
    expectError(await started.post('/current-identity/mfa/recovery-codes', { code: '000000' }), 404, 'NOT_FOUND')
    expectError(await started.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': '000000' } }), 404, 'NOT_FOUND')
  })

  it('GET recovery-codes needs a TOTP code (header or body): a recovery code or none is 401', async () => {
    const { client, secret, recoveryCodes } = await enrolled(await newUser())
    expectError(await client.get('/current-identity/mfa/recovery-codes'), 401, 'MFA_INVALID_TOKEN')
    expectError(await client.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': recoveryCodes[0] } }), 401, 'MFA_INVALID_TOKEN')
    nextStep()
    const res = await client.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': totp(secret) } })
    expectStatus(res, 200)
    expect(res.body.data.recoveryCodes).toEqual(recoveryCodes)
    expect(res.body.data.id).toBe((await client.get('/current-identity/mfa')).body.data.id)
  })
})

describe('recovery codes: readable on both APIs, regenerated, sealed at rest', () => {
  /** GET recovery-codes with a fresh TOTP code in the header: the codes answered. */
  async function readCodes(client: ApiClient, secret: string): Promise<string[]> {
    nextStep()
    const res = await client.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': totp(secret) } })
    expectStatus(res, 200)
    return res.body.data.recoveryCodes as string[]
  }

  for (const api of ['client', 'management'] as const) {
    it(`${api} API: GET answers the unused codes; POST replaces them, answers the new ones, and GET answers those; a new code logs in once, an old one never`, async () => {
      const u = await newUser()
      const { client, secret, recoveryCodes } = await enrolled(u, api)
      expect(recoveryCodes).toHaveLength(20)
      expect(await readCodes(client, secret)).toEqual(recoveryCodes)
      // a code used to log in is gone from the list
      expectStatus(await (await loginAs(u, api)).client.post('/authenticate/mfa', { code: recoveryCodes[2] }), 200)
      expect(await readCodes(client, secret)).toEqual(recoveryCodes.filter((c) => c !== recoveryCodes[2]))

      nextStep()
      const regenerated = await client.post('/current-identity/mfa/recovery-codes', { code: totp(secret) })
      expectStatus(regenerated, 200)
      const fresh = regenerated.body.data.recoveryCodes as string[]
      expect(fresh).toHaveLength(20)
      expect(new Set(fresh).size).toBe(20)
      expect(await readCodes(client, secret)).toEqual(fresh)

      const partial = (await loginAs(u, api)).client
      await expectMfaRefused(partial, recoveryCodes.find((c) => !fresh.includes(c))!)
      expectStatus(await partial.post('/authenticate/mfa', { code: fresh[7] }), 200)
      await expectMfaRefused((await loginAs(u, api)).client, fresh[7]!)
      expect(await readCodes(client, secret)).toEqual(fresh.filter((c) => c !== fresh[7]))
    })
  }

  it('the LMDB file holds no TOTP secret (base32 or raw bytes) and no recovery code, Started or Verified, nor after regeneration', async () => {
    const verified = await enrolled(await newUser())
    nextStep()
    const regenerated = (await verified.client.post('/current-identity/mfa/recovery-codes', { code: totp(verified.secret) })).body.data.recoveryCodes as string[]
    const started = (await loginAs(await newUser())).client
    expectStatus(await started.post('/current-identity/mfa', {}), 201)
    const startedView = (await started.get('/current-identity/mfa')).body.data
    const startedSecret = new URL(startedView.provisioningUrl).searchParams.get('secret')!
    const bytes = readFileSync(join(t.dataDir, 'edgeplane.mdb'))
    const text = bytes.toString('latin1')
    for (const secret of [verified.secret, startedSecret]) {
      expect(text.includes(secret)).toBe(false)
      expect(bytes.indexOf(Buffer.from(Secret.fromBase32(secret).bytes))).toBe(-1)
    }
    // a code stands alone in the file if stored plain (a JSON string); inside base64 it would be part of a longer run
    const standsAlone = (code: string) => new RegExp(`(?<![A-Za-z0-9+/])${code}(?![A-Za-z0-9+/=])`).test(text)
    for (const code of [...verified.recoveryCodes, ...regenerated, ...(startedView.recoveryCodes as string[])]) expect(standsAlone(code)).toBe(false)
    // the check can fail: it finds what is stored plain, such as an identity's name
    expect(standsAlone('mfa-user-1')).toBe(true)
  })

  it('the sealing key is pki/secrets.key: 32 bytes, mode 0600, beside the CA keys', () => {
    const st = statSync(join(t.dataDir, 'pki', 'secrets.key'))
    expect([st.size, (st.mode & 0o777).toString(8)]).toEqual([32, '600'])
  })
})

describe('POST /current-api-session/totp-token', () => {
  it('refuses a zt-session (legacy) session with 400 INVALID_BACKING_TOKEN_TYPE, as the real controller does', async () => {
    const u = await newUser()
    const { client, secret } = await enrolled(u)
    nextStep()
    for (const api of ['client', 'management'] as const) {
      const c = t.as(client.session, api)
      expectError(await c.post('/current-api-session/totp-token', { code: totp(secret) }), 400, 'INVALID_BACKING_TOKEN_TYPE')
    }
  })
})

describe('the mfa-validation-code header in browsers', () => {
  it('is allowed by the CORS preflight', async () => {
    const res = await t.raw('OPTIONS', '/edge/client/v1/current-identity/mfa', {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'mfa-validation-code' },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-headers')).toContain('mfa-validation-code')
  })
})

describe('DELETE /identities/{id}/mfa (Management, admin)', () => {
  it('removes a Started or a Verified MFA without a code; 404 when there is none', async () => {
    const started = await newUser()
    expectStatus(await (await loginAs(started)).client.post('/current-identity/mfa', {}), 201)
    const verified = await newUser()
    await enrolled(verified)
    for (const u of [started, verified]) {
      expectStatus(await t.mgmt.del(`/identities/${u.id}/mfa`), 200)
      expectError(await (await loginAs(u)).client.get('/current-identity/mfa'), 404, 'NOT_FOUND')
      expectError(await t.mgmt.del(`/identities/${u.id}/mfa`), 404, 'NOT_FOUND')
    }
    expectError(await t.mgmt.del('/identities/no-such-identity/mfa'), 404, 'NOT_FOUND')
  })

  it('is for admins only: 401 for another identity', async () => {
    const u = await newUser()
    await enrolled(u)
    const other = await loginAs(await newUser(), 'management')
    expectError(await other.client.del(`/identities/${u.id}/mfa`), 401, 'UNAUTHORIZED')
  })
})

describe('API session authentication with a verified TOTP', () => {
  it('login answers a partial session with the TOTP authQuery, on both APIs', async () => {
    const u = await newUser()
    await enrolled(u)
    for (const api of ['client', 'management'] as const) {
      const { client, session } = await loginAs(u, api)
      expect([session.isMfaRequired, session.isMfaComplete]).toEqual([true, false])
      expect(session.authQueries).toEqual([TOTP_QUERY])
      const q = session.authQueries[0]
      expect([q.typeId, q.provider, q.format, q.httpMethod, q.httpUrl, q.minLength, q.maxLength]).toEqual(
        ['MFA', 'ziti', 'alphaNumeric', 'POST', './authenticate/mfa', 4, 6],
      )
      const current = (await client.get('/current-api-session')).body.data
      expect([current.isMfaRequired, current.isMfaComplete, current.authQueries]).toEqual([true, false, [TOTP_QUERY]])
      const seen = (await t.mgmt.get(`/api-sessions/${current.id}`)).body.data
      expect([seen.isMfaRequired, seen.isMfaComplete, seen.authQueries]).toEqual([true, false, [TOTP_QUERY]])
      expectError(await client.get('/current-identity'), 401, 'UNAUTHORIZED')
    }
  })

  it('POST /authenticate/mfa with a TOTP code completes it; a wrong code is 401 MFA_INVALID_TOKEN and leaves it partial', async () => {
    const u = await newUser()
    const { secret } = await enrolled(u)
    const { client } = await loginAs(u)
    await expectMfaRefused(client, '12345')
    expect((await client.get('/current-api-session')).body.data.authQueries).toEqual([TOTP_QUERY])
    nextStep()
    const res = await client.post('/authenticate/mfa', { code: totp(secret) })
    expectStatus(res, 200)
    expect(res.body).toEqual({ data: {}, meta: {} })
    const s = (await client.get('/current-api-session')).body.data
    expect([s.isMfaRequired, s.isMfaComplete, s.authQueries]).toEqual([true, true, []])
    expectStatus(await client.get('/current-identity'), 200)
    expectStatus(await client.get('/services'), 200)
  })

  it('refuses a TOTP code accepted once, even inside its window and on another session (RFC 6238 §5.2)', async () => {
    const u = await newUser()
    const { secret } = await enrolled(u)
    nextStep()
    const code = totp(secret)
    expectStatus(await (await loginAs(u)).client.post('/authenticate/mfa', { code }), 200)
    const second = (await loginAs(u)).client
    await expectMfaRefused(second, code)
    // nor a code of an earlier step once a later one was used
    await expectMfaRefused(second, totp(secret, -1))
    nextStep()
    expectStatus(await second.post('/authenticate/mfa', { code: totp(secret) }), 200)
  })

  it('accepts codes one step either side of now and refuses two steps away', async () => {
    const u = await newUser()
    const { secret } = await enrolled(u)
    t.clock.advance(10 * STEP_MS)
    const { client } = await loginAs(u)
    await expectMfaRefused(client, totp(secret, -2))
    await expectMfaRefused(client, totp(secret, 2))
    expectStatus(await client.post('/authenticate/mfa', { code: totp(secret, -1) }), 200)
    expectStatus(await (await loginAs(u)).client.post('/authenticate/mfa', { code: totp(secret, 1) }), 200)
  })

  it('accepts each recovery code once', async () => {
    const u = await newUser()
    const { recoveryCodes } = await enrolled(u)
    const first = (await loginAs(u)).client
    expectStatus(await first.post('/authenticate/mfa', { code: recoveryCodes[3] }), 200)
    expect((await first.get('/current-api-session')).body.data.isMfaComplete).toBe(true)
    const second = (await loginAs(u)).client
    await expectMfaRefused(second, recoveryCodes[3])
    // recovery codes are case-sensitive
    await expectMfaRefused(second, recoveryCodes[4].toLowerCase())
    expectStatus(await second.post('/authenticate/mfa', { code: recoveryCodes[4] }), 200)
  })

  it('answers a complete session that posts a code again (a posture check\'s prompt) with 200', async () => {
    const u = await newUser()
    const { secret } = await enrolled(u)
    const { client } = await loginAs(u)
    nextStep()
    expectStatus(await client.post('/authenticate/mfa', { code: totp(secret) }), 200)
    nextStep()
    expectStatus(await client.post('/authenticate/mfa', { code: totp(secret) }), 200)
    expect((await client.get('/current-api-session')).body.data.isMfaComplete).toBe(true)
  })

  it('keeps sessions opened before the enrollment fully authenticated; only later logins owe the code', async () => {
    const u = await newUser()
    const before = (await loginAs(u)).client
    await enrolled(u)
    expectStatus(await before.get('/current-identity'), 200)
    expect((await loginAs(u)).session.authQueries).toEqual([TOTP_QUERY])
  })

  it('keeps a verified MFA, its used steps and its recovery codes over a restart', async () => {
    const u = await newUser()
    const { secret, recoveryCodes } = await enrolled(u)
    nextStep()
    const code = totp(secret)
    expectStatus(await (await loginAs(u)).client.post('/authenticate/mfa', { code: recoveryCodes[0] }), 200)
    expectStatus(await (await loginAs(u)).client.post('/authenticate/mfa', { code }), 200)
    await t.restart()
    const { client, session } = await loginAs(u)
    expect(session.authQueries).toEqual([TOTP_QUERY])
    await expectMfaRefused(client, code)
    await expectMfaRefused(client, recoveryCodes[0])
    expectStatus(await client.post('/authenticate/mfa', { code: recoveryCodes[1] }), 200)
    expect((await client.get('/current-identity/mfa')).body.data.isVerified).toBe(true)
  })
})

describe('wrong codes and the lockout of the authentication policy', () => {
  it('count toward maxAttempts: the identity is disabled and its sessions end; a right code starts the count again', async () => {
    const policyId = await t.create('/auth-policies', authPolicyBody('mfa lockout', { maxAttempts: 3, lockoutDurationMinutes: 10 }))
    const u = await newUser()
    expectStatus(await t.mgmt.patch(`/identities/${u.id}`, { authPolicyId: policyId }), 200)
    const { secret } = await enrolled(u)
    const { client } = await loginAs(u)
    await expectMfaRefused(client, '000000')
    await expectMfaRefused(client, '000001')
    nextStep()
    expectStatus(await client.post('/authenticate/mfa', { code: totp(secret) }), 200)
    // the count started again: two more wrong codes do not lock out, the third does
    const second = (await loginAs(u)).client
    await expectMfaRefused(second, '000000')
    await expectMfaRefused(second, '000001')
    expect((await t.mgmt.get(`/identities/${u.id}`)).body.data.disabled).toBe(false)
    await expectMfaRefused(second, '000002')
    const identity = (await t.mgmt.get(`/identities/${u.id}`)).body.data
    expect(identity.disabled).toBe(true)
    expect(Date.parse(identity.disabledUntil) - Date.parse(identity.disabledAt)).toBe(10 * 60_000)
    expectError(await client.get('/current-api-session'), 401, 'UNAUTHORIZED')
    expectError(await t.raw.post('/edge/client/v1/authenticate?method=password', { username: u.username, password: u.password }), 401, 'INVALID_AUTH')
  })
})

describe('identity delete', () => {
  it('removes the identity\'s MFA with it', async () => {
    const u = await newUser()
    await enrolled(u)
    expectStatus(await t.mgmt.del(`/identities/${u.id}`), 200)
    // a new identity may take the same login and starts without MFA
    const again = { ...u, id: await t.create('/identities', { name: u.name, type: 'User', isAdmin: false }) }
    expectStatus(await t.mgmt.post('/authenticators', { identityId: again.id, method: 'updb', username: u.username, password: u.password }), 201)
    expect((await loginAs(again)).session.authQueries).toEqual([])
  })
})
