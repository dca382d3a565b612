// The authentication gate's parts: the adaptive concurrency window (AIMD, admin bypass once per 10 s) and the gate that
// answers 429 SERVER_TOO_MANY_REQUESTS and reports each outcome, and what the gate tells the failed-login throttle of
// each method's login. Issue 12, part G; the throttle's own rules are in auth-throttle.test.ts.
import { describe, expect, it } from 'bun:test'
import { AdaptiveWindow, AUTH_WINDOW_DEFAULTS, type AuthWindowSettings } from '../../../src/flows/authenticate/auth-rate-window.ts'
import { LOGIN_THROTTLE_DEFAULTS } from '../../../src/flows/authenticate/auth-throttle.ts'
import { createAuthGate, loginAttemptOf, type LoginOutcome } from '../../../src/flows/authenticate/auth-gate.ts'
import { SignJWT } from 'jose'
import { ApiError } from '../../../src/errors/api-error.ts'
import { BoundedMap } from '../../../src/lib/bounded-map.ts'
import { codeOfAsync } from '../../support/api-error-code.ts'

const clockAt = (start = 0) => {
  const c = { t: start, now: () => c.t }
  return c
}
const window = (over: Partial<AuthWindowSettings>, now: () => number) => new AdaptiveWindow({ ...AUTH_WINDOW_DEFAULTS, ...over }, now)
const notAdmin = () => false

describe('AdaptiveWindow', () => {
  it('case=starts at maxSize and refuses the authentication beyond it', () => {
    const c = clockAt()
    const w = window({ minSize: 5, maxSize: 6 }, c.now)
    const entries = Array.from({ length: 6 }, () => w.tryEnter(notAdmin))
    expect(entries.every((e) => e !== undefined)).toBe(true)
    expect(w.tryEnter(notAdmin)).toBeUndefined()
    entries[0]!.leave({ failed: false })
    expect(w.tryEnter(notAdmin)).toBeDefined()
  })

  it('case=shrinks by 10 % on a server failure or a slow authentication, never below minSize', () => {
    const c = clockAt()
    const w = window({ minSize: 5, maxSize: 10, slowMs: 1000 }, c.now)
    w.tryEnter(notAdmin)!.leave({ failed: true })
    expect(w.currentSize).toBeCloseTo(9)
    const slow = w.tryEnter(notAdmin)!
    c.t += 1001
    slow.leave({ failed: false })
    expect(w.currentSize).toBeCloseTo(8.1)
    for (let i = 0; i < 50; i++) w.tryEnter(notAdmin)!.leave({ failed: true })
    expect(w.currentSize).toBe(5)
  })

  it('case=grows by 1/size per completion in time, up to maxSize', () => {
    const c = clockAt()
    const w = window({ minSize: 5, maxSize: 7 }, c.now)
    for (let i = 0; i < 3; i++) w.tryEnter(notAdmin)!.leave({ failed: true })
    const shrunk = w.currentSize
    w.tryEnter(notAdmin)!.leave({ failed: false })
    expect(w.currentSize).toBeCloseTo(shrunk + 1 / shrunk)
    for (let i = 0; i < 100; i++) w.tryEnter(notAdmin)!.leave({ failed: false })
    expect(w.currentSize).toBe(7)
  })

  it('case=a full window lets an admin through at most once per 10 s; leave twice counts once', () => {
    const c = clockAt()
    const w = window({ minSize: 5, maxSize: 5 }, c.now)
    for (let i = 0; i < 5; i++) w.tryEnter(notAdmin)
    expect(w.tryEnter(() => true)).toBeDefined()
    expect(w.tryEnter(() => true)).toBeUndefined()
    c.t += 9_999
    expect(w.tryEnter(() => true)).toBeUndefined()
    c.t += 1
    const bypass = w.tryEnter(() => true)!
    expect(w.inFlight).toBe(7)
    bypass.leave({ failed: false })
    bypass.leave({ failed: false })
    expect(w.inFlight).toBe(6)
  })

  it('case=disabled, it admits everyone', () => {
    const w = window({ enabled: false, minSize: 5, maxSize: 5 }, clockAt().now)
    for (let i = 0; i < 20; i++) expect(w.tryEnter(notAdmin)).toBeDefined()
  })
})

