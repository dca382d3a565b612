// The pure rules of authentication policies (src/domain/identity/identity-auth-policy.ts): normalisation on persist
// (controller-behaviour.md §4 "Authentication policies"), password rules, lockout counting and the delete guard.
import { describe, expect, it } from 'bun:test'
import {
  allowsSigner,
  policiesNamingSigner,
  decideAuthPolicy,
  decideDeleteAuthPolicy,
  decideFailedAttempt,
  decidePassword,
  defaultAuthPolicy,
  DEFAULT_AUTH_POLICY_RULES,
  type AuthPolicy,
  type UpdbRules,
} from '../../../../src/domain/identity/identity-auth-policy.ts'
import { codeOf } from '../../../support/api-error-code.ts'

const lookup = (policies: AuthPolicy[] = [], signers: string[] = []) => ({
  authPolicy: (id: string) => policies.find((p) => p.id === id),
  authPolicyIdByName: (name: string) => policies.find((p) => p.name === name)?.id,
  knownSigner: (id: string) => signers.includes(id),
})

const updb = (change: Partial<UpdbRules>): UpdbRules => ({ ...DEFAULT_AUTH_POLICY_RULES.primary.updb, ...change })

describe('decideAuthPolicy', () => {
  it('fills a create from the default rules and normalises bounds as the real controller', () => {
    const p = decideAuthPolicy(lookup(), 'p1', undefined, { name: 'p', primary: { updb: { maxAttempts: -2, lockoutDurationMinutes: -5, minPasswordLength: 0 } } }, true, 7)
    expect(p.primary.updb).toEqual(updb({ maxAttempts: 0, lockoutDurationMinutes: 0, minPasswordLength: 5 }))
    expect(p).toMatchObject({ id: 'p1', name: 'p', tags: {}, createdAt: 7, updatedAt: 7 })
  })

  it('a patch keeps what it does not name; a put starts from the default rules', () => {
    const prev = decideAuthPolicy(lookup(), 'p1', undefined, { name: 'p', primary: { cert: { allowed: false } }, tags: { a: 'b' } }, true, 1)
    const patched = decideAuthPolicy(lookup([prev]), 'p1', prev, { primary: { updb: { requireNumberChar: true } } }, false, 2)
    expect(patched.primary.cert.allowed).toBe(false)
    expect(patched.primary.updb.requireNumberChar).toBe(true)
    expect(patched).toMatchObject({ name: 'p', tags: { a: 'b' }, createdAt: 1, updatedAt: 2 })
    const put = decideAuthPolicy(lookup([prev]), 'p1', prev, { name: 'p' }, true, 3)
    expect(put.primary.cert.allowed).toBe(true)
    expect(put.tags).toEqual({})
  })

  it('refuses an empty or taken name, an impossible minimum length and unknown signers, naming the field', () => {
    const taken = defaultAuthPolicy(0)
    const field = (input: Parameters<typeof decideAuthPolicy>[3], signers: string[] = []) =>
      codeOf(() => decideAuthPolicy(lookup([taken], signers), 'p2', undefined, input, true, 0), { withCause: true })
    expect(field({ name: ' ' })).toStartWith('400 COULD_NOT_VALIDATE name:')
    expect(field({ name: 'Default' })).toStartWith('400 COULD_NOT_VALIDATE name:')
    expect(field({ name: 'p', primary: { updb: { minPasswordLength: 101 } } })).toStartWith('400 COULD_NOT_VALIDATE primary.updb.minPasswordLength:')
    expect(field({ name: 'p', primary: { extJwt: { allowedSigners: ['s1', 's2'] } } }, ['s1'])).toStartWith('400 COULD_NOT_VALIDATE primary.extJwt.allowedSigners:')
    expect(field({ name: 'p', secondary: { requireExtJwtSigner: 's3' } }, ['s1'])).toStartWith('400 COULD_NOT_VALIDATE secondary.requireExtJwtSigner:')
    expect(field({ name: 'p', primary: { extJwt: { allowedSigners: ['s1'] } }, secondary: { requireExtJwtSigner: 's1' } }, ['s1'])).toBe('no error')
  })
})

