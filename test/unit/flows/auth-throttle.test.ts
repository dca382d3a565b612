// The failed-login throttle's rules (issue 21, part 2), on a fake clock: per subject (username or certificate
// fingerprint) with exponential delay, per address only beyond a limit of distinct failing subjects, known
// (subject, address) pairs exempt, repeats of one failing credential counted once, keyed hashes only, bounded memory.
import { describe, expect, it } from 'bun:test'
import {
  LOGIN_THROTTLE_DEFAULTS,
  LoginThrottle,
  throttleSourceOf,
  type LoginAttempt,
  type LoginThrottleSettings,
  type LoginTicket,
} from '../../../src/flows/authenticate/auth-throttle.ts'

const clockAt = (start = 0) => {
  const c = { t: start, now: () => c.t }
  return c
}
const make = (over: Partial<LoginThrottleSettings> = {}) => {
  const c = clockAt()
  return { c, t: new LoginThrottle({ ...LOGIN_THROTTLE_DEFAULTS, ...over }, c.now) }
}
const pw = (source: string, username: string, password: string): LoginAttempt => ({ source, username, credential: password })
const cert = (source: string, fingerprint: string): LoginAttempt => ({ source, subject: `cert ${fingerprint}` })

describe('LoginThrottle: per subject', () => {
  it('case=delays double after the free failures, up to the cap', () => {
    const { t } = make({ freeFailures: 2, baseDelayMs: 1000, maxDelayMs: 8000 })
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => t.delayAfter(n))).toEqual([0, 0, 0, 1000, 2000, 4000, 8000, 8000])
    expect(t.delayAfter(1e9)).toBe(8000)
  })

  it('case=five wrong passwords then the right one: no wait (a test suite checking failures)', () => {
    const { t } = make()
    for (let i = 0; i < 5; i++) t.failed(pw('127.0.0.1', 'suite-user', `wrong-${i}`))
    expect(t.waitMs(pw('127.0.0.1', 'suite-user', 'right'))).toBe(0)
    t.failed(pw('127.0.0.1', 'suite-user', 'wrong-5'))
    expect(t.waitMs(pw('127.0.0.1', 'suite-user', 'right'))).toBe(1000)
  })

  it('case=a username guessed from many addresses waits, counted from the last failure; its owner from a known address does not', () => {
    const { c, t } = make()
    t.succeeded(pw('192.168.1.5', 'alice', 'right'))
    for (let i = 0; i < 7; i++) t.failed(pw(`10.0.0.${i}`, 'alice', `guess-${i}`))
    // 7 failures, 5 free: 2 s from the last one
    expect(t.waitMs(pw('10.0.0.99', 'alice', 'guess-x'))).toBe(2000)
    expect(t.waitMs(pw('192.168.1.5', 'alice', 'right'))).toBe(0)
    // other usernames at the guessing addresses are not held back
    expect(t.waitMs(pw('10.0.0.1', 'bob', 'x'))).toBe(0)
    c.t += 1500
    expect(t.waitMs(pw('10.0.0.99', 'alice', 'guess-x'))).toBe(500)
    // a new address of the real user waits at most the cap
    for (let i = 0; i < 30; i++) t.failed(pw(`10.1.0.${i}`, 'alice', `guess-${i}`))
    expect(t.waitMs(pw('172.16.0.1', 'alice', 'right'))).toBe(60_000)
  })

  it('case=a subject forgets its failures forgetAfterMs after the last one', () => {
    const { c, t } = make({ forgetAfterMs: 60_000 })
    for (let i = 0; i < 8; i++) t.failed(pw(`s${i}`, 'u', `p${i}`))
    c.t += 60_001
    expect(t.waitMs(pw('s', 'u', 'p'))).toBe(0)
    t.failed(pw('s', 'u', 'again'))
    expect(t.waitMs(pw('s', 'u', 'p'))).toBe(0)
  })

  it('case=a known pair loses its exemption after more than freeFailures failures of its own, and regains it by a success', () => {
    const { t } = make()
    t.succeeded(pw('10.9.9.9', 'carol', 'right'))
    for (let i = 0; i < 6; i++) t.failed(pw('10.9.9.9', 'carol', `guess-${i}`))
    // somebody at carol's own address is guessing her password: the pair now waits like anyone
    expect(t.waitMs(pw('10.9.9.9', 'carol', 'right'))).toBe(1000)
    t.succeeded(pw('10.9.9.9', 'carol', 'right'))
    expect(t.waitMs(pw('10.9.9.9', 'carol', 'right'))).toBe(0)
  })

  it('case=a known pair is forgotten knownSourceMs after its last success', () => {
    const { c, t } = make({ knownSourceMs: 60_000, forgetAfterMs: 10 * 60_000 })
    t.succeeded(pw('10.0.0.1', 'dave', 'right'))
    c.t += 60_001
    for (let i = 0; i < 6; i++) t.failed(pw(`10.2.0.${i}`, 'dave', `g${i}`))
    expect(t.waitMs(pw('10.0.0.1', 'dave', 'right'))).toBe(1000)
  })
})

