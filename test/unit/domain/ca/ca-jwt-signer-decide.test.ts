// The pure rules of external JWT signers (src/domain/ca/ca-jwt-signer-decide.ts): how a write lays its fields over
// the stored signer, and what a signer must be (edge-api management.yml externalJwtSignerCreate; the README's
// differences: audience required, plain http only to loopback JWKS endpoints).
import { describe, expect, it } from 'bun:test'
import { decideJwtSigner, mergeJwtSignerFields, type JwtSignerSettings } from '../../../../src/domain/ca/ca-jwt-signer-decide.ts'
import type { ExternalJwtSigner, ExternalJwtSignerReads } from '../../../../src/domain/ca/ca-jwt-signer-types.ts'
import { EntityTable } from '../../../../src/lib/entity-table.ts'
import { codeOf } from '../../../support/api-error-code.ts'

function readsOf(...signers: Partial<ExternalJwtSigner>[]): ExternalJwtSignerReads {
  const table = new EntityTable<ExternalJwtSigner>()
  for (const s of signers) table.put(s as ExternalJwtSigner)
  return {
    jwtSigners: table,
    jwtSignerByKid: (kid) => table.all().find((s) => s.kid === kid),
    jwtSignerByIssuer: (iss) => table.all().find((s) => s.issuer === iss),
  }
}

const valid = mergeJwtSignerFields(undefined, { name: 'n', issuer: 'https://i', audience: 'a', enabled: true, jwksEndpoint: 'https://i/keys' })
const refusal = (reads: ExternalJwtSignerReads, s: JwtSignerSettings, selfId?: string) => codeOf(() => decideJwtSigner(reads, s, selfId), { withCause: true })

describe('mergeJwtSignerFields', () => {
  it('starts a create or PUT from the defaults', () => {
    expect(valid).toMatchObject({ claimsProperty: 'sub', useExternalId: false, targetToken: 'ACCESS', scopes: [], kid: null, certPem: null, tags: {} })
  })

  it('PATCH keeps absent members, clears nullable ones given null, and ignores null for the others', () => {
    const stored = { ...valid, kid: 'k', clientId: 'c', enabled: true, claimsProperty: 'email' }
    expect(mergeJwtSignerFields(stored, { kid: null, enabled: null, claimsProperty: null, name: 'm' })).toEqual({ ...stored, kid: null, name: 'm' })
  })
})

describe('decideJwtSigner', () => {
  it('reads empty optional strings as absent', () => {
    expect(decideJwtSigner(readsOf(), { ...valid, kid: ' ', claimsProperty: '', clientId: '', externalAuthUrl: '' })).toMatchObject({
      kid: null,
      claimsProperty: 'sub',
      clientId: null,
      externalAuthUrl: null,
    })
  })

  it('needs exactly one of certPem and jwksEndpoint', () => {
    expect(refusal(readsOf(), { ...valid, jwksEndpoint: null })).toStartWith('400 COULD_NOT_VALIDATE certPem')
    expect(refusal(readsOf(), { ...valid, certPem: 'PEM' })).toStartWith('400 COULD_NOT_VALIDATE certPem')
  })

  it('accepts https JWKS endpoints anywhere and plain http only on loopback', () => {
    for (const url of ['https://idp.example.com/keys', 'http://127.0.0.1:8080/k', 'http://localhost/k', 'http://[::1]:9/k']) {
      expect(refusal(readsOf(), { ...valid, jwksEndpoint: url })).toBe('no error')
    }
    for (const url of ['http://idp.example.com/k', 'http://10.0.0.1/k', 'file:///etc/keys', 'keys.json', 'https://']) {
      expect(refusal(readsOf(), { ...valid, jwksEndpoint: url })).toStartWith('400 COULD_NOT_VALIDATE jwksEndpoint')
    }
    expect(refusal(readsOf(), { ...valid, externalAuthUrl: 'http://idp.example.com/login' })).toBe('no error')
    expect(refusal(readsOf(), { ...valid, externalAuthUrl: 'javascript:alert(1)' })).toStartWith('400 COULD_NOT_VALIDATE externalAuthUrl')
  })

  it('keeps name, issuer and kid unique among the other signers, not against itself', () => {
    const reads = readsOf({ id: 'x', name: 'n', issuer: 'https://i', kid: 'k' })
    expect(refusal(reads, valid)).toStartWith('400 COULD_NOT_VALIDATE name')
    expect(refusal(reads, { ...valid, name: 'other' })).toStartWith('400 COULD_NOT_VALIDATE issuer')
    expect(refusal(reads, { ...valid, name: 'other', issuer: 'https://j', kid: 'k' })).toStartWith('400 COULD_NOT_VALIDATE kid')
    expect(refusal(reads, { ...valid, kid: 'k' }, 'x')).toBe('no error')
  })

  it('requires an issuer and an audience', () => {
    expect(refusal(readsOf(), { ...valid, issuer: '' })).toStartWith('400 COULD_NOT_VALIDATE issuer')
    expect(refusal(readsOf(), { ...valid, audience: ' ' })).toStartWith('400 COULD_NOT_VALIDATE audience')
  })
})

describe('decideJwtSigner: token enrollment settings', () => {
  const rules = (cert: boolean, extJwt: boolean) => ({ primary: { cert: { allowed: cert }, extJwt: { allowed: extJwt } } }) as never
  const policies: Record<string, ReturnType<typeof rules>> = { default: rules(true, true), 'cert-only': rules(true, false), 'jwt-only': rules(false, true) }
  const authPolicyOf = (id: string) => policies[id]
  const decide = (over: Partial<JwtSignerSettings>) => decideJwtSigner(readsOf(), { ...valid, ...over }, undefined, authPolicyOf)
  const fieldOf = (over: Partial<JwtSignerSettings>) => codeOf(() => decide(over), { withCause: true })

  it('fills the name selector /sub and the default auth policy when they are empty', () => {
    expect(decide({ enrollNameClaimsSelector: ' ', enrollAuthPolicyId: '' })).toMatchObject({ enrollNameClaimsSelector: '/sub', enrollAuthPolicyId: 'default' })
  })

  it('needs an existing policy that allows the primary login of each enrollment the signer allows', () => {
    expect(decide({ enrollToCertEnabled: true, enrollAuthPolicyId: 'cert-only' }).enrollAuthPolicyId).toBe('cert-only')
    expect(decide({ enrollToTokenEnabled: true, enrollAuthPolicyId: 'jwt-only' }).enrollAuthPolicyId).toBe('jwt-only')
    expect(fieldOf({ enrollAuthPolicyId: 'nope' })).toStartWith('400 COULD_NOT_VALIDATE enrollAuthPolicyId')
    expect(fieldOf({ enrollToTokenEnabled: true, enrollAuthPolicyId: 'cert-only' })).toStartWith('400 COULD_NOT_VALIDATE enrollAuthPolicyId')
    expect(fieldOf({ enrollToCertEnabled: true, enrollAuthPolicyId: 'jwt-only' })).toStartWith('400 COULD_NOT_VALIDATE enrollAuthPolicyId')
  })

  it('needs the selectors to be JSON pointers', () => {
    expect(fieldOf({ enrollNameClaimsSelector: '/a~2' })).toStartWith('400 COULD_NOT_VALIDATE enrollNameClaimsSelector')
    expect(fieldOf({ enrollAttributeClaimsSelector: '~' })).toStartWith('400 COULD_NOT_VALIDATE enrollAttributeClaimsSelector')
  })
})
