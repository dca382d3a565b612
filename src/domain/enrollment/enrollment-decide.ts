/**
 * Pure checks for redeeming an enrollment. Each throws ApiError; none mutates.
 * - a token that names no enrollment (never issued, already used, or its identity deleted): 400
 *   INVALID_ENROLLMENT_TOKEN
 * - a token of another method than the one redeemed: 400 INVALID_ENROLLMENT_TOKEN (the token is not valid there)
 * - an enrollment at or past its expiresAt: 400 ENROLLMENT_EXPIRED
 * - a router enrollment: the same two refusals, from the router holding the token (routerOfEnrollmentToken)
 * - an identity has at most one outstanding enrollment per method: 409 ENROLLMENT_EXISTS
 * - an expiresAt an admin gives must be an RFC 3339 date-time in the future: 400 COULD_NOT_VALIDATE (field expiresAt)
 * @see controller-behaviour.md §6 "Enrollment errors"
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Enrollment, EnrollmentMethodName } from './enrollment-types.ts'
import type { Router } from '../policy/policy-types.ts'

/** The enrollment `token` redeems by `method` at `now`. */
export function decideRedeemable(enrollment: Enrollment | undefined, method: EnrollmentMethodName, now: number): Enrollment {
  if (!enrollment || enrollment.method !== method) throw new ApiError('INVALID_ENROLLMENT_TOKEN')
  if (enrollment.expiresAt <= now) throw new ApiError('ENROLLMENT_EXPIRED')
  return enrollment
}

/** The router whose outstanding enrollment `token` redeems at `now`: `router` is the one holding the token, if any. */
export function decideRouterRedeemable(router: Router | undefined, token: string, now: number): Router {
  if (!router || router.enrollment?.token !== token) throw new ApiError('INVALID_ENROLLMENT_TOKEN')
  if (router.enrollment.expiresAt <= now) throw new ApiError('ENROLLMENT_EXPIRED')
  return router
}

/** A new enrollment of `method` for an identity that has `existing` ones. */
export function decideNewEnrollment(existing: Iterable<Enrollment>, method: string): void {
  for (const e of existing) {
    if (e.method === method) {
      throw new ApiError('ENROLLMENT_EXISTS', { cause: { kind: 'field', field: 'method', reason: `an ${method} enrollment is outstanding`, value: method } })
    }
  }
}

/** The epoch ms of an admin's `expiresAt` (RFC 3339 date-time), which must lie after `now`. */
export function decideExpiresAt(expiresAt: string, now: number): number {
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(expiresAt) ? Date.parse(expiresAt) : NaN
  if (Number.isNaN(ms)) throw ApiError.invalidField('expiresAt', 'expiresAt must be an RFC 3339 date-time', expiresAt)
  if (ms <= now) throw ApiError.invalidField('expiresAt', 'expiresAt must be in the future', expiresAt)
  return ms
}
