/**
 * The adaptive concurrency window in front of API-session creation (the real controller's `edge.authRateLimiter`):
 * at most `size` authentications run at once; one more is refused (the route answers 429 SERVER_TOO_MANY_REQUESTS).
 *
 * The algorithm (additive increase, multiplicative decrease, as TCP congestion control):
 * - the window starts at `maxSize`;
 * - an authentication that fails on the server's side (an unexpected error) or takes longer than `slowMs` shrinks it
 *   to 90 % of its size, never below `minSize`: the server is overloaded, so fewer run at once and each finishes sooner;
 * - one that completes in time grows it by 1/size, so a full window's worth of good completions adds one slot, up to
 *   `maxSize`; a wrong password is a completed authentication, not a failure of the server;
 * - an admin may pass a full window once per `adminBypassEveryMs` (10 s), so an operator can still log in to act on
 *   an overload; the bypassing authentication counts toward the window while it runs.
 * Time is read from `now()` (ms; the flow passes a monotonic clock, tests a fake one).
 */

export interface AuthWindowSettings {
  enabled: boolean
  /** Bounds of the window: the real controller's 5 and 250, each bounded to 5–1000. */
  minSize: number
  maxSize: number
  /** An authentication slower than this shrinks the window. */
  slowMs: number
  /** The least time between two admin bypasses of a full window. */
  adminBypassEveryMs: number
}

export const AUTH_WINDOW_DEFAULTS: AuthWindowSettings = {
  enabled: true,
  minSize: 5,
  maxSize: 250,
  slowMs: 5_000,
  adminBypassEveryMs: 10_000,
}

/** The bounds of minSize and maxSize, as the real controller's. */
export const AUTH_WINDOW_BOUNDS = { min: 5, max: 1000 } as const

export interface AuthWindowEntry {
  /** Marks the authentication done; `failed` = it failed on the server's side. */
  leave(outcome: { failed: boolean }): void
}

export class AdaptiveWindow {
  private size: number
  private running = 0
  private lastBypassAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly settings: AuthWindowSettings,
    private readonly now: () => number,
  ) {
    this.size = settings.maxSize
  }

  /** The current window (slots, possibly fractional). */
  get currentSize(): number {
    return this.size
  }

  get inFlight(): number {
    return this.running
  }

  /**
   * A slot for one authentication, or undefined when the window is full (and `isAdmin` may not bypass it now).
   * `isAdmin` is asked only when the window is full.
   */
  tryEnter(isAdmin: () => boolean): AuthWindowEntry | undefined {
    if (this.settings.enabled && this.running >= Math.floor(this.size)) {
      const at = this.now()
      if (at - this.lastBypassAt < this.settings.adminBypassEveryMs || !isAdmin()) return undefined
      this.lastBypassAt = at
    }
    this.running++
    const startedAt = this.now()
    let left = false
    return {
      leave: ({ failed }) => {
        if (left) return
        left = true
        this.running--
        const slow = this.now() - startedAt > this.settings.slowMs
        if (failed || slow) this.size = Math.max(this.settings.minSize, this.size * 0.9)
        else this.size = Math.min(this.settings.maxSize, this.size + 1 / this.size)
      },
    }
  }
}
