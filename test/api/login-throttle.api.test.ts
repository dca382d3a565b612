// The failed-login throttle slows guessers only (issue 21, part 2; rules in src/flows/authenticate/auth-throttle.ts),
// over HTTPS with the default settings on the fake clock. Logins come from several source addresses: the client socket
// is bound to another 127.0.0.x (test/support/fetch-from.ts), which the real TLS listener sees as the peer.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { createPasswordUser } from '../support/auth-policy.ts'
import { enrollNewIdentity, type EnrolledIdentity } from '../support/enroll.ts'

/** A password login on the Client API from the local address `from`. */
function passwordLoginFrom(t: TestServer, from: string, username: string, password: string): Promise<ApiResponse> {
  return t.raw.post('/edge/client/v1/authenticate?method=password', { username, password }, { from })
}
const login = passwordLoginFrom

describe('failed-login throttle: guessers slow down, nobody else', () => {
  let t: TestServer
  beforeAll(async () => {
    // the defaults: 5 free failures per username, 1 s doubling to 1 min, more than 20 usernames in 15 min per address
    t = await startTestServer({ loginThrottle: { enabled: true } })
  })
  afterAll(() => t.stop())

  const login = (from: string, username: string, password: string) => passwordLoginFrom(t, from, username, password)
  const certLogin = (from: string, device: EnrolledIdentity): Promise<ApiResponse> =>
    t.raw.post('/edge/client/v1/authenticate?method=cert', {}, { from, tls: device })
  /** Asserts a 429 SERVER_TOO_MANY_REQUESTS whose Retry-After is `seconds`. */
  const expectWait = (res: ApiResponse, seconds: number) => {
    expectError(res, 429, 'SERVER_TOO_MANY_REQUESTS')
    expect(res.headers.get('retry-after')).toBe(String(seconds))
  }

  it('case=10 failed logins of other usernames from one address in the last minute, then a new identity\'s first login: 200', async () => {
    await createPasswordUser(t, 'newcomer-2', 'newcomer-pass-2')
    for (let i = 0; i < 10; i++) {
      expectError(await login('127.0.0.2', `colleague-${i}`, `mistyped-${i}`), 401, 'INVALID_AUTH')
      t.clock.advance(5_000)
    }
    expectStatus(await login('127.0.0.2', 'newcomer-2', 'newcomer-pass-2'), 200)
  })

  it('case=a test suite that fails five passwords and then logs in correctly gets 200', async () => {
    await createPasswordUser(t, 'suite-user-3', 'suite-pass-3')
    for (let i = 0; i < 5; i++) expectError(await login('127.0.0.3', 'suite-user-3', `wrong-${i}`), 401, 'INVALID_AUTH')
    expectStatus(await login('127.0.0.3', 'suite-user-3', 'suite-pass-3'), 200)
  })

  it('case=one username guessed from many addresses slows down; its owner, from an address they logged in from before, does not', async () => {
    await createPasswordUser(t, 'owner-4', 'owner-pass-4')
    expectStatus(await login('127.0.0.4', 'owner-4', 'owner-pass-4'), 200)
    // six guesses from six addresses: five are free, the sixth makes the username wait 1 s
    for (let i = 0; i < 6; i++) expectError(await login(`127.0.4.${i}`, 'owner-4', `guess-${i}`), 401, 'INVALID_AUTH')
    expectWait(await login('127.0.4.10', 'owner-4', 'guess-6'), 1)
    // from an address the owner never used, even the right password waits (checked before the password)
    expectWait(await login('127.0.4.11', 'owner-4', 'owner-pass-4'), 1)
    expectStatus(await login('127.0.0.4', 'owner-4', 'owner-pass-4'), 200)
    // the guesser's next try after the wait fails, and the wait doubles
    t.clock.advance(1_000)
    expectError(await login('127.0.4.10', 'owner-4', 'guess-6'), 401, 'INVALID_AUTH')
    expectWait(await login('127.0.4.12', 'owner-4', 'guess-7'), 2)
    expectStatus(await login('127.0.0.4', 'owner-4', 'owner-pass-4'), 200)
    // other usernames at the guessing addresses are not held back
    await createPasswordUser(t, 'bystander-4', 'bystander-pass-4')
    expectStatus(await login('127.0.4.10', 'bystander-4', 'bystander-pass-4'), 200)
  })

  it('case=guesses sent in parallel gain nothing: at most the free failures and one more are checked', async () => {
    await createPasswordUser(t, 'parallel-4', 'parallel-pass-4')
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(`127.0.5.${i}`, 'parallel-4', `guess-${i}`)))
    const failed = answers.filter((r) => r.status === 401)
    for (const r of answers) expect([401, 429]).toContain(r.status)
    expect(failed.length).toBeLessThanOrEqual(6)
    expect(failed.length).toBeGreaterThan(0)
  })

  it('case=one address trying more than 20 distinct usernames in 15 minutes is delayed, only for pairs that never succeeded', async () => {
    await createPasswordUser(t, 'regular-5', 'regular-pass-5')
    await createPasswordUser(t, 'newbie-5', 'newbie-pass-5')
    expectStatus(await login('127.0.0.5', 'regular-5', 'regular-pass-5'), 200)
    // 21 distinct usernames fail; the 21st is not refused (20 are allowed), it makes the address wait
    for (let i = 0; i < 21; i++) expectError(await login('127.0.0.5', `spray-${i}`, 'Summer2026!'), 401, 'INVALID_AUTH')
    expectWait(await login('127.0.0.5', 'newbie-5', 'newbie-pass-5'), 1)
    expectWait(await login('127.0.0.5', 'spray-21', 'Summer2026!'), 1)
    // a pair that succeeded before is not delayed; nor is the newcomer elsewhere
    expectStatus(await login('127.0.0.5', 'regular-5', 'regular-pass-5'), 200)
    expectStatus(await login('127.0.0.6', 'newbie-5', 'newbie-pass-5'), 200)
    // each further failure doubles the wait
    t.clock.advance(1_000)
    expectError(await login('127.0.0.5', 'spray-21', 'Summer2026!'), 401, 'INVALID_AUTH')
    expectWait(await login('127.0.0.5', 'newbie-5', 'newbie-pass-5'), 2)
    // 15 minutes without a failure: the address is open again
    t.clock.advance(15 * 60_000 + 1)
    expectStatus(await login('127.0.0.5', 'newbie-5', 'newbie-pass-5'), 200)
  })

  it('case=the same wrong password retried every second counts once: it slows nobody on that address, nor its username', async () => {
    await createPasswordUser(t, 'rotated-6', 'new-pass-6')
    await createPasswordUser(t, 'neighbour-6', 'neighbour-pass-6')
    for (let i = 0; i < 60; i++) {
      expectError(await login('127.0.0.7', 'rotated-6', 'old-pass-6'), 401, 'INVALID_AUTH')
      t.clock.advance(1_000)
    }
    expectStatus(await login('127.0.0.7', 'neighbour-6', 'neighbour-pass-6'), 200)
    expectStatus(await login('127.0.0.8', 'rotated-6', 'new-pass-6'), 200)
  }, 60_000)

  it('case=a deleted certificate retried every second counts once: other logins from that address go on', async () => {
    const gone = await enrollNewIdentity(t, 'deleted-cert-7')
    const other = await enrollNewIdentity(t, 'other-cert-7')
    await createPasswordUser(t, 'neighbour-7', 'neighbour-pass-7')
    expectStatus(await t.mgmt.del(`/identities/${gone.id}`), 200)
    for (let i = 0; i < 30; i++) {
      expectError(await certLogin('127.0.0.9', gone), 401, 'INVALID_AUTH')
      t.clock.advance(1_000)
    }
    // not even the deleted certificate itself waits anywhere: it counted once
    expectError(await certLogin('127.0.0.10', gone), 401, 'INVALID_AUTH')
    expectStatus(await certLogin('127.0.0.9', other), 200)
    expectStatus(await login('127.0.0.9', 'neighbour-7', 'neighbour-pass-7'), 200)
  }, 60_000)

  it('case=certificate logins count by the certificate\'s fingerprint as their username', async () => {
    const device = await enrollNewIdentity(t, 'cert-8')
    const other = await enrollNewIdentity(t, 'other-cert-8')
    expectStatus(await certLogin('127.0.0.11', device), 200)
    expectStatus(await t.mgmt.post(`/identities/${device.id}/disable`, { durationMinutes: 0 }), 200)
    // the certificate fails from six addresses (once each): its fingerprint waits, as a guessed username does
    for (let i = 0; i < 6; i++) expectError(await certLogin(`127.0.8.${i}`, device), 401, 'INVALID_AUTH')
    expectWait(await certLogin('127.0.8.10', device), 1)
    // but not from where it logged in before (there it fails: the identity is still disabled; that failure is the
    // fingerprint's seventh, so 2 s now), and another certificate from the same addresses goes on
    expectError(await certLogin('127.0.0.11', device), 401, 'INVALID_AUTH')
    expectStatus(await certLogin('127.0.8.0', other), 200)
    expectStatus(await t.mgmt.post(`/identities/${device.id}/enable`, {}), 200)
    expectStatus(await certLogin('127.0.0.11', device), 200)
    expectWait(await certLogin('127.0.8.10', device), 2)
    t.clock.advance(2_000)
    expectStatus(await certLogin('127.0.8.10', device), 200)
  })
})

