// Posture check evaluation per kind (src/domain/posture/posture-eval.ts) and version ranges (posture-version.ts):
// pass, fail and, for MFA, timeout and prompts, on explicit times.
import { describe, expect, it } from 'bun:test'
import { evaluateCheck } from '../../../../src/domain/posture/posture-eval.ts'
import { inVersionRange, parseVersionRange } from '../../../../src/domain/posture/posture-version.ts'
import { NO_POSTURE_DATA, type PostureCheck, type PostureCheckSpec, type PostureData, type SessionMfaState } from '../../../../src/domain/posture/posture-types.ts'

const T0 = Date.parse('2026-01-01T00:00:00Z')
const check = (spec: PostureCheckSpec): PostureCheck =>
  ({ id: 'c1', name: 'c1', createdAt: T0, updatedAt: T0, tags: {}, roleAttributes: null, version: 1, ...spec }) as PostureCheck
const data = (d: Partial<PostureData>): PostureData => ({ ...NO_POSTURE_DATA, version: 1, ...d })
const noMfa: SessionMfaState = { isMfaComplete: false, mfaCompletedAt: null }
const pass = (c: PostureCheck, d: PostureData | undefined, mfa = noMfa, now = T0) => evaluateCheck(c, d, mfa, now).isPassing

describe('version ranges', () => {
  const cases: [string, string, boolean][] = [
    ['10', '10.0.0', true],
    ['10', '10.0.1', false],
    ['>=10.0.19041 <11', '10.0.19045.2006', true],
    ['>=10.0.19041 <11', '10.0.17763', false],
    ['>=10.0.19041 <11', '11.0', false],
    ['<5 || >=6.1', '6.2', true],
    ['<5 || >=6.1', '5.5', false],
    ['!=5.4.0', '5.4', false],
    ['==5.4', '5.4.0', true],
    ['>1.2.3', 'v1.2.4-beta', true],
  ]
  for (const [range, version, want] of cases) {
    it(`${version} ${want ? 'is' : 'is not'} in ${range}`, () => {
      expect(inVersionRange(parseVersionRange(range)!, version)).toBe(want)
    })
  }
  it('refuses what is no range', () => {
    for (const bad of ['', '>=', 'ten', '1.2.3.4', '>=1 ||', '1..2']) expect(parseVersionRange(bad)).toBeUndefined()
  })
  it('does not match an unreadable reported version', () => {
    expect(inVersionRange(parseVersionRange('>=1')!, 'Sonoma')).toBe(false)
  })
})