describe('LoginThrottle: per address', () => {
  it('case=more than distinctUsernames distinct failing usernames delay the address, unknown pairs only', () => {
    const { c, t } = make()
    t.succeeded(pw('10.0.0.1', 'admin', 'admin-pass'))
    for (let i = 0; i < 20; i++) t.failed(pw('10.0.0.1', `user-${i}`, 'x'))
    // 20 is the limit: not over it
    expect(t.waitMs(pw('10.0.0.1', 'newcomer', 'pass'))).toBe(0)
    t.failed(pw('10.0.0.1', 'user-20', 'x'))
    expect(t.waitMs(pw('10.0.0.1', 'newcomer', 'pass'))).toBe(1000)
    expect(t.waitMs(pw('10.0.0.1', 'admin', 'admin-pass'))).toBe(0)
    // other addresses are not concerned
    expect(t.waitMs(pw('10.0.0.2', 'newcomer', 'pass'))).toBe(0)
    // each further failure doubles, from the last one
    c.t += 1000
    t.failed(pw('10.0.0.1', 'user-21', 'x'))
    expect(t.waitMs(pw('10.0.0.1', 'newcomer', 'pass'))).toBe(2000)
    c.t += 2000
    t.failed(pw('10.0.0.1', 'user-22', 'x'))
    expect(t.waitMs(pw('10.0.0.1', 'newcomer', 'pass'))).toBe(4000)
  })

  it('case=200 random usernames from one address; the admin who logged in there before is not delayed', () => {
    const { c, t } = make()
    t.succeeded(pw('10.0.0.1', 'admin', 'admin-pass'))
    for (let i = 0; i < 200; i++) {
      c.t += t.waitMs(pw('10.0.0.1', `random-${i}`, 'x'))
      t.failed(pw('10.0.0.1', `random-${i}`, `x-${i}`))
    }
    expect(t.waitMs(pw('10.0.0.1', 'someone-new', 'x'))).toBeGreaterThan(0)
    expect(t.waitMs(pw('10.0.0.1', 'admin', 'admin-pass'))).toBe(0)
  })

  it('case=ten failed usernames in the last minute leave a newcomer\'s first login alone', () => {
    const { c, t } = make()
    for (let i = 0; i < 10; i++) {
      t.failed(pw('10.0.0.7', `other-${i}`, `x-${i}`))
      c.t += 5_000
    }
    expect(t.waitMs(pw('10.0.0.7', 'newcomer', 'first'))).toBe(0)
  })

  it('case=one username failing many times is not a spray: the address stays open to other usernames', () => {
    const { t } = make()
    for (let i = 0; i < 100; i++) t.failed(pw('10.0.0.3', 'victim', `g${i}`))
    expect(t.waitMs(pw('10.0.0.3', 'other', 'p'))).toBe(0)
    expect(t.waitMs(pw('10.0.0.3', 'victim', 'p'))).toBe(60_000)
  })

  it('case=the distinct usernames are counted within distinctWindowMs only', () => {
    const { c, t } = make({ distinctUsernames: 3, distinctWindowMs: 60_000 })
    for (let i = 0; i < 4; i++) t.failed(pw('10.0.0.4', `u${i}`, 'x'))
    expect(t.waitMs(pw('10.0.0.4', 'new', 'x'))).toBe(1000)
    c.t += 60_001
    expect(t.waitMs(pw('10.0.0.4', 'new', 'x'))).toBe(0)
    // a fresh start: three more are under the limit again, a fourth is the first over it
    for (let i = 10; i < 13; i++) t.failed(pw('10.0.0.4', `u${i}`, 'x'))
    expect(t.waitMs(pw('10.0.0.4', 'new', 'x'))).toBe(0)
    t.failed(pw('10.0.0.4', 'u13', 'x'))
    expect(t.waitMs(pw('10.0.0.4', 'new', 'x'))).toBe(1000)
  })
})