describe('failed-login throttle: distinct certificates are distinct usernames for their address', () => {
  it('case=an address presenting more than distinctUsernames unknown certificates waits; an enrolled device there does not', async () => {
    const t = await startTestServer({ loginThrottle: { enabled: true, distinctUsernames: 3 } })
    try {
      const devices = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((n) => enrollNewIdentity(t, `spray-cert-${n}`)))
      const certLogin = (from: string, device: EnrolledIdentity) => t.raw.post('/edge/client/v1/authenticate?method=cert', {}, { from, tls: device })
      const [known, newcomer, ...gone] = devices as [EnrolledIdentity, EnrolledIdentity, ...EnrolledIdentity[]]
      expectStatus(await certLogin('127.0.0.12', known), 200)
      for (const d of gone) expectStatus(await t.mgmt.del(`/identities/${d.id}`), 200)
      for (const d of gone) expectError(await certLogin('127.0.0.12', d), 401, 'INVALID_AUTH')
      const refused = await certLogin('127.0.0.12', newcomer)
      expectError(refused, 429, 'SERVER_TOO_MANY_REQUESTS')
      expect(refused.headers.get('retry-after')).toBe('1')
      expectStatus(await certLogin('127.0.0.12', known), 200)
      expectStatus(await certLogin('127.0.0.13', newcomer), 200)
    } finally {
      await t.stop()
    }
  }, 60_000)
})

