// What an identity's authentication policy does to its logins and passwords (controller-behaviour.md §4
// "Authentication policies", "Lockout", "authQueries"; seed "API session authentication"): the primary rules on
// password and certificate login, requireTotp's partial session, the persisted lockout and its expiry on the fake
// clock, and the password rules on every path that sets a password (stricter than the real controller, which stores
// but ignores them).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { authPolicyBody, createPasswordUser, DEFAULT_POLICY_WIRE, passwordLogin } from '../support/auth-policy.ts'
import { enrollNewIdentity, type EnrolledIdentity } from '../support/enroll.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const certLogin = (me: EnrolledIdentity): Promise<ApiResponse> => srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls: me })

/** A policy with the default rules and these changes: `primary` members replace the default ones by method. */
async function policy(name: string, change: { updb?: Record<string, unknown>; cert?: Record<string, unknown>; secondary?: Record<string, unknown> } = {}): Promise<string> {
  const primary = { ...DEFAULT_POLICY_WIRE.primary, cert: { ...DEFAULT_POLICY_WIRE.primary.cert, ...change.cert } }
  return srv.create('/auth-policies', authPolicyBody(name, change.updb, { primary: { ...primary, updb: { ...primary.updb, ...change.updb } }, secondary: { requireTotp: false, ...change.secondary } }))
}

describe('primary rules', () => {
  it('updb.allowed false refuses a right password with 401 INVALID_AUTH; allowing it again lets it in', async () => {
    const policyId = await policy('no-passwords', { updb: { allowed: false } })
    await createPasswordUser(srv, 'pw-refused', 'right-pass-1', policyId)
    expectError(await passwordLogin(srv, 'pw-refused', 'right-pass-1'), 401, 'INVALID_AUTH')
    expectStatus(await srv.mgmt.patch(`/auth-policies/${policyId}`, { primary: { updb: { allowed: true } } }), 200)
    expectStatus(await passwordLogin(srv, 'pw-refused', 'right-pass-1'), 200)
  })

  it('cert.allowed false refuses a valid certificate with 401 INVALID_AUTH; under the default policy it logs in', async () => {
    const policyId = await policy('no-certs', { cert: { allowed: false } })
    const refused = await enrollNewIdentity(srv, 'cert-refused', 'ec-p256', { authPolicyId: policyId })
    expectError(await certLogin(refused), 401, 'INVALID_AUTH')
    const allowed = await enrollNewIdentity(srv, 'cert-allowed')
    expectStatus(await certLogin(allowed), 200)
    // the policy is read at every login
    expectStatus(await srv.mgmt.patch(`/identities/${refused.id}`, { authPolicyId: 'default' }), 200)
    expectStatus(await certLogin(refused), 200)
  })
})

describe('secondary.requireTotp', () => {
  it('answers a partial session with the TOTP auth query and isMfaRequired false to an identity without MFA', async () => {
    const policyId = await policy('totp-required', { secondary: { requireTotp: true } })
    await createPasswordUser(srv, 'totp-owed', 'right-pass-1', policyId)
    const login = await passwordLogin(srv, 'totp-owed', 'right-pass-1')
    expectStatus(login, 200)
    expect(login.body.data).toMatchObject({ isMfaRequired: false, isMfaComplete: false })
    expect(login.body.data.authQueries).toEqual([
      { typeId: 'MFA', provider: 'ziti', format: 'alphaNumeric', httpMethod: 'POST', httpUrl: './authenticate/mfa', minLength: 4, maxLength: 6 },
    ])
    const me = srv.as(login.body.data.token, 'client')
    // the session itself is readable (and shows what is owed); nothing else is
    const current = await me.get('/current-api-session')
    expectStatus(current, 200)
    expect(current.body.data.authQueries).toHaveLength(1)
    expectError(await me.get('/services'), 401, 'UNAUTHORIZED')
    expectError(await me.get('/current-identity'), 401, 'UNAUTHORIZED')
    expectError(await me.post('/sessions', { serviceId: 'any', type: 'Dial' }), 401, 'UNAUTHORIZED')
    // logging out is allowed
    expectStatus(await me.del('/current-api-session'), 200)
  })

  it('does the same after certificate login, and a policy without it gives a full session again', async () => {
    const policyId = await policy('totp-required-cert', { secondary: { requireTotp: true } })
    const me = await enrollNewIdentity(srv, 'totp-cert', 'ec-p256', { authPolicyId: policyId })
    const partial = await certLogin(me)
    expectStatus(partial, 200)
    expect(partial.body.data.authQueries.map((q: { typeId: string }) => q.typeId)).toEqual(['MFA'])
    expectError(await srv.as(partial.body.data.token, 'client').get('/services'), 401, 'UNAUTHORIZED')
    expectStatus(await srv.mgmt.patch(`/auth-policies/${policyId}`, { secondary: { requireTotp: false } }), 200)
    // a session's factors follow its identity's policy
    expectStatus(await srv.as(partial.body.data.token, 'client').get('/services'), 200)
    const full = await certLogin(me)
    expect(full.body.data.authQueries).toEqual([])
  })
})