describe('LoginThrottle: repeats', () => {
  it('case=the same failing password retried every second counts once: it slows nobody, not even its username', () => {
    const { c, t } = make()
    for (let i = 0; i < 300; i++) {
      expect(t.waitMs(pw('10.0.0.5', 'stale-sdk', 'old-password'))).toBe(0)
      t.failed(pw('10.0.0.5', 'stale-sdk', 'old-password'))
      c.t += 1000
    }
    expect(t.waitMs(pw('10.0.0.8', 'stale-sdk', 'new-password'))).toBe(0)
    expect(t.waitMs(pw('10.0.0.5', 'newcomer', 'p'))).toBe(0)
    // different passwords do count
    for (let i = 0; i < 5; i++) t.failed(pw('10.0.0.5', 'stale-sdk', `other-${i}`))
    expect(t.waitMs(pw('10.0.0.8', 'stale-sdk', 'new-password'))).toBe(1000)
  })

  it('case=a repeat counts once per address: the same credential from another address counts again', () => {
    const { t } = make({ freeFailures: 2 })
    for (let i = 0; i < 3; i++) t.failed(pw(`10.3.0.${i}`, 'erin', 'same-guess'))
    expect(t.waitMs(pw('10.3.0.9', 'erin', 'x'))).toBe(1000)
  })

  it('case=a repeat counts again after forgetAfterMs without one', () => {
    const { c, t } = make({ freeFailures: 1, forgetAfterMs: 60_000 })
    t.failed(pw('s', 'frank', 'p'))
    c.t += 30_000
    t.failed(pw('s', 'frank', 'p'))
    expect(t.waitMs(pw('other', 'frank', 'x'))).toBe(0)
    c.t += 60_001
    // the subject forgot its failure too: counted afresh as the first
    t.failed(pw('s', 'frank', 'p'))
    expect(t.waitMs(pw('other', 'frank', 'x'))).toBe(0)
    t.failed(pw('s', 'frank', 'q'))
    expect(t.waitMs(pw('other', 'frank', 'x'))).toBe(1000)
  })
})

describe('LoginThrottle: certificates', () => {
  it('case=a certificate counts by its fingerprint as its username: per subject, per address, known pairs, repeats', () => {
    const { t } = make({ distinctUsernames: 3 })
    const fp = 'ab'.repeat(20)
    t.succeeded(cert('10.4.0.1', fp))
    // a disabled identity's certificate failing from many addresses: its fingerprint slows down, not elsewhere
    for (let i = 0; i < 6; i++) t.failed(cert(`10.4.1.${i}`, fp))
    expect(t.waitMs(cert('10.4.2.1', fp))).toBe(1000)
    expect(t.waitMs(cert('10.4.0.1', fp))).toBe(0)
    expect(t.waitMs(cert('10.4.1.0', 'cd'.repeat(20)))).toBe(0)
    // a username that spells the subject is another subject
    expect(t.waitMs(pw('10.4.2.1', `cert ${fp}`, 'x'))).toBe(0)
    // one deleted certificate retried from an address counts once; distinct certificates count as distinct usernames
    for (let i = 0; i < 20; i++) t.failed(cert('10.4.3.1', 'ee'.repeat(20)))
    expect(t.waitMs(cert('10.4.3.1', 'ff'.repeat(20)))).toBe(0)
    for (let i = 0; i < 3; i++) t.failed(cert('10.4.3.1', `${i}`.repeat(40)))
    expect(t.waitMs(cert('10.4.3.1', 'ff'.repeat(20)))).toBe(1000)
  })
})

