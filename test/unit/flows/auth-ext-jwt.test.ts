// The header handling of ext-jwt authentication (src/flows/authenticate/auth-ext-jwt.ts): which bearer tokens of a
// request count (at most three, controller-behaviour.md §4) and the WWW-Authenticate challenge of a refusal (the
// real controller's errorz realms, `id` and `issuer` joined by |).
import { describe, expect, it } from 'bun:test'
import { bearerTokens, extJwtChallenge, PRIMARY_EXT_JWT_REALM } from '../../../src/flows/authenticate/auth-ext-jwt.ts'

describe('bearerTokens', () => {
  it('answers the Bearer tokens of joined Authorization headers, case-insensitively, at most three', () => {
    expect(bearerTokens(null)).toEqual([])
    expect(bearerTokens('Bearer a.b.c')).toEqual(['a.b.c'])
    expect(bearerTokens('bearer a, Basic eHh4, BEARER b,Bearer c, Bearer d')).toEqual(['a', 'b', 'c'])
    expect(bearerTokens('Bearer')).toEqual([])
    expect(bearerTokens('Bearer a b')).toEqual([])
  })
})

describe('extJwtChallenge', () => {
  it('names the realm, the error and its description, and the signers', () => {
    expect(extJwtChallenge(PRIMARY_EXT_JWT_REALM, 'expired', [{ id: 's1', issuer: 'https://a' }, { id: 's2', issuer: 'https://b' }])).toBe(
      'Bearer realm="openziti-primary-ext-jwt" error="expired" error_description="token expired" id="s1|s2" issuer="https://a|https://b"',
    )
  })
})
