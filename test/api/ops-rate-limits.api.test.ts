// Rate limits over HTTPS (issue 12, part G): the failed-login throttle's delay schedule for one username (429
// SERVER_TOO_MANY_REQUESTS with Retry-After, on the fake clock; its rules: login-throttle.api.test.ts), the adaptive
// authentication window (429 when full, the admin bypass once per 10 s) and the bounded write queue (429 before the
// body is read; nothing half-written).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { createPasswordUser, passwordLogin } from '../support/auth-policy.ts'

describe('failed-login throttle: the delay schedule of one username', () => {
  // the throttle's rules in full, one API test per outcome: login-throttle.api.test.ts
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer({ loginThrottle: { enabled: true, freeFailures: 2, baseDelayMs: 2_000, maxDelayMs: 8_000 } })
    await createPasswordUser(t, 'throttled-user', 'right-pass-1')
  })
  afterAll(() => t.stop())

  /** A login of throttled-user from `from`, an address where it never logged in (so its waits apply). */
  const login = (from: string, password: string) =>
    t.raw.post('/edge/client/v1/authenticate?method=password', { username: 'throttled-user', password }, { from })

  /** The right password is refused until `waitMs` has passed (checked 1 ms before), then logs in. */
  async function waitsThenLogsIn(from: string, waitMs: number): Promise<void> {
    t.clock.advance(waitMs - 1)
    expectError(await login(from, 'right-pass-1'), 429, 'SERVER_TOO_MANY_REQUESTS')
    t.clock.advance(1)
    expectStatus(await login(from, 'right-pass-1'), 200)
  }

  it('case=after the free failures the username waits, even with the right password; Retry-After says how long', async () => {
    for (let i = 0; i < 3; i++) expectError(await login('127.0.1.1', `wrong-${i}`), 401, 'INVALID_AUTH')
    const refused = await login('127.0.1.1', 'right-pass-1')
    expectError(refused, 429, 'SERVER_TOO_MANY_REQUESTS')
    expect(refused.headers.get('retry-after')).toBe('2')
    await waitsThenLogsIn('127.0.1.1', 2_000)
  })

  it('case=the next failure doubles the wait; a waiting attempt is not counted', async () => {
    expectError(await login('127.0.1.2', 'wrong-again'), 401, 'INVALID_AUTH')
    for (let i = 0; i < 5; i++) expectError(await login('127.0.1.2', `wrong-while-waiting-${i}`), 429, 'SERVER_TOO_MANY_REQUESTS')
    await waitsThenLogsIn('127.0.1.2', 4_000)
  })

  it('case=the failures are forgotten 15 minutes after the last one', async () => {
    expectError(await login('127.0.1.3', 'wrong-once-more'), 401, 'INVALID_AUTH')
    t.clock.advance(15 * 60_000 + 1)
    // counted afresh: three failures are the first three
    for (let i = 0; i < 3; i++) expectError(await login('127.0.1.3', `wrong-later-${i}`), 401, 'INVALID_AUTH')
    await waitsThenLogsIn('127.0.1.3', 2_000)
  })
})

describe('adaptive authentication window', () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer({ authWindow: { minSize: 5, maxSize: 5 } })
    await createPasswordUser(t, 'window-user', 'window-pass-1')
  })
  afterAll(() => t.stop())

  it('case=a full window answers 429 SERVER_TOO_MANY_REQUESTS; an admin passes once per 10 s; freed slots admit again', async () => {
    const window = t.server.authGate.window
    const held = Array.from({ length: 5 }, () => window.tryEnter(() => false)!)
    const refused = await passwordLogin(t, 'window-user', 'window-pass-1')
    expectError(refused, 429, 'SERVER_TOO_MANY_REQUESTS')
    expect(refused.headers.get('retry-after')).toBeNull()
    expectStatus(await passwordLogin(t, ADMIN.username, ADMIN.password), 200)
    expectError(await passwordLogin(t, ADMIN.username, ADMIN.password), 429, 'SERVER_TOO_MANY_REQUESTS')
    for (const h of held) h.leave({ failed: false })
    expectStatus(await passwordLogin(t, 'window-user', 'window-pass-1'), 200)
    expect(window.inFlight).toBe(0)
  })
})

describe('bounded write queue', () => {
  it('case=a full queue refuses writes with 429 before reading the body; reads and logins go on; nothing is written', async () => {
    const t = await startTestServer({ writeQueue: { queueSize: 0 } })
    try {
      const before = (await t.mgmt.get('/identities')).body.meta.pagination.totalCount
      expectError(await t.mgmt.post('/identities', { name: 'queued', type: 'User', isAdmin: false }), 429, 'SERVER_TOO_MANY_REQUESTS')
      expectError(await t.mgmt('POST', '/identities', { rawBody: '{not json', headers: { 'content-type': 'application/json' } }), 429, 'SERVER_TOO_MANY_REQUESTS')
      // access first: without a session it is 401, not 429
      expectError(await t.mgmt.post('/identities', {}, { session: null }), 401, 'UNAUTHORIZED')
      expectStatus(await passwordLogin(t, ADMIN.username, ADMIN.password), 200)
      expect((await t.mgmt.get('/identities')).body.meta.pagination.totalCount).toBe(before)
    } finally {
      await t.stop()
    }
  }, 30_000)

  it('case=a burst beyond the queue: every 201 is stored, every 429 is not', async () => {
    const t = await startTestServer({ writeQueue: { queueSize: 2 } })
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => t.mgmt.post('/identities', { name: `burst-${i}`, type: 'User', isAdmin: false }).then((r) => ({ i, r }))),
      )
      for (const { r } of answers) expect([201, 429]).toContain(r.status)
      const stored = new Set<string>((await t.mgmt.get('/identities?limit=-1')).body.data.map((d: { name: string }) => d.name))
      for (const { i, r } of answers) expect(stored.has(`burst-${i}`)).toBe(r.status === 201)
    } finally {
      await t.stop()
    }
  }, 30_000)
})
