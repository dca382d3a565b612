/**
 * The failed-login throttle (beyond the real controller, which has only its concurrency window and the auth policy's
 * lockout): it slows down whoever guesses and nobody else. A login attempt comes from a source address (the TLS peer;
 * an IPv6 peer counts by its /64) for a subject: the username of a password login, the SHA-1 fingerprint of a
 * certificate login's leaf certificate, the issuer and subject an ext-jwt login's token claims (unverified, as a
 * username is; a token that claims none leaves the login without a subject).
 *
 * Rules:
 * - Known pairs. A (subject, address) pair that logged in successfully within `knownSourceMs` (30 days) is never
 *   delayed, whatever anybody else does from that address or to that subject: the admin, the user behind a shared NAT,
 *   the SDK on its usual host log in at once. The exemption holds while at most `freeFailures` failures of that very
 *   pair have come since its success (after more, somebody at that address is guessing that subject's password, and
 *   the pair waits like any other until it next succeeds).
 * - Per subject. Every counted failure counts for its subject. The first `freeFailures` (5) cost nothing; after
 *   failure n > freeFailures the subject's unknown pairs wait `baseDelayMs · 2^(n − freeFailures − 1)` (1 s, 2 s,
 *   4 s, … at most `maxDelayMs`, 1 min) from that failure. A subject forgets its failures `forgetAfterMs` (15 min)
 *   after the last one. So one username guessed from many addresses slows down; its owner, from an address where they
 *   logged in before, does not.
 * - Per address. An address counts the distinct subjects that failed from it within `distinctWindowMs` (15 min); a
 *   subject-less attempt (a certificate login without a certificate, a token claiming no issuer and subject) counts
 *   as the subject "its credential". While more than `distinctUsernames` (20) have, the address is spraying guesses:
 *   each counted failure beyond the limit doubles the wait of the address's unknown pairs (1 s, 2 s, … at most
 *   `maxDelayMs`, from its last failure). Its known pairs are not delayed, and failures alone never delay an address:
 *   ten mistyped usernames behind one NAT leave a newcomer's first login alone.
 * - Repeats. A failure that repeats one already counted from the same address, for the same subject, with the same
 *   credential (the password; a certificate, and an ext-jwt token's claimed subject, are their own credential, as
 *   neither a key nor a signature can be guessed) is not counted again while the
 *   repeats go on (within `forgetAfterMs` of the previous one): a stale SDK retrying an old password or a deleted
 *   certificate every second counts once and never slows anybody.
 * - A delayed attempt is answered 429 before any credential is checked (auth-gate.ts) and is not itself counted.
 * - Attempts in flight (admitted, their credentials still being checked) count as failures-to-be: a subject admits
 *   no attempt that the failure of those in flight would make wait, and an address over its limit admits one unknown
 *   pair's attempt at a time. So parallel guesses gain nothing over sequential ones; up to `freeFailures + 1` first
 *   logins of one username at once still pass.
 * - A success clears nothing but its own pair's failures: a guesser holding an account of their own cannot reset a
 *   subject's count or an address's.
 * - Nothing is kept in clear: addresses, subjects and credentials are kept as HMAC-SHA-256 (128 bits) under a key
 *   drawn at random when the throttle is made (per process), so memory holds no password and each entry has a fixed
 *   size whatever a client sends.
 * - Memory is bounded: at most `maxEntries` subjects, addresses, known pairs and repeats each, the least recently
 *   written dropped first; an address keeps at most `distinctUsernames + 1` subjects; the attempts in flight are
 *   bounded by the auth window.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { BoundedMap } from '../../lib/bounded-map.ts'

export interface LoginThrottleSettings {
  enabled: boolean
  /** Failures of one subject that cost nothing; also the failures a known pair may have before it loses its exemption. */
  freeFailures: number
  baseDelayMs: number
  maxDelayMs: number
  /** A subject forgets its failures this long after its last one; a repeat is counted again after this long without one. */
  forgetAfterMs: number
  /** How long a successful login keeps its (subject, address) pair known. */
  knownSourceMs: number
  /** How many distinct failing subjects an address may have within `distinctWindowMs` before its unknown pairs wait. */
  distinctUsernames: number
  distinctWindowMs: number
  /** The bound of each of the throttle's maps. */
  maxEntries: number
}