describe('OS, DOMAIN, MAC and process checks', () => {
  it('OS: listed type (any case) and a version in one of its ranges; a type without versions takes any', () => {
    const c = check({ typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['>=10 <11'] }, { type: 'macOS', versions: [] }] })
    expect(pass(c, undefined)).toBe(false)
    expect(pass(c, data({ os: { postureCheckId: '', type: 'windows', version: '10.0.1', build: '', at: T0 } }))).toBe(true)
    expect(pass(c, data({ os: { postureCheckId: '', type: 'Windows', version: '6.1', build: '', at: T0 } }))).toBe(false)
    expect(pass(c, data({ os: { postureCheckId: '', type: 'macOS', version: 'x', build: '', at: T0 } }))).toBe(true)
    expect(evaluateCheck(c, undefined, noMfa, T0)).toMatchObject({ timeout: -1, timeoutRemaining: -1, timeoutAt: null, failure: { actualValue: { type: '', version: '' } } })
  })
  it('DOMAIN: equal to a listed domain in any case', () => {
    const c = check({ typeId: 'DOMAIN', domains: ['Corp.Example'] })
    expect(pass(c, data({ domain: { postureCheckId: '', name: 'corp.example', at: T0 } }))).toBe(true)
    expect(pass(c, data({ domain: { postureCheckId: '', name: 'corp.example.org', at: T0 } }))).toBe(false)
    expect(pass(c, undefined)).toBe(false)
  })
  it('MAC: any reported address listed, whatever the separators', () => {
    const c = check({ typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'] })
    expect(pass(c, data({ mac: { postureCheckId: '', addresses: ['00:00:00:00:00:00', 'AABBCCDDEEFF'], at: T0 } }))).toBe(true)
    expect(pass(c, data({ mac: { postureCheckId: '', addresses: ['aa:bb:cc:dd:ee:fe'], at: T0 } }))).toBe(false)
  })
  const proc = (o: Partial<{ isRunning: boolean; hash: string; signerFingerprints: string[] }>) =>
    data({ processes: { '/bin/a': { postureCheckId: '', path: '/bin/a', isRunning: true, hash: '', signerFingerprints: [], at: T0, ...o } } })
  it('PROCESS: running, with a listed hash and signer when the check names them', () => {
    const open = check({ typeId: 'PROCESS', process: { osType: 'Linux', path: '/BIN/A', hashes: [], signerFingerprints: [] } })
    expect(pass(open, proc({}))).toBe(true)
    expect(pass(open, proc({ isRunning: false }))).toBe(false)
    const strict = check({ typeId: 'PROCESS', process: { osType: 'Linux', path: '/bin/a', hashes: ['h1', 'h2'], signerFingerprints: ['f1'] } })
    expect(pass(strict, proc({ hash: 'h2', signerFingerprints: ['f0', 'f1'] }))).toBe(true)
    expect(pass(strict, proc({ hash: 'h3', signerFingerprints: ['f1'] }))).toBe(false)
    expect(pass(strict, proc({ hash: 'h1', signerFingerprints: [] }))).toBe(false)
  })
  it('PROCESS_MULTI: AllOf needs every process, AnyOf one', () => {
    const procs = [
      { osType: 'Linux' as const, path: '/bin/a', hashes: [], signerFingerprints: [] },
      { osType: 'Linux' as const, path: '/bin/b', hashes: [], signerFingerprints: [] },
    ]
    expect(pass(check({ typeId: 'PROCESS_MULTI', semantic: 'AllOf', processes: procs }), proc({}))).toBe(false)
    expect(pass(check({ typeId: 'PROCESS_MULTI', semantic: 'AnyOf', processes: procs }), proc({}))).toBe(true)
  })
})

describe('MFA checks', () => {
  const mfa = (o: Partial<{ timeoutSeconds: number; promptOnWake: boolean; promptOnUnlock: boolean }> = {}) =>
    check({ typeId: 'MFA', timeoutSeconds: -1, promptOnWake: false, promptOnUnlock: false, ignoreLegacyEndpoints: false, ...o })
  const done = { isMfaComplete: true, mfaCompletedAt: T0 }

  it('passes only once the session completed MFA', () => {
    expect(pass(mfa(), undefined)).toBe(false)
    expect(pass(mfa(), undefined, { isMfaComplete: true, mfaCompletedAt: null })).toBe(false)
    expect(pass(mfa(), undefined, done)).toBe(true)
  })
  it('counts the timeout down from the last MFA code and fails at its end; 0 and -1 mean none', () => {
    const c = mfa({ timeoutSeconds: 60 })
    expect(evaluateCheck(c, undefined, done, T0 + 15_500)).toMatchObject({ isPassing: true, timeout: 60, timeoutRemaining: 44, timeoutAt: T0 + 60_000 })
    const out = evaluateCheck(c, undefined, done, T0 + 60_000)
    expect(out).toMatchObject({ isPassing: false, timeoutRemaining: 0 })
    expect(out.failure).toMatchObject({ actualValue: { passedMfa: true, timedOut: true }, criteria: { timeoutSeconds: 60, passedMfaAt: new Date(T0).toISOString() } })
    for (const none of [0, -1]) expect(evaluateCheck(mfa({ timeoutSeconds: none }), undefined, done, T0 + 1e9)).toMatchObject({ isPassing: true, timeout: -1, timeoutRemaining: -1 })
  })
  it('with promptOnWake, fails after a wake later than the last code; promptOnUnlock likewise for unlocks', () => {
    const woken = data({ wokenAt: T0 + 1000 })
    expect(pass(mfa({ promptOnWake: true }), woken, done)).toBe(false)
    expect(pass(mfa({ promptOnWake: true }), woken, { isMfaComplete: true, mfaCompletedAt: T0 + 2000 })).toBe(true)
    expect(pass(mfa({ promptOnUnlock: true }), woken, done)).toBe(true)
    expect(pass(mfa({ promptOnUnlock: true }), data({ unlockedAt: T0 + 1 }), done)).toBe(false)
    expect(pass(mfa(), woken, done)).toBe(true)
  })
})
