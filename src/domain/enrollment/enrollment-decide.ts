/**
 * Pure checks for redeeming an enrollment. Each throws ApiError; none mutates.
 * - a token that names no enrollment (never issued, already used, or its identity deleted): 400
 *   INVALID_ENROLLMENT_TOKEN
 * - a token of another method than the one redeemed: 400 INVALID_ENROLLMENT_TOKEN (the token is not valid there)
 * - an enrollment at or past its expiresAt: 400 ENROLLMENT_EXPIRED
 * - an identity has at most one outstanding enrollment per method: 409 ENROLLMENT_EXISTS
 * @see controller-behaviour.md §6 "Enrollment errors"
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Enrollment, EnrollmentMethodName } from './enrollment-types.ts'

/** The enrollment `token` redeems by `method` at `now`. */
export function decideRedeemable(enrollment: Enrollment | undefined, method: EnrollmentMethodName, now: number): Enrollment {
  if (!enrollment || enrollment.method !== method) throw new ApiError('INVALID_ENROLLMENT_TOKEN')
  if (enrollment.expiresAt <= now) throw new ApiError('ENROLLMENT_EXPIRED')
  return enrollment
}

/** A new enrollment of `method` for an identity that has `existing` ones. */
export function decideNewEnrollment(existing: Iterable<Enrollment>, method: EnrollmentMethodName): void {
  for (const e of existing) {
    if (e.method === method) {
      throw new ApiError('ENROLLMENT_EXISTS', { cause: { kind: 'field', field: 'method', reason: `an ${method} enrollment is outstanding`, value: method } })
    }
  }
}
