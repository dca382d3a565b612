// Structured logs (issue 12, part G): one JSON object per line with level, time and msg; one line per answered request
// carrying its requestId (the one the error envelope shows); and no secret anywhere in the log of a server taken
// through logins, enrollments (ott, updb), MFA enrollment and the MFA login, failed logins, a server error path and a
// logout: no password, API-session token, enrollment token or JWT, TOTP secret or code, recovery code or private key.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import { ADMIN, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { passwordLogin } from '../support/auth-policy.ts'
import { enrollNewIdentity } from '../support/enroll.ts'

let t: TestServer
const lines: string[] = []
/** Every secret the run handled: none may appear in the log. */
const secrets: string[] = [ADMIN.password]

beforeAll(async () => {
  t = await startTestServer({ log: (l) => lines.push(l), logLevel: 'debug' })
})
afterAll(() => t.stop())

describe('structured logs', () => {
  it('case=a run through logins, enrollments and MFA logs no secret', async () => {
    // a updb enrollment: its token and JWT, then the password set with it
    const id = await t.create('/identities', { name: 'log-user', type: 'User', isAdmin: false, enrollment: { updb: 'log-user-login' } })
    const updb = (await t.mgmt.get(`/identities/${id}`)).body.data.enrollment.updb
    secrets.push(updb.token, updb.jwt, 'log-user-pass-1')
    expectStatus(await t.client.post(`/enroll/updb?token=${updb.token}`, { password: 'log-user-pass-1' }), 200)
    expectError(await passwordLogin(t, 'log-user-login', 'a-wrong-guess-1'), 401, 'INVALID_AUTH')
    secrets.push('a-wrong-guess-1')
    const login = await passwordLogin(t, 'log-user-login', 'log-user-pass-1')
    expectStatus(login, 200)
    const token = login.body.data.token as string
    secrets.push(token)
    // MFA: the secret, the recovery codes and the codes sent
    const client = t.as(token, 'client')
    expectStatus(await client.post('/current-identity/mfa', {}), 201)
    const started = (await client.get('/current-identity/mfa')).body.data
    const secret = new URL(started.provisioningUrl).searchParams.get('secret')!
    secrets.push(secret, started.provisioningUrl, ...(started.recoveryCodes as string[]))
    t.clock.advance(30_000)
    const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now() })
    expectStatus(await client.post('/current-identity/mfa/verify', { code }), 200)
    const second = await passwordLogin(t, 'log-user-login', 'log-user-pass-1')
    secrets.push(second.body.data.token)
    t.clock.advance(30_000)
    const code2 = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now() })
    expectStatus(await t.as(second.body.data.token, 'client').post('/authenticate/mfa', { code: code2 }), 200)
    // an ott enrollment: its token, the key made for it and the certificate login
    const enrolled = await enrollNewIdentity(t, 'log-device')
    secrets.push(enrolled.key.split('\n').slice(1, -2).join(''))
    expectStatus(await t.client('DELETE', '/current-api-session', { session: token }), 200)
    const all = lines.join('\n')
    for (const s of secrets) expect({ secret: s, found: all.includes(s) }).toEqual({ secret: s, found: false })
    expect(all).not.toContain('PRIVATE KEY')
    // TOTP codes are 6 digits, which may occur by chance inside ids: looked for as a JSON value only
    for (const c of [code, code2]) expect(all).not.toContain(`"${c}"`)
  })

  it('case=each line is a JSON object with level, time and msg (the request line: test/api/hardening.api.test.ts)', () => {
    expect(lines.length).toBeGreaterThan(10)
    for (const l of lines) {
      const o = JSON.parse(l)
      expect(typeof o.msg).toBe('string')
      expect(['debug', 'info', 'warn', 'error']).toContain(o.level)
      expect(o.time).toMatch(/^\d{4}-\d\d-\d\dT/)
    }
    expect(lines.some((l) => JSON.parse(l).msg === 'request')).toBe(true)
  })

  it('case=--log-level warn drops the request lines', async () => {
    const quiet: string[] = []
    const q = await startTestServer({ log: (l) => quiet.push(l), logLevel: 'warn' })
    try {
      expectStatus(await q.mgmt.get('/identities'), 200)
      expect(quiet.filter((l) => JSON.parse(l).msg === 'request')).toEqual([])
    } finally {
      await q.stop()
    }
  })
})
