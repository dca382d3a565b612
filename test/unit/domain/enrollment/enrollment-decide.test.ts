// Redeeming an enrollment (controller-behaviour.md §6 "Enrollment errors"): unknown or used token
// INVALID_ENROLLMENT_TOKEN, expired ENROLLMENT_EXPIRED; one outstanding enrollment per method.
import { describe, expect, it } from 'bun:test'
import { decideNewEnrollment, decideRedeemable } from '../../../../src/domain/enrollment/enrollment-decide.ts'
import type { Enrollment } from '../../../../src/domain/enrollment/enrollment-types.ts'
import { codeOf } from '../../../support/api-error-code.ts'

const ott: Enrollment = {
  id: 'e1', method: 'ott', identityId: 'i1', token: 't', jwt: 'j', expiresAt: 1_000, caId: null, username: null, createdAt: 0, updatedAt: 0,
}

describe('decideRedeemable', () => {
  it('answers the enrollment until just before its expiresAt', () => {
    expect(decideRedeemable(ott, 'ott', 999)).toBe(ott)
  })
  it('refuses it from its expiresAt on with ENROLLMENT_EXPIRED', () => {
    expect(codeOf(() => decideRedeemable(ott, 'ott', 1_000))).toBe('400 ENROLLMENT_EXPIRED')
  })
  it('refuses no enrollment, or one of another method, with INVALID_ENROLLMENT_TOKEN', () => {
    expect(codeOf(() => decideRedeemable(undefined, 'ott', 0))).toBe('400 INVALID_ENROLLMENT_TOKEN')
    expect(codeOf(() => decideRedeemable(ott, 'updb', 0))).toBe('400 INVALID_ENROLLMENT_TOKEN')
  })
})

describe('decideNewEnrollment', () => {
  it('refuses a second outstanding enrollment of a method with 409 ENROLLMENT_EXISTS', () => {
    expect(codeOf(() => decideNewEnrollment([ott], 'ott'))).toBe('409 ENROLLMENT_EXISTS')
    expect(codeOf(() => decideNewEnrollment([ott], 'updb'))).toBe('no error')
  })
})