describe('LoginThrottle: ext-jwt', () => {
  // as loginAttemptOf builds them: the claimed issuer and subject, no credential (a signature cannot be guessed)
  const jwt = (source: string, sub: string): LoginAttempt => ({ source, subject: `jwt ["https://idp",${JSON.stringify(sub)}]` })

  it('case=a client retrying with a fresh token each time counts once per address; from many addresses its subject waits', () => {
    const { t } = make({ distinctUsernames: 2 })
    t.succeeded(jwt('10.6.0.1', 'known-user'))
    for (let i = 0; i < 30; i++) t.failed(jwt('10.6.0.1', 'retrying-user'))
    expect(t.waitMs(jwt('10.6.0.9', 'retrying-user'))).toBe(0)
    expect(t.waitMs(jwt('10.6.0.1', 'newcomer'))).toBe(0)
    for (let i = 0; i < 6; i++) t.failed(jwt(`10.6.1.${i}`, 'retrying-user'))
    expect(t.waitMs(jwt('10.6.0.9', 'retrying-user'))).toBe(2000)
    // three subjects failing is a spray at that address; the known user goes on
    for (const sub of ['x', 'y']) t.failed(jwt('10.6.0.1', sub))
    expect(t.waitMs(jwt('10.6.0.1', 'newcomer'))).toBe(1000)
    expect(t.waitMs(jwt('10.6.0.1', 'known-user'))).toBe(0)
  })

  it('case=tokens that claim no subject count at their address by themselves; one token retried counts once', () => {
    const { t } = make({ distinctUsernames: 2 })
    for (let i = 0; i < 50; i++) t.failed({ source: 'j', credential: 'Bearer expired' })
    expect(t.waitMs({ source: 'j', credential: 'Bearer other' })).toBe(0)
    for (let i = 0; i < 2; i++) t.failed({ source: 'j', credential: `Bearer forged-${i}` })
    expect(t.waitMs({ source: 'j', credential: 'Bearer other' })).toBe(1000)
    // a successful subject-less login leaves nothing known
    t.succeeded({ source: 'j', credential: 'Bearer good' })
    expect(t.waitMs({ source: 'j', credential: 'Bearer good' })).toBe(1000)
  })
})