describe('failed-login throttle: a sprayer of usernames does not lock out the admin', () => {
  // its own server: the 200 failures take the fake clock hours ahead (every wait is waited out)
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer({ loginThrottle: { enabled: true } })
  })
  afterAll(() => t.stop())

  it('case=200 failed logins with random usernames from one address, then the admin, who logged in there before, logs in at once', async () => {
    // the harness logged the admin in from 127.0.0.1; every login below fails for real (a 429 is waited out)
    let failed = 0
    let waited = 0
    while (failed < 200) {
      const res = await login(t, '127.0.0.1', `random-${randomUUID()}`, 'some-guess')
      if (res.status === 429) {
        expectError(res, 429, 'SERVER_TOO_MANY_REQUESTS')
        waited++
        t.clock.advance(Number(res.headers.get('retry-after')) * 1000)
        continue
      }
      expectError(res, 401, 'INVALID_AUTH')
      failed++
    }
    // the address was held back as a sprayer of usernames, and still is for a username it never logged in as
    expect(waited).toBeGreaterThan(0)
    expectError(await login(t, '127.0.0.1', 'never-seen-here', 'some-guess'), 429, 'SERVER_TOO_MANY_REQUESTS')
    expectStatus(await login(t, '127.0.0.1', ADMIN.username, ADMIN.password), 200)
  }, 60_000)
})
