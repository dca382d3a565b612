// Posture check and posture response decisions (src/domain/posture/posture-decide.ts): defaults, patch semantics,
// normalisation. The API tests (test/api/posture-checks.api.test.ts) cover each refusal over HTTPS.
import { describe, expect, it } from 'bun:test'
import { decidePostureCheckSpec, decidePostureResponse, normaliseMac } from '../../../../src/domain/posture/posture-decide.ts'
import type { PostureCheck } from '../../../../src/domain/posture/posture-types.ts'
import { codeOf } from '../../../support/api-error-code.ts'

const stored = (spec: object) => ({ id: 'c', name: 'c', createdAt: 0, updatedAt: 0, tags: {}, roleAttributes: null, version: 1, ...spec }) as PostureCheck

describe('decidePostureCheckSpec', () => {
  it('gives MFA checks their defaults and keeps stored values on patch', () => {
    expect(decidePostureCheckSpec('MFA', {}, undefined, true)).toEqual({ typeId: 'MFA', timeoutSeconds: -1, promptOnWake: false, promptOnUnlock: false, ignoreLegacyEndpoints: false })
    const prev = stored({ typeId: 'MFA', timeoutSeconds: 30, promptOnWake: true, promptOnUnlock: true, ignoreLegacyEndpoints: true })
    expect(decidePostureCheckSpec(undefined, { promptOnWake: false }, prev, false)).toMatchObject({ timeoutSeconds: 30, promptOnWake: false, promptOnUnlock: true })
    expect(decidePostureCheckSpec(undefined, {}, prev, true)).toMatchObject({ timeoutSeconds: -1, promptOnWake: false })
  })
  it('stores hashes and fingerprints lowercase, fingerprints without colons', () => {
    const spec = decidePostureCheckSpec('PROCESS', { process: { osType: 'Linux', path: '/a', hashes: ['AB'.repeat(64)], signerFingerprint: 'AB:'.repeat(19) + 'AB' } }, undefined, true)
    expect(spec).toEqual({ typeId: 'PROCESS', process: { osType: 'Linux', path: '/a', hashes: ['ab'.repeat(64)], signerFingerprints: ['ab'.repeat(20)] } })
  })
  it('keeps the stored kind fields on a patch that does not name them', () => {
    const prev = stored({ typeId: 'PROCESS_MULTI', semantic: 'AnyOf', processes: [{ osType: 'Linux', path: '/a', hashes: [], signerFingerprints: [] }] })
    expect(decidePostureCheckSpec('PROCESS_MULTI', { semantic: 'allof' }, prev, false)).toMatchObject({ semantic: 'AllOf', processes: [{ path: '/a' }] })
    expect(codeOf(() => decidePostureCheckSpec('PROCESS_MULTI', { semantic: 'AllOf' }, prev, true), { withCause: true })).toBe('400 COULD_NOT_VALIDATE processes: processes is required for a PROCESS_MULTI posture check')
  })
  it('refuses a change of type', () => {
    expect(codeOf(() => decidePostureCheckSpec('MAC', { macAddresses: ['aabbccddeeff'] }, stored({ typeId: 'DOMAIN', domains: ['a'] }), false))).toBe('400 COULD_NOT_VALIDATE')
  })
})

describe('MAC addresses and posture responses', () => {
  it('normalises MAC addresses and refuses what is none', () => {
    expect(normaliseMac('AA-BB-CC-DD-EE-FF')).toBe('aabbccddeeff')
    expect(normaliseMac('aa:bb:cc:dd:ee:ff')).toBe('aabbccddeeff')
    for (const bad of ['aa:bb:cc:dd:ee', 'gg:bb:cc:dd:ee:ff', 'aabbccddeeff00', '']) expect(normaliseMac(bad)).toBeUndefined()
  })
  it('names the element of a bulk request in the field', () => {
    expect(codeOf(() => decidePostureResponse({ id: 'x', typeId: 'DOMAIN' }, '[3].'), { withCause: true })).toBe('400 COULD_NOT_VALIDATE [3].domain: domain is required for a DOMAIN posture response')
    expect(decidePostureResponse({ id: 'x', typeId: 'PROCESS', path: '/a', hash: 'AB', signerFingerprints: ['A:B'] })).toEqual({
      typeId: 'PROCESS', id: 'x', path: '/a', isRunning: false, hash: 'ab', signerFingerprints: ['ab'],
    })
  })
})
