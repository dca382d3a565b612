/**
 * What every API-session creation passes through before and after its method runs: the failed-login throttle
 * (auth-throttle.ts), then the adaptive concurrency window (auth-rate-window.ts); afterwards the outcome is counted
 * (throttle, window, the `logins` metric). Both checks come before any credential work (argon2, chain checks); only
 * a 401 counts as a failed login for the throttle, only a 2xx makes its (subject, address) pair known. Refusals are 429 SERVER_TOO_MANY_REQUESTS; the throttle's carries
 * Retry-After (the window's does not, as the real controller's).
 */
import { createHash } from 'node:crypto'
import { decodeJwt } from 'jose'
import { ApiError } from '../../errors/api-error.ts'
import type { AuthInput, AuthPeer, PrimaryMethodKind } from './auth-method.ts'
import { bearerTokens } from './auth-ext-jwt.ts'
import { AdaptiveWindow, type AuthWindowSettings } from './auth-rate-window.ts'
import { LoginThrottle, type LoginAttempt, type LoginThrottleSettings } from './auth-throttle.ts'

/** How a login ended, for the metrics: success, wrong credentials, a refused request, throttled, server error. */
export type LoginOutcome = 'success' | 'failure' | 'invalid' | 'throttled' | 'error'

export interface AuthGateDeps {
  window: AuthWindowSettings
  throttle: LoginThrottleSettings
  /** Monotonic ms for the window; the controller's clock (fake in tests) for the throttle. */
  monotonicNow: () => number
  clockNow: () => number
  /** Whether a username is an admin's (only asked when the window is full). */
  isAdminUsername: (username: string) => boolean
  /** Told every outcome (metrics). */
  outcome?: (method: string, outcome: LoginOutcome) => void
}

export interface AuthGate {
  /** Runs one authentication `fn` of `method` for `attempt` behind the throttle and the window. */
  run<T>(method: string, attempt: LoginAttempt, fn: () => Promise<T>): Promise<T>
  readonly window: AdaptiveWindow
}

/**
 * What the throttle needs to know of a login before its method runs, cheaply (no signature, chain or password is
 * checked here): the peer's address; the username and password of a password login; the leaf's SHA-1 fingerprint of
 * a certificate login (the certificate is its own credential); for an ext-jwt login the issuer and subject its first
 * bearer token claims (read, not verified: a claim, like a username), or, when it claims none, the Authorization
 * header as its credential.
 */
export function loginAttemptOf(kind: PrimaryMethodKind, input: AuthInput, peer: AuthPeer): LoginAttempt {
  const source = peer.remoteAddress
  switch (kind) {
    case 'updb':
      return { source, username: input.username, credential: input.password }
    case 'cert': {
      const leaf = peer.certChainDer[0]
      return { source, subject: leaf ? `cert ${createHash('sha1').update(leaf).digest('hex')}` : undefined }
    }
    case 'extJwt': {
      // a signed token cannot be guessed: like a certificate, the subject it claims is its credential, so a client
      // retrying with a fresh token each time counts once per address; a token claiming none counts by itself
      const authorization = input.header('authorization')
      const subject = claimedJwtSubject(bearerTokens(authorization)[0])
      return subject !== undefined ? { source, subject } : { source, credential: authorization ?? undefined }
    }
  }
}

/** `jwt <issuer> <subject>` as a token claims them, unverified; undefined for a token that does not parse or lacks them. */
function claimedJwtSubject(token: string | undefined): string | undefined {
  if (token === undefined) return undefined
  try {
    const { iss, sub } = decodeJwt(token)
    return typeof iss === 'string' && typeof sub === 'string' ? `jwt ${JSON.stringify([iss, sub])}` : undefined
  } catch {
    return undefined
  }
}

/** The status of an error as the app will render it (anything not an ApiError is a 500). */
function statusOf(e: unknown): number {
  return e instanceof ApiError ? e.status : 500
}

export function createAuthGate(deps: AuthGateDeps): AuthGate {
  const window = new AdaptiveWindow(deps.window, deps.monotonicNow)
  const throttle = new LoginThrottle(deps.throttle, deps.clockNow)
  const tell = (method: string, o: LoginOutcome) => deps.outcome?.(method, o)
  return {
    window,
    async run(method, attempt, fn) {
      const admitted = throttle.enter(attempt)
      if (typeof admitted === 'number') {
        tell(method, 'throttled')
        throw new ApiError('SERVER_TOO_MANY_REQUESTS', { headers: { 'retry-after': String(Math.ceil(admitted / 1000)) } })
      }
      try {
        const entry = window.tryEnter(() => attempt.username !== undefined && deps.isAdminUsername(attempt.username))
        if (!entry) {
          tell(method, 'throttled')
          throw new ApiError('SERVER_TOO_MANY_REQUESTS')
        }
        try {
          const out = await fn()
          entry.leave({ failed: false })
          admitted.succeeded()
          tell(method, 'success')
          return out
        } catch (e) {
          const status = statusOf(e)
          entry.leave({ failed: status >= 500 })
          if (status === 401) admitted.failed()
          tell(method, status === 401 ? 'failure' : status >= 500 ? 'error' : 'invalid')
          throw e
        }
      } finally {
        // whatever happened above, the attempt is no longer in flight (a no-op once settled)
        admitted.ended()
      }
    },
  }
}
