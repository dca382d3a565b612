// The OIDC auth-request store (flows/oidc/oidc-auth-requests.ts): creation, expiry at get and at redemption, the
// sweep, and codes that are URL-safe, issued only for a complete login and redeemed once.
// Reference: oidc-and-ha.md §1 "Auth-request state" (10 min, sweep every 10 s, code exchange deletes the request).
import { afterEach, describe, expect, it } from 'bun:test'
import { FakeClock } from '../../../src/lib/clock.ts'
import { createAuthRequestStore, isFullyAuthenticated, owedAmr, type SweptAuthRequestStore } from '../../../src/flows/oidc/oidc-auth-requests.ts'
import { AUTH_REQUEST_TTL_MS, type AuthorizeParams, type AuthRequest } from '../../../src/flows/oidc/oidc-types.ts'

const PARAMS: AuthorizeParams = {
  clientId: 'openziti',
  redirectUri: 'http://localhost:20314/auth/callback',
  scopes: ['openid', 'offline_access'],
  state: 'st',
  codeChallenge: 'challenge',
  codeChallengeMethod: 'S256',
  configTypeIds: [],
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

let store: SweptAuthRequestStore
const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'))
afterEach(() => store?.stop())

function newStore(): SweptAuthRequestStore {
  store = createAuthRequestStore({ clock })
  return store
}

/** Gives `r` a primary login (and any required factors). */
function signIn(r: AuthRequest, requiredAmr: string[] = []): void {
  r.primary = { identityId: 'i1', authenticatorId: 'a1', kind: 'cert', authTime: clock.now(), isCertExtendable: false, remoteAddress: '127.0.0.1' }
  r.amr.add('cert')
  r.requiredAmr = requiredAmr
}

describe('createAuthRequestStore', () => {
  it('creates requests with fresh UUIDs for the id and the API session, holding the parameters', () => {
    const s = newStore()
    const a = s.create(PARAMS, clock.now())
    const b = s.create(PARAMS, clock.now())
    expect(a.id).toMatch(UUID)
    expect(a.apiSessionId).toMatch(UUID)
    expect(new Set([a.id, b.id, a.apiSessionId, b.apiSessionId]).size).toBe(4)
    expect(a).toMatchObject({ clientId: 'openziti', redirectUri: PARAMS.redirectUri, state: 'st', createdAt: clock.now() })
    expect(a.amr.size).toBe(0)
    expect(s.get(a.id, clock.now())).toBe(a)
    expect(s.get('no-such-id', clock.now())).toBeUndefined()
  })

  it('refuses a request at its TTL, and forgets it', () => {
    const s = newStore()
    const r = s.create(PARAMS, clock.now())
    expect(s.get(r.id, clock.now() + AUTH_REQUEST_TTL_MS - 1)).toBe(r)
    expect(s.get(r.id, clock.now() + AUTH_REQUEST_TTL_MS)).toBeUndefined()
    expect(s.size()).toBe(0)
  })

  it('issues a URL-safe code only for a request with a primary login and nothing owed', () => {
    const s = newStore()
    const r = s.create(PARAMS, clock.now())
    expect(() => s.issueCode(r)).toThrow(TypeError)
    signIn(r, ['totp'])
    expect(owedAmr(r)).toEqual(['totp'])
    expect(isFullyAuthenticated(r)).toBe(false)
    expect(() => s.issueCode(r)).toThrow(TypeError)
    r.amr.add('totp')
    const code = s.issueCode(r)
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(encodeURIComponent(code)).toBe(code)
  })

  it('redeems a code once: the request is deleted with it', () => {
    const s = newStore()
    const r = s.create(PARAMS, clock.now())
    signIn(r)
    const code = s.issueCode(r)
    const done = s.redeemCode(code, clock.now())
    expect(done?.id).toBe(r.id)
    expect(done?.primary.identityId).toBe('i1')
    expect(s.redeemCode(code, clock.now())).toBeUndefined()
    expect(s.get(r.id, clock.now())).toBeUndefined()
    expect(s.redeemCode('not-a-code', clock.now())).toBeUndefined()
  })

  it('replaces a request\'s code when issued again: the older code is dead', () => {
    const s = newStore()
    const r = s.create(PARAMS, clock.now())
    signIn(r)
    const first = s.issueCode(r)
    const second = s.issueCode(r)
    expect(second).not.toBe(first)
    expect(s.redeemCode(first, clock.now())).toBeUndefined()
    expect(s.redeemCode(second, clock.now())?.id).toBe(r.id)
  })

  it('refuses the code of an expired request', () => {
    const s = newStore()
    const r = s.create(PARAMS, clock.now())
    signIn(r)
    const code = s.issueCode(r)
    expect(s.redeemCode(code, clock.now() + AUTH_REQUEST_TTL_MS)).toBeUndefined()
    expect(s.size()).toBe(0)
  })

  it('refuses to issue a code for a request it does not hold', () => {
    const s = newStore()
    const r = s.create(PARAMS, clock.now())
    signIn(r)
    const other = newStoreLike()
    expect(() => other.issueCode(r)).toThrow(TypeError)
    other.stop()
  })

  it('sweeps the requests older than the TTL with their codes, and keeps the younger ones', () => {
    const s = newStore()
    const old = s.create(PARAMS, clock.now())
    signIn(old)
    const code = s.issueCode(old)
    const young = s.create(PARAMS, clock.now() + 60_000)
    expect(s.sweep(clock.now() + AUTH_REQUEST_TTL_MS - 1)).toBe(0)
    expect(s.sweep(clock.now() + AUTH_REQUEST_TTL_MS)).toBe(1)
    expect(s.size()).toBe(1)
    expect(s.get(young.id, clock.now() + AUTH_REQUEST_TTL_MS)).toBe(young)
    // the code went with its request, even for a later clock that has not reached the young one's TTL
    expect(s.redeemCode(code, clock.now())).toBeUndefined()
  })

  it('runs the sweep on its own timer, at the clock it was given', async () => {
    store = createAuthRequestStore({ clock, sweepEveryMs: 5 })
    store.create(PARAMS, clock.now() - AUTH_REQUEST_TTL_MS)
    store.create(PARAMS, clock.now())
    expect(store.size()).toBe(2)
    for (let i = 0; i < 100 && store.size() > 1; i++) await Bun.sleep(5)
    expect(store.size()).toBe(1)
  })
})

function newStoreLike(): SweptAuthRequestStore {
  return createAuthRequestStore({ clock })
}
