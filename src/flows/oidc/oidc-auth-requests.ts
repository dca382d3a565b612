/**
 * The auth requests of OIDC sign-ins in progress on this node, and their codes: memory only, as the real controller
 * keeps them (a login stays on the node that started it; reference §5 "An OIDC login must stay on one node").
 * - a request lives AUTH_REQUEST_TTL_MS from its creation: `get` and `redeemCode` refuse an older one, and a sweep
 *   every AUTH_REQUEST_SWEEP_MS (an unref'd timer: it never keeps the process alive) removes it with its code
 * - the request id and the API-session id (`z_asid`) are fresh UUIDs chosen at creation
 * - a code is 32 random bytes, base64url (URL-safe without escaping: the C SDK copies it unescaped, reference §7.5);
 *   only a request with a primary login and every required second factor in its `amr` gets one; issuing again
 *   replaces the previous code
 * - a code works once: redeeming it deletes the request (a second redemption, or the request's older code, finds
 *   nothing)
 * @see ../shared/reference/oidc-and-ha.md §1 "Auth-request state"
 */
import { randomBytes } from 'node:crypto'
import type { Clock } from '../../lib/clock.ts'
import { newUuid } from '../../lib/ids.ts'
import { AUTH_REQUEST_SWEEP_MS, AUTH_REQUEST_TTL_MS, type AuthRequest, type AuthRequestStore, type CompletedLogin } from './oidc-types.ts'

/** The second factors `request` still owes (its `requiredAmr` not yet in `amr`). */
export function owedAmr(request: Pick<AuthRequest, 'amr' | 'requiredAmr'>): string[] {
  return request.requiredAmr.filter((a) => !request.amr.has(a))
}

/** Whether `request` has a primary login and owes nothing more. */
export function isFullyAuthenticated(request: AuthRequest): request is CompletedLogin {
  return request.primary !== undefined && owedAmr(request).length === 0
}

export interface AuthRequestStoreOptions {
  /** The clock of the sweep (the controller's; fake in tests). */
  clock: Clock
  ttlMs?: number
  sweepEveryMs?: number
}

/** The store, plus the sweep itself (the timer calls it; tests may too). */
export interface SweptAuthRequestStore extends AuthRequestStore {
  /** Removes the requests older than the TTL at `now`, and their codes; answers how many went. */
  sweep(now: number): number
  /** How many requests are held (expired ones not yet swept included). */
  size(): number
}

export function createAuthRequestStore(opts: AuthRequestStoreOptions): SweptAuthRequestStore {
  const ttlMs = opts.ttlMs ?? AUTH_REQUEST_TTL_MS
  const requests = new Map<string, AuthRequest>()
  /** code → request id, and the one live code of each request. */
  const codes = new Map<string, string>()
  const codeOf = new Map<string, string>()

  const expired = (r: AuthRequest, now: number) => now - r.createdAt >= ttlMs
  const remove = (id: string) => {
    requests.delete(id)
    const code = codeOf.get(id)
    if (code !== undefined) codes.delete(code)
    codeOf.delete(id)
  }
  const sweep = (now: number): number => {
    let n = 0
    for (const r of requests.values()) {
      if (expired(r, now)) {
        remove(r.id)
        n++
      }
    }
    return n
  }
  const timer = setInterval(() => {
    try {
      sweep(opts.clock.now())
    } catch (e) {
      // a sweep must never end the process; nothing in it is expected to throw
      console.error('OIDC auth-request sweep failed:', e)
    }
  }, opts.sweepEveryMs ?? AUTH_REQUEST_SWEEP_MS)
  timer.unref?.()

  return {
    create(params, now) {
      const request: AuthRequest = {
        ...params,
        configTypeIds: [...params.configTypeIds],
        scopes: [...params.scopes],
        id: newUuid(),
        createdAt: now,
        apiSessionId: newUuid(),
        amr: new Set(),
        requiredAmr: [],
      }
      requests.set(request.id, request)
      return request
    },

    get(id, now) {
      const r = requests.get(id)
      if (!r) return undefined
      if (expired(r, now)) {
        remove(id)
        return undefined
      }
      return r
    },

    issueCode(request) {
      if (requests.get(request.id) !== request) throw new TypeError(`auth request ${request.id} is not held by this store`)
      if (!isFullyAuthenticated(request)) throw new TypeError(`auth request ${request.id} is not fully authenticated`)
      const previous = codeOf.get(request.id)
      if (previous !== undefined) codes.delete(previous)
      const code = randomBytes(32).toString('base64url')
      codes.set(code, request.id)
      codeOf.set(request.id, code)
      return code
    },

    redeemCode(code, now) {
      const id = codes.get(code)
      if (id === undefined) return undefined
      const request = requests.get(id)
      remove(id)
      if (!request || expired(request, now) || !isFullyAuthenticated(request)) return undefined
      return request
    },

    sweep,
    size: () => requests.size,
    stop() {
      clearInterval(timer)
    },
  }
}