export const LOGIN_THROTTLE_DEFAULTS: LoginThrottleSettings = {
  enabled: true,
  freeFailures: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  forgetAfterMs: 15 * 60_000,
  knownSourceMs: 30 * 24 * 60 * 60_000,
  distinctUsernames: 20,
  distinctWindowMs: 15 * 60_000,
  maxEntries: 10_000,
}

/** Who is logging in, as the throttle sees it (built by `loginAttemptOf` in auth-gate.ts). */
export interface LoginAttempt {
  /** The TLS peer's address. */
  source: string
  /** The username of a password login (the concurrency window's admin bypass reads it too). */
  username?: string
  /** The subject of a login without a username: `cert <SHA-1 fingerprint>`, `jwt [<issuer>,<subject>]`. */
  subject?: string
  /** The secret presented (a password; the Authorization header of an ext-jwt login without a subject); kept hashed only. */
  credential?: string
}

/**
 * The address the throttle counts by: an IPv4 address as it is (also when mapped into IPv6), an IPv6 address by its
 * /64 network (one host may hold a whole /64, and privacy addresses change every day).
 */
export function throttleSourceOf(address: string): string {
  const a = address.split('%')[0]!.toLowerCase()
  if (!a.includes(':')) return a
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a)
  if (mapped) return mapped[1]!
  // an embedded IPv4 tail is two groups
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])))
  const [head = '', tail] = a.split('::')
  const front = groupsOf(head)
  const back = tail === undefined ? [] : groupsOf(tail)
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back]
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`
}

interface SubjectFailures {
  count: number
  lastAt: number
}

interface SourceFailures {
  /** Subject key → time of its last counted failure, oldest first; at most `distinctUsernames + 1` entries. */
  subjects: Map<string, number>
  /** Counted failures since the address went over the limit (0 while under it). */
  overCount: number
  lastAt: number
}

interface KnownPair {
  /** Time of the pair's last success. */
  at: number
  /** Counted failures of the pair since then. */
  failures: number
}

/** An admitted login attempt; settle it exactly once when its method has answered (later calls do nothing). */
export interface LoginTicket {
  /** Wrong credentials (401): counted as `LoginThrottle.failed`. */
  failed(): void
  succeeded(): void
  /** Neither (a refused request, a server error, a full auth window): nothing is counted. */
  ended(): void
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by
  if (n > 0) map.set(key, n)
  else map.delete(key)
}

/** The hashed keys of one attempt. */
interface AttemptKeys {
  source: string
  subject?: string
  pair?: string
}

export class LoginThrottle {
  private readonly hashKey = randomBytes(32)
  private readonly bySubject: BoundedMap<string, SubjectFailures>
  private readonly bySource: BoundedMap<string, SourceFailures>
  private readonly knownPairs: BoundedMap<string, KnownPair>
  /** (address, subject, credential) → time of its last failure. */
  private readonly repeats: BoundedMap<string, number>
  /** Admitted attempts not yet settled, per subject and per address (unknown pairs only); bounded by the auth window. */
  private readonly subjectsInFlight = new Map<string, number>()
  private readonly sourcesInFlight = new Map<string, number>()

  constructor(
    private readonly settings: LoginThrottleSettings,
    private readonly now: () => number,
  ) {
    this.bySubject = new BoundedMap(settings.maxEntries)
    this.bySource = new BoundedMap(settings.maxEntries)
    this.knownPairs = new BoundedMap(settings.maxEntries)
    this.repeats = new BoundedMap(settings.maxEntries)
  }

  /** How long `attempt` must still wait, in ms; 0 = it may go ahead. */
  waitMs(attempt: LoginAttempt): number {
    if (!this.settings.enabled) return 0
    return this.waitOf(this.keysOf(attempt), this.now())
  }

  /**
   * Admits `attempt` while its method runs, or answers how long it must wait (ms > 0). An admitted attempt is in
   * flight until its ticket is settled, and is counted as a failure-to-be meanwhile (see the rules above).
   */
  enter(attempt: LoginAttempt): number | LoginTicket {
    if (!this.settings.enabled) return { failed: () => {}, succeeded: () => {}, ended: () => {} }
    const keys = this.keysOf(attempt)
    const at = this.now()
    const wait = this.waitOf(keys, at)
    if (wait > 0) return wait
    const { subject } = keys
    const source = this.isKnown(keys, at) ? undefined : keys.source
    if (subject !== undefined) bump(this.subjectsInFlight, subject, 1)
    if (source !== undefined) bump(this.sourcesInFlight, source, 1)
    let settled = false
    const settle = (then: () => void) => {
      if (settled) return
      settled = true
      if (subject !== undefined) bump(this.subjectsInFlight, subject, -1)
      if (source !== undefined) bump(this.sourcesInFlight, source, -1)
      then()
    }
    // the keys are worked out once per attempt (each is an HMAC): the ticket counts its outcome under them
    return {
      failed: () => settle(() => this.countFailure(keys, attempt.credential)),
      succeeded: () => settle(() => this.markKnown(keys)),
      ended: () => settle(() => {}),
    }
  }

  private waitOf(keys: AttemptKeys, at: number): number {
    if (this.isKnown(keys, at)) return 0
    let wait = 0
    if (keys.subject !== undefined) {
      const f = this.liveSubject(keys.subject, at)
      const count = f?.count ?? 0
      if (f) wait = Math.max(0, f.lastAt + this.delayAfter(count) - at)
      // the attempts in flight, were they all to fail now, must not make this one wait
      const inFlight = this.subjectsInFlight.get(keys.subject) ?? 0
      if (inFlight > 0) wait = Math.max(wait, this.delayAfter(count + inFlight))
    }
    const s = this.liveSource(keys.source, at)
    if (s && s.subjects.size > this.settings.distinctUsernames) {
      wait = Math.max(wait, s.lastAt + this.backoff(s.overCount) - at)
      // over the limit, one unknown pair's attempt at a time
      const inFlight = this.sourcesInFlight.get(keys.source) ?? 0
      if (inFlight > 0) wait = Math.max(wait, this.backoff(s.overCount + inFlight))
    }
    return wait
  }

  /** Counts a failed login (wrong credentials), unless it repeats one already counted. */
  failed(attempt: LoginAttempt): void {
    if (this.settings.enabled) this.countFailure(this.keysOf(attempt), attempt.credential)
  }

  /** Makes the attempt's (subject, address) pair known; a subject-less attempt leaves nothing. */
  succeeded(attempt: LoginAttempt): void {
    if (this.settings.enabled) this.markKnown(this.keysOf(attempt))
  }

  private countFailure(keys: AttemptKeys, credential: string | undefined): void {
    const at = this.now()
    const repeat = this.digest('repeat', keys.source, keys.subject ?? '', credential ?? '')
    const previous = this.repeats.get(repeat)
    this.repeats.set(repeat, at)
    if (previous !== undefined && at - previous <= this.settings.forgetAfterMs) return
    if (keys.subject !== undefined) {
      const f = this.liveSubject(keys.subject, at)
      this.bySubject.set(keys.subject, { count: (f?.count ?? 0) + 1, lastAt: at })
      const pair = this.livePair(keys.pair!, at)
      if (pair) pair.failures += 1
    }
    this.countAtSource(keys.source, keys.subject ?? repeat, at)
  }

  private markKnown(keys: AttemptKeys): void {
    if (keys.pair !== undefined) this.knownPairs.set(keys.pair, { at: this.now(), failures: 0 })
  }

  /** How many entries each map holds (the memory bound's witness; an address's subjects summed over addresses). */
  sizes(): { subjects: number; sources: number; sourceSubjects: number; knownPairs: number; repeats: number } {
    let sourceSubjects = 0
    for (const s of this.bySource.values()) sourceSubjects += s.subjects.size
    return { subjects: this.bySubject.size, sources: this.bySource.size, sourceSubjects, knownPairs: this.knownPairs.size, repeats: this.repeats.size }
  }

  /** A subject's wait after `count` failures, in ms. */
  delayAfter(count: number): number {
    return this.backoff(count - this.settings.freeFailures)
  }

  /** 0 for `over` ≤ 0, then baseDelay · 2^(over − 1), at most maxDelay. */
  private backoff(over: number): number {
    if (over <= 0) return 0
    // 2^30 ms is already past any sensible cap: keeps the power finite for huge counts
    return Math.min(this.settings.maxDelayMs, this.settings.baseDelayMs * 2 ** Math.min(over - 1, 30))
  }

  private keysOf(attempt: LoginAttempt): AttemptKeys {
    const source = this.digest('source', throttleSourceOf(attempt.source))
    const subject =
      attempt.username !== undefined ? this.digest('username', attempt.username)
      : attempt.subject !== undefined ? this.digest('subject', attempt.subject)
      : undefined
    return { source, subject, pair: subject === undefined ? undefined : this.digest('pair', subject, source) }
  }

  /** HMAC-SHA-256 of the parts under the process's key, 128 bits in base64url; each part is length-prefixed. */
  private digest(...parts: string[]): string {
    const h = createHmac('sha256', this.hashKey)
    for (const p of parts) h.update(`${p.length}:`).update(p)
    return h.digest().subarray(0, 16).toString('base64url')
  }

  private livePair(key: string, at: number): KnownPair | undefined {
    const p = this.knownPairs.get(key)
    if (p && at - p.at > this.settings.knownSourceMs) {
      this.knownPairs.delete(key)
      return undefined
    }
    return p
  }

  private isKnown(keys: AttemptKeys, at: number): boolean {
    if (keys.pair === undefined) return false
    const p = this.livePair(keys.pair, at)
    return p !== undefined && p.failures <= this.settings.freeFailures
  }

  private liveSubject(key: string, at: number): SubjectFailures | undefined {
    const f = this.bySubject.get(key)
    if (f && at - f.lastAt > this.settings.forgetAfterMs) {
      this.bySubject.delete(key)
      return undefined
    }
    return f
  }

  /** The address's record with the subjects older than the window dropped; undefined when none is left. */
  private liveSource(key: string, at: number): SourceFailures | undefined {
    const s = this.bySource.get(key)
    if (!s) return undefined
    for (const [subject, lastAt] of s.subjects) {
      if (at - lastAt <= this.settings.distinctWindowMs) break
      s.subjects.delete(subject)
    }
    if (s.subjects.size === 0) {
      this.bySource.delete(key)
      return undefined
    }
    return s
  }

  private countAtSource(key: string, subject: string, at: number): void {
    const s = this.liveSource(key, at) ?? { subjects: new Map<string, number>(), overCount: 0, lastAt: at }
    const limit = this.settings.distinctUsernames
    const wasOver = s.subjects.size > limit
    // delete first: a subject that fails again becomes the most recent
    s.subjects.delete(subject)
    s.subjects.set(subject, at)
    if (s.subjects.size > limit + 1) s.subjects.delete(s.subjects.keys().next().value as string)
    s.overCount = s.subjects.size > limit ? (wasOver ? s.overCount + 1 : 1) : 0
    s.lastAt = at
    this.bySource.set(key, s)
  }
}
