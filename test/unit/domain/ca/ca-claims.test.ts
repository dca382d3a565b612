// Claim extraction and identity naming of third-party CAs, against the real controller's x509-claims semantics
// (openziti/x509-claims locators, matchers, parsers; controller/model/ca_model.go GetExternalId) and
// controller-behaviour.md §6 "identityNameFormat".
import { describe, expect, it } from 'bun:test'
import { claimValuesOf, externalIdOf, formatIdentityName, uniqueIdentityName, type ClaimSource } from '../../../../src/domain/ca/ca-claims.ts'
import type { ExternalIdClaim } from '../../../../src/domain/ca/ca-types.ts'

const cert: ClaimSource = {
  subjectCn: 'user:ann.lee',
  uris: ['https://example.org/a', 'spiffe://td/w/1', 'spiffe://td/w/2'],
  emails: ['ann.lee@corp.example', 'x@other.example', 'bob@corp.example'],
}
const claim = (over: Partial<ExternalIdClaim>): ExternalIdClaim => ({
  location: 'COMMON_NAME', matcher: 'ALL', matcherCriteria: '', parser: 'NONE', parserCriteria: '', index: 0, ...over,
})

describe('claimValuesOf and externalIdOf', () => {
  it('reads the common name whole, or after a prefix, before a suffix, split', () => {
    expect(claimValuesOf(claim({}), cert)).toEqual(['user:ann.lee'])
    expect(claimValuesOf(claim({ matcher: 'PREFIX', matcherCriteria: 'user:' }), cert)).toEqual(['ann.lee'])
    expect(claimValuesOf(claim({ matcher: 'SUFFIX', matcherCriteria: '.lee' }), cert)).toEqual(['user:ann'])
    expect(claimValuesOf(claim({ matcher: 'PREFIX', matcherCriteria: 'admin:' }), cert)).toEqual([])
    expect(claimValuesOf(claim({ matcher: 'PREFIX', matcherCriteria: 'user:', parser: 'SPLIT', parserCriteria: '.' }), cert)).toEqual(['ann', 'lee'])
  })

  it('reads every matching e-mail SAN in order, each split, and indexes across all of them', () => {
    const c = claim({ location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.example', parser: 'SPLIT', parserCriteria: '.' })
    expect(claimValuesOf(c, cert)).toEqual(['ann', 'lee', 'bob'])
    expect(externalIdOf({ ...c, index: 2 }, cert)).toBe('bob')
    expect(externalIdOf({ ...c, index: 3 }, cert)).toBeNull()
  })

  it('keeps URI SANs of a scheme whole', () => {
    const c = claim({ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe' })
    expect(claimValuesOf(c, cert)).toEqual(['spiffe://td/w/1', 'spiffe://td/w/2'])
    expect(externalIdOf({ ...c, index: 1 }, cert)).toBe('spiffe://td/w/2')
    expect(claimValuesOf(claim({ location: 'SAN_URI' }), cert)).toHaveLength(3)
    expect(claimValuesOf(claim({ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spif' }), cert)).toEqual([])
  })

  it('finds no externalId in an empty value', () => {
    expect(externalIdOf(claim({ matcher: 'PREFIX', matcherCriteria: 'user:ann.lee' }), cert)).toBeNull()
    expect(externalIdOf(claim({}), { subjectCn: '', uris: [], emails: [] })).toBeNull()
  })
})

describe('formatIdentityName and uniqueIdentityName', () => {
  const values = { ca: { id: 'ca1', name: 'Corp CA' }, commonName: 'laptop', requestedName: 'mine', identityId: 'id9' }

  it('replaces every placeholder and keeps other text and unknown brackets', () => {
    expect(formatIdentityName('[caName]-[commonName]', values)).toBe('Corp CA-laptop')
    expect(formatIdentityName('[caId]/[requestedName]/[identityId]/[other]/[caName][caName]', values)).toBe('ca1/mine/id9/[other]/Corp CACorp CA')
  })

  it('appends a 6-digit counter on each collision, accumulating the suffixes', () => {
    const taken = new Set(['n', 'n000001', 'n000001000002'])
    expect(uniqueIdentityName('n', (x) => taken.has(x))).toBe('n000001000002000003')
    expect(uniqueIdentityName('free', (x) => taken.has(x))).toBe('free')
  })
})
