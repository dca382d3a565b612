// The pure TOTP and recovery-code rules (src/domain/identity/identity-mfa.ts), against an independent generator
// (otpauth's TOTP at a timestamp): RFC 6238 §4 steps of 30 s, a window of one step either side, and §5.2's replay
// refusal (a step at or before the last one accepted never matches again).
import { describe, expect, it } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import {
  applyProof,
  isRecoveryCodeShaped,
  matchingTotpStep,
  provisioningUrl,
  totpStepAt,
  type Mfa,
} from '../../../../src/domain/identity/identity-mfa.ts'

const secret = new Secret({ size: 10 }).base32
const NOW = Date.parse('2026-03-01T12:00:10Z')
const codeAt = (ms: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: ms })

const record = (over: Partial<Mfa> = {}): Mfa => ({
  id: 'm1',
  identityId: 'i1',
  isVerified: true,
  secret,
  recoveryCodes: [],
  recoveryCodeHashes: ['h1', 'h2'],
  recoveryCodeSalt: 'salt',
  lastTotpStep: null,
  tags: {},
  createdAt: 0,
  updatedAt: 0,
  ...over,
})

describe('matchingTotpStep', () => {
  it('matches the codes of the steps before, at and after now, and answers their step', () => {
    const now = totpStepAt(NOW)
    for (const d of [-1, 0, 1]) expect(matchingTotpStep(record(), codeAt(NOW + d * 30_000), NOW)).toBe(now + d)
  })

  it('refuses codes two steps away', () => {
    for (const d of [-2, 2]) expect(matchingTotpStep(record(), codeAt(NOW + d * 30_000), NOW)).toBeUndefined()
  })

  it('refuses a step at or before the last accepted one (replay), and accepts a later one', () => {
    const now = totpStepAt(NOW)
    expect(matchingTotpStep(record({ lastTotpStep: now }), codeAt(NOW), NOW)).toBeUndefined()
    expect(matchingTotpStep(record({ lastTotpStep: now }), codeAt(NOW - 30_000), NOW)).toBeUndefined()
    expect(matchingTotpStep(record({ lastTotpStep: now }), codeAt(NOW + 30_000), NOW)).toBe(now + 1)
  })

  it('refuses anything that is not six digits', () => {
    const code = codeAt(NOW)
    for (const bad of ['', code.slice(1), `${code}0`, ` ${code}`, code.replace(/./, 'a'), '١٢٣٤٥٦']) {
      expect(matchingTotpStep(record(), bad, NOW)).toBeUndefined()
    }
  })
})

describe('applyProof', () => {
  it('records a TOTP step and refuses it (or an earlier one) afterwards', () => {
    const used = applyProof(record(), { kind: 'totp', step: 100 }, 5, false)!
    expect([used.lastTotpStep, used.updatedAt]).toEqual([100, 5])
    expect(applyProof(used, { kind: 'totp', step: 100 }, 6, false)).toBeUndefined()
    expect(applyProof(used, { kind: 'totp', step: 99 }, 6, false)).toBeUndefined()
  })

  it('uses a recovery code once, and only on a verified record where recovery codes are allowed', () => {
    const held = record({ recoveryCodes: ['AAAAAA', 'BBBBBB'], recoveryCodeHashes: [] })
    const used = applyProof(held, { kind: 'recovery', code: 'AAAAAA' }, 5, true)!
    expect([used.recoveryCodes, used.updatedAt]).toEqual([['BBBBBB'], 5])
    expect(applyProof(used, { kind: 'recovery', code: 'AAAAAA' }, 6, true)).toBeUndefined()
    expect(applyProof(held, { kind: 'recovery', code: 'BBBBBB' }, 6, false)).toBeUndefined()
    expect(applyProof({ ...held, isVerified: false }, { kind: 'recovery', code: 'BBBBBB' }, 6, true)).toBeUndefined()
    expect(applyProof(held, { kind: 'recovery', code: 'CCCCCC' }, 6, true)).toBeUndefined()
    // case-sensitive, as the real controller compares them
    expect(applyProof(held, { kind: 'recovery', code: 'aaaaaa' }, 6, true)).toBeUndefined()
  })

  it('uses a legacy recovery code (a record verified before schema 4) once by its hash', () => {
    const used = applyProof(record(), { kind: 'recovery', code: 'AAAAAA', hash: 'h1' }, 5, true)!
    expect(used.recoveryCodeHashes).toEqual(['h2'])
    expect(applyProof(used, { kind: 'recovery', code: 'AAAAAA', hash: 'h1' }, 6, true)).toBeUndefined()
    expect(applyProof(record(), { kind: 'recovery', code: 'BBBBBB', hash: 'h2' }, 6, false)).toBeUndefined()
    expect(applyProof(record({ isVerified: false }), { kind: 'recovery', code: 'BBBBBB', hash: 'h2' }, 6, true)).toBeUndefined()
    expect(applyProof(record(), { kind: 'recovery', code: 'CCCCCC', hash: 'nope' }, 6, true)).toBeUndefined()
    expect(applyProof(record(), { kind: 'recovery', code: 'CCCCCC' }, 6, true)).toBeUndefined()
  })
})

describe('provisioningUrl', () => {
  it('is the real controller\'s otpauth URL for a plain name', () => {
    expect(provisioningUrl('openziti.io', 'alice', 'ABCDEFGHIJKLMNOP')).toBe('otpauth://totp/openziti.io:alice?issuer=openziti.io&secret=ABCDEFGHIJKLMNOP')
  })

  it('escapes names and issuers that would break the URL', () => {
    const url = new URL(provisioningUrl('my ctrl', 'bob?x=1#&y', 'ABCDEFGHIJKLMNOP'))
    expect(url.searchParams.get('secret')).toBe('ABCDEFGHIJKLMNOP')
    expect(url.searchParams.get('issuer')).toBe('my ctrl')
    expect(url.host).toBe('totp')
    expect(decodeURIComponent(url.pathname)).toBe('/my ctrl:bob?x=1#&y')
  })
})

describe('isRecoveryCodeShaped', () => {
  it('takes six characters of the base32 alphabet, case-sensitively', () => {
    expect(isRecoveryCodeShaped('AB2C7Z')).toBe(true)
    for (const bad of ['ab2c7z', 'AB2C7', 'AB2C7ZZ', 'AB1C8Z', 'AB-C7Z']) expect(isRecoveryCodeShaped(bad)).toBe(false)
  })
})