describe('createAuthGate', () => {
  const gate = (outcomes: string[], c = clockAt()) =>
    createAuthGate({
      window: { ...AUTH_WINDOW_DEFAULTS, minSize: 5, maxSize: 5 },
      throttle: { ...LOGIN_THROTTLE_DEFAULTS, freeFailures: 1 },
      monotonicNow: c.now,
      clockNow: c.now,
      isAdminUsername: (u) => u === 'admin',
      outcome: (method: string, o: LoginOutcome) => outcomes.push(`${method}:${o}`),
    })
  const refuse = (code: 'INVALID_AUTH' | 'COULD_NOT_VALIDATE') => () => Promise.reject(new ApiError(code))

  it('case=counts wrong credentials toward the throttle and answers 429 with Retry-After once it applies', async () => {
    const outcomes: string[] = []
    const g = gate(outcomes)
    const attempt = (password: string) => ({ source: '10.0.0.1', username: 'bob', credential: password })
    for (let i = 0; i < 2; i++) expect(await codeOfAsync(g.run('password', attempt(`wrong-${i}`), refuse('INVALID_AUTH')))).toBe('401 INVALID_AUTH')
    const refused = await g.run('password', attempt('right'), () => Promise.resolve('never')).catch((e: ApiError) => e)
    expect(refused).toBeInstanceOf(ApiError)
    expect((refused as ApiError).code).toBe('SERVER_TOO_MANY_REQUESTS')
    expect((refused as ApiError).headers).toEqual({ 'retry-after': '1' })
    // a malformed request is not a failed guess
    expect(await codeOfAsync(g.run('password', { source: '10.0.0.2', username: 'x' }, refuse('COULD_NOT_VALIDATE')))).toBe('400 COULD_NOT_VALIDATE')
    expect(await codeOfAsync(g.run('password', { source: '10.0.0.2', username: 'x' }, refuse('COULD_NOT_VALIDATE')))).toBe('400 COULD_NOT_VALIDATE')
    expect(await g.run('cert', { source: '10.0.0.2' }, () => Promise.resolve('ok'))).toBe('ok')
    expect(outcomes).toEqual(['password:failure', 'password:failure', 'password:throttled', 'password:invalid', 'password:invalid', 'cert:success'])
  })

  it('case=parallel guesses at one username: the one that would have to wait is refused while the others run', async () => {
    const outcomes: string[] = []
    const g = gate(outcomes)
    const held: (() => void)[] = []
    // freeFailures 1: two attempts may run at once, a third would wait if both failed
    const running = [0, 1].map((i) =>
      g.run('password', { source: `10.5.0.${i}`, username: 'eve', credential: `g${i}` }, () => new Promise<never>((_, reject) => held.push(() => reject(new ApiError('INVALID_AUTH'))))),
    )
    const third = await g.run('password', { source: '10.5.0.9', username: 'eve', credential: 'g9' }, () => Promise.resolve('never')).catch((e: ApiError) => e)
    expect((third as ApiError).headers).toEqual({ 'retry-after': '1' })
    for (const release of held) release()
    for (const r of running) expect(await codeOfAsync(r)).toBe('401 INVALID_AUTH')
    // a refused window settles the throttle's ticket too: nothing stays in flight
    const full = Array.from({ length: 5 }, () => g.window.tryEnter(() => false)!)
    expect(await codeOfAsync(g.run('password', { source: '10.5.1.1', username: 'frank', credential: 'p' }, () => Promise.resolve('never')))).toBe('429 SERVER_TOO_MANY_REQUESTS')
    for (const h of full) h.leave({ failed: false })
    expect(await g.run('password', { source: '10.5.1.2', username: 'frank', credential: 'p' }, () => Promise.resolve('in'))).toBe('in')
    expect(outcomes).toEqual(['password:throttled', 'password:failure', 'password:failure', 'password:throttled', 'password:success'])
  })

  it('case=a full window answers 429 without Retry-After; a server error shrinks it; an admin passes once', async () => {
    const outcomes: string[] = []
    const g = gate(outcomes)
    const held: (() => void)[] = []
    const running = Array.from({ length: 5 }, (_, i) =>
      g.run('password', { source: `s${i}`, username: `u${i}` }, () => new Promise<string>((r) => held.push(() => r('ok')))),
    )
    const refused = await g.run('password', { source: 'x', username: 'u' }, () => Promise.resolve('never')).catch((e: ApiError) => e)
    expect((refused as ApiError).code).toBe('SERVER_TOO_MANY_REQUESTS')
    expect((refused as ApiError).headers).toBeUndefined()
    expect(await g.run('password', { source: 'x', username: 'admin' }, () => Promise.resolve('admin in'))).toBe('admin in')
    for (const release of held) release()
    expect(await Promise.all(running)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok'])
    await g.run('password', { source: 'y' }, () => Promise.reject(new Error('boom'))).catch(() => {})
    expect(g.window.currentSize).toBe(5)
    expect(outcomes.filter((o) => o === 'password:error')).toHaveLength(1)
  })
})

describe('loginAttemptOf', () => {
  const input = (over: { username?: string; password?: string; authorization?: string }) => ({
    username: over.username,
    password: over.password,
    header: (name: string) => (name === 'authorization' ? (over.authorization ?? null) : null),
  })
  const peer = (certChainDer: Uint8Array[] = []) => ({ remoteAddress: '10.1.2.3', certChainDer })

  it('case=a password login is its username and password; a certificate login its leaf\'s SHA-1 fingerprint', () => {
    expect(loginAttemptOf('updb', input({ username: 'u', password: 'p' }), peer())).toEqual({ source: '10.1.2.3', username: 'u', credential: 'p' })
    const leaf = new Uint8Array([1, 2, 3])
    expect(loginAttemptOf('cert', input({}), peer([leaf, new Uint8Array([9])]))).toEqual({
      source: '10.1.2.3',
      subject: `cert ${new Bun.CryptoHasher('sha1').update(leaf).digest('hex')}`,
    })
    expect(loginAttemptOf('cert', input({}), peer())).toEqual({ source: '10.1.2.3', subject: undefined })
  })

  it('case=an ext-jwt login is the issuer and subject its first token claims (unverified), else its Authorization header', async () => {
    const key = new TextEncoder().encode('k'.repeat(32))
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://idp').setSubject('alice').sign(key)
    const noSub = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://idp').sign(key)
    const authorization = `Bearer ${token}, Bearer ${noSub}`
    expect(loginAttemptOf('extJwt', input({ authorization }), peer())).toEqual({ source: '10.1.2.3', subject: 'jwt ["https://idp","alice"]' })
    expect(loginAttemptOf('extJwt', input({ authorization: `Bearer ${noSub}` }), peer())).toEqual({ source: '10.1.2.3', credential: `Bearer ${noSub}` })
    expect(loginAttemptOf('extJwt', input({ authorization: 'Bearer not-a-jwt' }), peer())).toEqual({ source: '10.1.2.3', credential: 'Bearer not-a-jwt' })
    expect(loginAttemptOf('extJwt', input({}), peer())).toEqual({ source: '10.1.2.3', credential: undefined })
  })
})
