// The authentication seams (src/flows/authenticate): the method registry, and the API-session flow's policy decisions
// (controller-behaviour.md §4 "authQueries", "Authentication policies").
import { describe, expect, it } from 'bun:test'
import { createAuthMethodRegistry, type AuthMethod } from '../../../src/flows/authenticate/auth-method.ts'
import {
  authPolicyOf,
  decidePrimaryAllowed,
  decideSessionFactors,
  TOTP_AUTH_QUERY,
} from '../../../src/flows/authenticate/auth-api-session.ts'
import { DEFAULT_AUTH_POLICY_RULES, defaultAuthPolicy, type AuthPolicyRules } from '../../../src/domain/identity/identity-auth-policy.ts'
import { codeOf } from '../../support/api-error-code.ts'

const method = (name: string, kind: AuthMethod['kind'] = 'updb'): AuthMethod => ({
  method: name,
  kind,
  authenticate: () => Promise.reject(new Error('not called')),
})

describe('createAuthMethodRegistry', () => {
  it('resolves a registered method by its wire name', () => {
    const password = method('password')
    const registry = createAuthMethodRegistry([password, method('cert', 'cert')])
    expect(registry.resolve('password')).toBe(password)
    expect(registry.names()).toEqual(['password', 'cert'])
  })

  it('refuses a method no module is registered for with 400 INVALID_AUTH_METHOD', () => {
    const registry = createAuthMethodRegistry([method('password')])
    expect(codeOf(() => registry.resolve('cert'))).toBe('400 INVALID_AUTH_METHOD')
    expect(codeOf(() => registry.resolve('toString'))).toBe('400 INVALID_AUTH_METHOD')
    expect(codeOf(() => createAuthMethodRegistry([]).resolve('password'))).toBe('400 INVALID_AUTH_METHOD')
  })

  it('refuses two modules with the same wire name as a wiring bug', () => {
    expect(() => createAuthMethodRegistry([method('password'), method('password')])).toThrow(TypeError)
  })
})

const policy = (change: { primary?: Partial<AuthPolicyRules['primary']>; secondary?: Partial<AuthPolicyRules['secondary']> }): AuthPolicyRules => ({
  ...DEFAULT_AUTH_POLICY_RULES,
  primary: { ...DEFAULT_AUTH_POLICY_RULES.primary, ...change.primary },
  secondary: { ...DEFAULT_AUTH_POLICY_RULES.secondary, ...change.secondary },
})

describe('the API-session flow decisions', () => {
  it('the default policy allows every primary method and owes no second factor', () => {
    for (const kind of ['updb', 'cert', 'extJwt'] as const) decidePrimaryAllowed(DEFAULT_AUTH_POLICY_RULES, kind)
    expect(decideSessionFactors(DEFAULT_AUTH_POLICY_RULES, { totp: false }, { totp: false })).toEqual({
      isMfaRequired: false,
      isMfaComplete: false,
      authQueries: [],
    })
  })

  it('refuses a primary method the policy does not allow with 401 INVALID_AUTH', () => {
    const noPasswords = policy({ primary: { updb: { ...DEFAULT_AUTH_POLICY_RULES.primary.updb, allowed: false } } })
    expect(codeOf(() => decidePrimaryAllowed(noPasswords, 'updb'))).toBe('401 INVALID_AUTH')
    expect(codeOf(() => decidePrimaryAllowed(noPasswords, 'cert'))).toBe('no error')
  })

  it('owes a TOTP query while a verified TOTP or the policy asks for one and it is not complete', () => {
    const requireTotp = policy({ secondary: { requireTotp: true } })
    // policy requires TOTP, none enrolled: the query is pending but isMfaRequired stays false (as in the real controller)
    expect(decideSessionFactors(requireTotp, { totp: false }, { totp: false })).toEqual({
      isMfaRequired: false,
      isMfaComplete: false,
      authQueries: [TOTP_AUTH_QUERY],
    })
    expect(decideSessionFactors(DEFAULT_AUTH_POLICY_RULES, { totp: true }, { totp: false })).toEqual({
      isMfaRequired: true,
      isMfaComplete: false,
      authQueries: [TOTP_AUTH_QUERY],
    })
    expect(decideSessionFactors(requireTotp, { totp: true }, { totp: true })).toEqual({
      isMfaRequired: true,
      isMfaComplete: true,
      authQueries: [],
    })
  })

  it('reads the stored policy an identity names and refuses an unknown policy id as a bug', () => {
    const stored = defaultAuthPolicy(0)
    const policies = { authPolicy: (id: string) => (id === stored.id ? stored : undefined) }
    expect(authPolicyOf({ authPolicyId: 'default' }, policies)).toBe(stored)
    expect(() => authPolicyOf({ authPolicyId: 'nope' }, policies)).toThrow(TypeError)
  })
})
