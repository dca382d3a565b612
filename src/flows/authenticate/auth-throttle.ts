/**
 * Throttling of failed logins per source address and per username (beyond the real controller, which has only its
 * concurrency window and the auth policy's lockout). A password-guessing client slows down; the real user does not
 * get locked out by someone else's guesses.
 *
 * Rules:
 * - Each key (a source address, a username) counts its failed logins (wrong credentials, 401). The first
 *   `freeFailures` cost nothing; after failure n > freeFailures the key waits `baseDelayMs · 2^(n − freeFailures − 1)`,
 *   at most `maxDelayMs`, counted from that failure. A login attempt during the wait is answered 429
 *   SERVER_TOO_MANY_REQUESTS with Retry-After, before any credential is checked, and is not itself counted.
 * - A key forgets its failures `forgetAfterMs` after its last one (the delay decays to nothing with time).
 * - A source address that has logged in successfully as a username in the last `knownSourceMs` is exempt from that
 *   username's wait (not from its own address's): the real user, from where they usually log in, is never delayed by
 *   guesses at their username from elsewhere. From a new address the real user waits at most `maxDelayMs`.
 * - A success clears nothing: a guesser who holds an account of their own cannot reset their address's count.
 * - Memory is bounded: at most `maxEntries` keys of each kind and as many known sources, least recent dropped first.
 */
import { BoundedMap } from '../../lib/bounded-map.ts'

export interface LoginThrottleSettings {
  enabled: boolean
  freeFailures: number
  baseDelayMs: number
  maxDelayMs: number
  forgetAfterMs: number
  knownSourceMs: number
  maxEntries: number
}

export const LOGIN_THROTTLE_DEFAULTS: LoginThrottleSettings = {
  enabled: true,
  freeFailures: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  forgetAfterMs: 15 * 60_000,
  knownSourceMs: 30 * 24 * 60 * 60_000,
  maxEntries: 10_000,
}

interface Failures {
  count: number
  lastAt: number
}

/** Who is logging in: the TLS peer's address and the username, when the method has one. */
export interface LoginAttempt {
  source: string
  username?: string
}

export class LoginThrottle {
  private readonly bySource: BoundedMap<string, Failures>
  private readonly byUsername: BoundedMap<string, Failures>
  /** `username \n source` → time of the last successful login. */
  private readonly knownSources: BoundedMap<string, number>

  constructor(
    private readonly settings: LoginThrottleSettings,
    private readonly now: () => number,
  ) {
    this.bySource = new BoundedMap(settings.maxEntries)
    this.byUsername = new BoundedMap(settings.maxEntries)
    this.knownSources = new BoundedMap(settings.maxEntries)
  }

  /** How long `attempt` must still wait, in ms; 0 = it may go ahead. */
  waitMs(attempt: LoginAttempt): number {
    if (!this.settings.enabled) return 0
    const at = this.now()
    let wait = this.waitOf(this.bySource, attempt.source, at)
    if (attempt.username !== undefined && !this.isKnownSource(attempt, at)) wait = Math.max(wait, this.waitOf(this.byUsername, attempt.username, at))
    return wait
  }

  failed(attempt: LoginAttempt): void {
    if (!this.settings.enabled) return
    const at = this.now()
    this.count(this.bySource, attempt.source, at)
    if (attempt.username !== undefined) this.count(this.byUsername, attempt.username, at)
  }

  succeeded(attempt: LoginAttempt): void {
    if (!this.settings.enabled || attempt.username === undefined) return
    this.knownSources.set(`${attempt.username}\n${attempt.source}`, this.now())
  }

  /** The wait after `count` failures, in ms. */
  delayAfter(count: number): number {
    const over = count - this.settings.freeFailures
    if (over <= 0) return 0
    // 2^30 ms is already past any sensible cap: keeps the power finite for huge counts
    return Math.min(this.settings.maxDelayMs, this.settings.baseDelayMs * 2 ** Math.min(over - 1, 30))
  }

  private isKnownSource(attempt: LoginAttempt, at: number): boolean {
    const last = this.knownSources.get(`${attempt.username}\n${attempt.source}`)
    return last !== undefined && at - last <= this.settings.knownSourceMs
  }

  private live(map: BoundedMap<string, Failures>, key: string, at: number): Failures | undefined {
    const f = map.get(key)
    if (f && at - f.lastAt > this.settings.forgetAfterMs) {
      map.delete(key)
      return undefined
    }
    return f
  }

  private waitOf(map: BoundedMap<string, Failures>, key: string, at: number): number {
    const f = this.live(map, key, at)
    return f ? Math.max(0, f.lastAt + this.delayAfter(f.count) - at) : 0
  }

  private count(map: BoundedMap<string, Failures>, key: string, at: number): void {
    const f = this.live(map, key, at)
    map.set(key, { count: (f?.count ?? 0) + 1, lastAt: at })
  }
}