describe('decideDeleteAuthPolicy', () => {
  const other = { ...defaultAuthPolicy(0), id: 'other', name: 'other' }
  it('refuses a referenced policy with 409 and the default policy always', () => {
    expect(codeOf(() => decideDeleteAuthPolicy(other, ['i1']))).toBe('409 CAN_NOT_DELETE_REFERENCED_ENTITY')
    expect(codeOf(() => decideDeleteAuthPolicy(defaultAuthPolicy(0), ['i1']))).toBe('409 CAN_NOT_DELETE_REFERENCED_ENTITY')
    expect(codeOf(() => decideDeleteAuthPolicy(defaultAuthPolicy(0), []))).toBe('400 ENTITY_CAN_NOT_BE_DELETED')
    expect(codeOf(() => decideDeleteAuthPolicy(undefined, []))).toBe('404 NOT_FOUND')
    expect(decideDeleteAuthPolicy(other, [])).toBe(other)
  })
})

describe('decidePassword', () => {
  const cases: [Partial<UpdbRules>, string, boolean][] = [
    [{}, 'abcde', true],
    [{ minPasswordLength: 8 }, 'abcdefg', false],
    [{ minPasswordLength: 8 }, 'abcdefgh', true],
    // length counts characters, not UTF-16 units
    [{ minPasswordLength: 6 }, '😀😀😀', false],
    [{ requireMixedCase: true }, 'alllower', false],
    [{ requireMixedCase: true }, 'ALLUPPER', false],
    [{ requireMixedCase: true }, 'MixedCase', true],
    [{ requireMixedCase: true }, 'Ünïcödé', true],
    [{ requireNumberChar: true }, 'no-digits', false],
    [{ requireNumberChar: true }, 'digit-1', true],
    [{ requireSpecialChar: true }, 'Letters123', false],
    [{ requireSpecialChar: true }, 'Letters 123', true],
    [{ requireSpecialChar: true }, 'Letters!123', true],
  ]
  for (const [rules, password, ok] of cases) {
    it(`${ok ? 'accepts' : 'refuses'} ${JSON.stringify(password)} under ${JSON.stringify(rules)}`, () => {
      const refusal = codeOf(() => decidePassword(updb(rules), password), { withCause: true })
      if (ok) expect(refusal).toBe('no error')
      else expect(refusal).toStartWith('400 COULD_NOT_VALIDATE password:')
    })
  }
})

describe('decideFailedAttempt', () => {
  it('counts nothing without maxAttempts', () => {
    expect(decideFailedAttempt(updb({}), 7, 0)).toEqual({ failures: 0, disable: null })
  })
  it('disables at the limit for lockoutDurationMinutes, or indefinitely for 0, and starts the count again', () => {
    expect(decideFailedAttempt(updb({ maxAttempts: 3 }), 1, 0)).toEqual({ failures: 2, disable: null })
    expect(decideFailedAttempt(updb({ maxAttempts: 3, lockoutDurationMinutes: 2 }), 2, 1000)).toEqual({ failures: 0, disable: { disabledAt: 1000, disabledUntil: 121_000 } })
    expect(decideFailedAttempt(updb({ maxAttempts: 1 }), 0, 5)).toEqual({ failures: 0, disable: { disabledAt: 5, disabledUntil: null } })
  })
})

describe('external JWT signers in a policy', () => {
  const rules = (allowed: boolean, allowedSigners: string[] | null, requireExtJwtSigner: string | null = null) => ({
    ...DEFAULT_AUTH_POLICY_RULES,
    primary: { ...DEFAULT_AUTH_POLICY_RULES.primary, extJwt: { allowed, allowedSigners } },
    secondary: { requireTotp: false, requireExtJwtSigner },
  })

  it('allowsSigner: null or empty allowedSigners let any signer in, a list only its own, never when ext-jwt is off', () => {
    expect(allowsSigner(rules(true, null).primary.extJwt, 's1')).toBe(true)
    expect(allowsSigner(rules(true, []).primary.extJwt, 's1')).toBe(true)
    expect(allowsSigner(rules(true, ['s2']).primary.extJwt, 's1')).toBe(false)
    expect(allowsSigner(rules(true, ['s2', 's1']).primary.extJwt, 's1')).toBe(true)
    expect(allowsSigner(rules(false, null).primary.extJwt, 's1')).toBe(false)
  })

  it('policiesNamingSigner: the policies that allow or require the signer, in id order', () => {
    const policies = [{ ...rules(true, ['s1']), id: 'b' }, { ...rules(true, null, 's1'), id: 'a' }, { ...rules(true, ['s2']), id: 'c' }]
    expect(policiesNamingSigner(policies, 's1')).toEqual(['a', 'b'])
    expect(policiesNamingSigner(policies, 's3')).toEqual([])
  })
})