describe('throttleSourceOf', () => {
  it('case=IPv4 as it is, also mapped into IPv6; IPv6 by its /64, in any notation', () => {
    expect(throttleSourceOf('10.1.2.3')).toBe('10.1.2.3')
    expect(throttleSourceOf('::ffff:10.1.2.3')).toBe('10.1.2.3')
    expect(throttleSourceOf('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
    expect(throttleSourceOf('2001:DB8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(throttleSourceOf('2001:0db8:0001:0002:0:0:0:9%eth0')).toBe('2001:db8:1:2::/64')
    expect(throttleSourceOf('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(throttleSourceOf('::1')).toBe('0:0:0:0::/64')
    expect(throttleSourceOf('a::b:c:d:e:1.2.3.4')).toBe('a:0:b:c::/64')
  })

  it('case=a sprayer rotating through its /64 is one address', () => {
    const { t } = make({ distinctUsernames: 3 })
    for (let i = 0; i < 4; i++) t.failed(pw(`2001:db8:0:7::${i + 1}`, `u${i}`, 'x'))
    expect(t.waitMs(pw('2001:db8:0:7:ffff::1', 'new', 'x'))).toBe(1000)
    expect(t.waitMs(pw('2001:db8:0:8::1', 'new', 'x'))).toBe(0)
  })
})

describe('LoginThrottle: attempts in flight', () => {
  const admitted = (r: number | LoginTicket): LoginTicket => {
    if (typeof r === 'number') throw new Error(`refused for ${r} ms`)
    return r
  }

  it('case=parallel guesses at one username gain nothing over sequential ones', () => {
    const { t } = make()
    // six at once: the five free failures plus one
    const tickets = Array.from({ length: 6 }, (_, i) => admitted(t.enter(pw(`10.7.0.${i}`, 'victim', `guess-${i}`))))
    // a seventh would have to wait if those six failed: it is refused now
    expect(t.enter(pw('10.7.0.9', 'victim', 'guess-9'))).toBe(1000)
    for (const ticket of tickets) ticket.failed()
    expect(t.enter(pw('10.7.0.9', 'victim', 'guess-9'))).toBe(1000)
  })

  it('case=attempts that end without failing leave nothing behind', () => {
    const { t } = make()
    const tickets = Array.from({ length: 6 }, (_, i) => admitted(t.enter(pw(`10.7.1.${i}`, 'parallel-user', 'right'))))
    expect(t.enter(pw('10.7.1.9', 'parallel-user', 'right'))).toBe(1000)
    tickets[0]!.succeeded()
    for (const ticket of tickets.slice(1)) ticket.ended()
    admitted(t.enter(pw('10.7.1.9', 'parallel-user', 'right')))
    // the first one's address is known now: admitted whatever is in flight
    admitted(t.enter(pw('10.7.1.0', 'parallel-user', 'right')))
  })

  it('case=a ticket settles once', () => {
    const { t } = make({ freeFailures: 1 })
    const a = admitted(t.enter(pw('10.7.2.1', 'once', 'p1')))
    admitted(t.enter(pw('10.7.2.2', 'once', 'p2')))
    a.ended()
    a.ended()
    a.failed()
    // one attempt still in flight: a second may join it, a third may not
    admitted(t.enter(pw('10.7.2.3', 'once', 'p3')))
    expect(t.enter(pw('10.7.2.4', 'once', 'p4'))).toBe(1000)
    expect(t.waitMs(pw('10.7.2.4', 'once', 'p4'))).toBe(1000)
  })

  it('case=an address over its limit admits one unknown pair at a time; a classroom of first logins at once passes', () => {
    const { c, t } = make({ distinctUsernames: 2 })
    // thirty first logins at once from an address with no failures
    const classroom = Array.from({ length: 30 }, (_, i) => admitted(t.enter(pw('10.7.3.1', `pupil-${i}`, 'p'))))
    for (const ticket of classroom) ticket.succeeded()
    for (let i = 0; i < 3; i++) t.failed(pw('10.7.3.1', `spray-${i}`, 'x'))
    c.t += 1000
    const first = admitted(t.enter(pw('10.7.3.1', 'spray-3', 'x')))
    expect(t.enter(pw('10.7.3.1', 'spray-4', 'x'))).toBe(2000)
    // a known pair is not held back
    admitted(t.enter(pw('10.7.3.1', 'pupil-0', 'p'))).succeeded()
    first.ended()
    admitted(t.enter(pw('10.7.3.1', 'spray-4', 'x')))
  })

  it('case=disabled, every attempt is admitted', () => {
    const { t } = make({ enabled: false })
    for (let i = 0; i < 20; i++) admitted(t.enter(pw('s', 'u', `p${i}`)))
  })
})

describe('LoginThrottle: memory', () => {
  it('case=holds no password, username or address in clear', () => {
    const { t } = make()
    t.succeeded(pw('10.200.0.1', 'clear-user-name', 'clear-pass-word'))
    t.failed(pw('10.200.0.1', 'clear-user-name', 'clear-pass-word'))
    t.failed(cert('10.200.0.1', 'fingerprint-in-clear'))
    t.failed({ source: '10.200.0.1', subject: 'jwt-subject-in-clear', credential: 'Bearer token-in-clear' })
    const dump = Bun.inspect(t, { depth: 10 })
    for (const secret of ['clear-user-name', 'clear-pass-word', '10.200.0.1', 'fingerprint-in-clear', 'jwt-subject-in-clear', 'token-in-clear']) {
      expect(dump).not.toContain(secret)
    }
    expect(t.sizes()).toEqual({ subjects: 3, sources: 1, sourceSubjects: 3, knownPairs: 1, repeats: 3 })
  })

  it('case=stays bounded: maxEntries per map, distinctUsernames + 1 subjects per address, least recent dropped', () => {
    const { t } = make({ maxEntries: 50, distinctUsernames: 4, freeFailures: 0 })
    // ten addresses spraying 100 usernames each: each keeps its last 5
    for (let i = 0; i < 1000; i++) t.failed(pw(`s${i % 10}`, `u${i}`, `p${i}`))
    expect(t.sizes()).toMatchObject({ subjects: 50, sources: 10, sourceSubjects: 50, repeats: 50 })
    // a thousand addresses and pairs: 50 of each kept
    for (let i = 1000; i < 2000; i++) {
      t.succeeded(pw(`s${i}`, `u${i}`, 'p'))
      t.failed(pw(`s${i}`, `u${i}`, `p${i}`))
    }
    expect(t.sizes()).toEqual({ subjects: 50, sources: 50, sourceSubjects: 50, knownPairs: 50, repeats: 50 })
    // the least recent are gone, the most recent kept
    expect(t.waitMs(pw('x', 'u0', 'p'))).toBe(0)
    expect(t.waitMs(pw('x', 'u1999', 'p'))).toBe(1000)
  })

  it('case=disabled, it never delays', () => {
    const { t } = make({ enabled: false })
    for (let i = 0; i < 50; i++) t.failed(pw('s', `u${i}`, `p${i}`))
    expect(t.waitMs(pw('s', 'u1', 'p'))).toBe(0)
    expect(t.sizes().subjects).toBe(0)
  })
})