describe('lockout (maxAttempts, lockoutDurationMinutes)', () => {
  it('counts wrong passwords, starts again after a right one, and disables the identity at the limit for the lockout duration', async () => {
    const policyId = await policy('lockout-3', { updb: { maxAttempts: 3, lockoutDurationMinutes: 5 } })
    const { id } = await createPasswordUser(srv, 'lock-me', 'right-pass-1', policyId)
    const live = await passwordLogin(srv, 'lock-me', 'right-pass-1')
    expectStatus(live, 200)
    for (let i = 0; i < 2; i++) expectError(await passwordLogin(srv, 'lock-me', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    // a success starts the count again: two more failures do not lock
    expectStatus(await passwordLogin(srv, 'lock-me', 'right-pass-1'), 200)
    for (let i = 0; i < 2; i++) expectError(await passwordLogin(srv, 'lock-me', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.disabled).toBe(false)

    const lockedAt = srv.clock.now()
    expectError(await passwordLogin(srv, 'lock-me', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(identity).toMatchObject({ disabled: true, disabledAt: new Date(lockedAt).toISOString(), disabledUntil: new Date(lockedAt + 5 * 60_000).toISOString() })
    // locked out: the right password is refused too, and the session opened before is gone at once
    expectError(await passwordLogin(srv, 'lock-me', 'right-pass-1'), 401, 'INVALID_AUTH')
    expectError(await srv.as(live.body.data.token, 'client').get('/current-api-session'), 401, 'UNAUTHORIZED')
    const sessions = await srv.mgmt.get(`/api-sessions?filter=${encodeURIComponent(`identityId="${id}"`)}`)
    expect(sessions.body.data).toEqual([])

    srv.clock.advance(5 * 60_000 - 1_000)
    expectError(await passwordLogin(srv, 'lock-me', 'right-pass-1'), 401, 'INVALID_AUTH')
    srv.clock.advance(1_000)
    expectStatus(await passwordLogin(srv, 'lock-me', 'right-pass-1'), 200)
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.disabled).toBe(false)
  })

  it('with lockoutDurationMinutes 0 the lockout lasts until an admin enables the identity, which also starts the count again', async () => {
    const policyId = await policy('lockout-forever', { updb: { maxAttempts: 2, lockoutDurationMinutes: 0 } })
    const { id } = await createPasswordUser(srv, 'lock-forever', 'right-pass-1', policyId)
    for (let i = 0; i < 2; i++) expectError(await passwordLogin(srv, 'lock-forever', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data).toMatchObject({ disabled: true, disabledUntil: null })
    srv.clock.advance(24 * 60 * 60_000)
    expectError(await passwordLogin(srv, 'lock-forever', 'right-pass-1'), 401, 'INVALID_AUTH')
    // a day later the admin's session has timed out: the restart logs the harness's admin in again
    await srv.restart()
    expectError(await passwordLogin(srv, 'lock-forever', 'right-pass-1'), 401, 'INVALID_AUTH')
    expectStatus(await srv.mgmt.post(`/identities/${id}/enable`), 200)
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null })
    // one wrong password after enabling does not lock again (the count started again)
    expectError(await passwordLogin(srv, 'lock-forever', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    expectStatus(await passwordLogin(srv, 'lock-forever', 'right-pass-1'), 200)
  })

  it('the failed-attempt count survives a restart, and so does the lockout', async () => {
    const policyId = await policy('lockout-restart', { updb: { maxAttempts: 3, lockoutDurationMinutes: 10 } })
    const { id } = await createPasswordUser(srv, 'lock-restart', 'right-pass-1', policyId)
    for (let i = 0; i < 2; i++) expectError(await passwordLogin(srv, 'lock-restart', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    await srv.restart()
    expectError(await passwordLogin(srv, 'lock-restart', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    expectError(await passwordLogin(srv, 'lock-restart', 'right-pass-1'), 401, 'INVALID_AUTH')
    await srv.restart()
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.disabled).toBe(true)
    expectError(await passwordLogin(srv, 'lock-restart', 'right-pass-1'), 401, 'INVALID_AUTH')
  })

  it('counts nothing under a policy without maxAttempts (the default)', async () => {
    const { id } = await createPasswordUser(srv, 'never-locked', 'right-pass-1')
    for (let i = 0; i < 6; i++) expectError(await passwordLogin(srv, 'never-locked', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.disabled).toBe(false)
    expectStatus(await passwordLogin(srv, 'never-locked', 'right-pass-1'), 200)
  })
})

describe('password rules on every password set', () => {
  const GOOD = 'Good-Pass-123'
  // each breaks exactly one rule of the policy below
  const BAD: [string, string][] = [
    ['minPasswordLength', 'Sh0rt-pw'],
    ['requireMixedCase', 'lower-case-only-1'],
    ['requireNumberChar', 'No-Digits-Here'],
    ['requireSpecialChar', 'NoSpecials123'],
  ]
  let policyId = ''
  beforeAll(async () => {
    policyId = await policy('strict-passwords', { updb: { minPasswordLength: 10, requireMixedCase: true, requireNumberChar: true, requireSpecialChar: true } })
  })

  /** Asserts a 400 COULD_NOT_VALIDATE on field password whose reason names the rule. */
  const expectRule = (res: ApiResponse, rule: string) => {
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('password')
    expect(res.body.error.cause.reason).toContain(rule)
  }

  it('admin create of a updb authenticator (POST /authenticators)', async () => {
    const id = await srv.create('/identities', { name: 'rules-create', type: 'User', isAdmin: false, authPolicyId: policyId })
    for (const [rule, password] of BAD) {
      expectRule(await srv.mgmt.post('/authenticators', { identityId: id, method: 'updb', username: 'rules-create', password }), rule)
    }
    expect((await srv.mgmt.get(`/identities/${id}/authenticators`)).body.data).toEqual([])
    expectStatus(await srv.mgmt.post('/authenticators', { identityId: id, method: 'updb', username: 'rules-create', password: GOOD }), 201)
  })

  it('admin put and patch of a updb authenticator', async () => {
    const { authenticatorId } = await createPasswordUser(srv, 'rules-admin', GOOD, policyId)
    for (const [rule, password] of BAD) {
      expectRule(await srv.mgmt.put(`/authenticators/${authenticatorId}`, { username: 'rules-admin', password }), rule)
      expectRule(await srv.mgmt.patch(`/authenticators/${authenticatorId}`, { password }), rule)
    }
    expectStatus(await passwordLogin(srv, 'rules-admin', GOOD), 200)
    expectStatus(await srv.mgmt.patch(`/authenticators/${authenticatorId}`, { password: 'Other-Pass-456' }), 200)
    expectStatus(await passwordLogin(srv, 'rules-admin', 'Other-Pass-456'), 200)
  })

  it('self-service change (/current-identity/authenticators/{id}), after the current password', async () => {
    const { authenticatorId } = await createPasswordUser(srv, 'rules-self', GOOD, policyId)
    const me = srv.as((await passwordLogin(srv, 'rules-self', GOOD)).body.data.token, 'client')
    for (const [rule, password] of BAD) {
      expectRule(await me.patch(`/current-identity/authenticators/${authenticatorId}`, { password, currentPassword: GOOD }), rule)
      expectRule(await me.put(`/current-identity/authenticators/${authenticatorId}`, { username: 'rules-self', password, currentPassword: GOOD }), rule)
    }
    expectStatus(await me.patch(`/current-identity/authenticators/${authenticatorId}`, { password: 'Changed-Pass-789', currentPassword: GOOD }), 200)
    expectStatus(await passwordLogin(srv, 'rules-self', 'Changed-Pass-789'), 200)
  })

  it('updb enrollment (POST /enroll/updb): a refused password leaves the token redeemable', async () => {
    const id = await srv.create('/identities', { name: 'rules-enroll', type: 'User', isAdmin: false, authPolicyId: policyId, enrollment: { updb: 'rules-enroll' } })
    const token = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.updb.token
    for (const [rule, password] of BAD) expectRule(await srv.client.post(`/enroll/updb?token=${token}`, { password }), rule)
    expectStatus(await srv.client.post(`/enroll/updb?token=${token}`, { password: GOOD }), 200)
    expectStatus(await passwordLogin(srv, 'rules-enroll', GOOD), 200)
  })

  it('under the default policy only the length bounds apply', async () => {
    await createPasswordUser(srv, 'rules-default', 'plain')
    expectStatus(await passwordLogin(srv, 'rules-default', 'plain'), 200)
  })
})

// last: it moves the clock past the certificates' notAfter (every session times out)
describe('cert.allowExpiredCerts', () => {
  it('an expired certificate logs in only under a policy that allows expired certificates', async () => {
    const policyId = await policy('no-expired', { cert: { allowExpiredCerts: false } })
    const strict = await enrollNewIdentity(srv, 'expired-refused', 'ec-p256', { authPolicyId: policyId })
    const lenient = await enrollNewIdentity(srv, 'expired-allowed')
    expectStatus(await certLogin(strict), 200)
    const [leaf] = parseCertificatesPem(strict.cert)
    srv.clock.advance(leaf.notAfter - srv.clock.now() + 1_000)
    expectError(await certLogin(strict), 401, 'INVALID_AUTH')
    expectStatus(await certLogin(lenient), 200)
  })
})
