/**
 * Username/password enrollment (`updb`): an admin fixes the username when creating the identity
 * (`enrollment: {updb: "<username>"}`) or the enrollment (`POST /enrollments` with `username`); the client sets the
 * password with the one-time token (`POST /enroll/updb?token=… {password}` or the generic `?method=updb`).
 * - create: the username is required, 4 to 100 characters, and not held by another updb authenticator: 400
 *   COULD_NOT_VALIDATE (field username); the token, JWT (em = "updb") and expiry: enroll-jwt.ts
 * - redeem: token refusals as for ott (INVALID_ENROLLMENT_TOKEN, ENROLLMENT_EXPIRED); the username comes from the
 *   enrollment, a username in the body is not used; the password is required and 5 to 100 characters (the swagger
 *   bounds, the only password rules the default policy has): 400 COULD_NOT_VALIDATE (field password), where the
 *   real controller answers 500 for a missing one; then the password rules of the identity's authentication policy
 *   (400 COULD_NOT_VALIDATE on field password naming the rule; the real controller ignores them)
 * - the password is hashed (argon2id) before the identity actor is asked; ONE identity-actor message consumes the
 *   enrollment and creates the updb authenticator in one transaction (identity-actor `enrollment.redeemWithPassword`),
 *   which also refuses a username taken meanwhile and an identity that already has a updb authenticator
 * - answer `{username, controllers}`
 * @see controller-behaviour.md §6 "POST /enroll/updb"; controller/model/enrollment_mod_updb.go
 */
import { ApiError } from '../../errors/api-error.ts'
import { hashPassword } from '../../auth/auth-password.ts'
import { decideRedeemable } from '../../domain/enrollment/enrollment-decide.ts'
import { decideUpdbUsername } from '../../domain/identity/identity-decide.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { decidePolicyPassword } from '../authenticate/auth-updb-authenticators.ts'
import { issueEnrollmentJwt, tokenOf, type EnrollmentJwtDeps } from './enroll-jwt.ts'
import type { EnrollInput, EnrollmentDraft, EnrollmentMethod, EnrollmentRequest, EnrollmentTarget, EnrollResult } from './enroll-method.ts'

export interface UpdbEnrollDeps extends EnrollmentJwtDeps {
  identities: IdentityActor
}

/** The swagger bounds of usernames and passwords (edge-api `username`, `password`). */
const USERNAME_LENGTH = { min: 4, max: 100 } as const
const PASSWORD_LENGTH = { min: 5, max: 100 } as const

function decideLength(field: string, value: unknown, bounds: { min: number; max: number }): string {
  if (typeof value !== 'string' || value.length < bounds.min || value.length > bounds.max) {
    throw ApiError.invalidField(field, `${field} is required and must be ${bounds.min} to ${bounds.max} characters`, typeof value === 'string' ? undefined : value)
  }
  return value
}

export function createUpdbEnrollMethod(deps: UpdbEnrollDeps) {
  return {
    method: 'updb',
    async prepare(request: EnrollmentRequest, target: EnrollmentTarget): Promise<EnrollmentDraft> {
      const username = decideUpdbUsername(deps.identities.snapshot(), decideLength('username', request.arg, USERNAME_LENGTH), request.replacesAuthenticatorId)
      return { method: 'updb', ...(await issueEnrollmentJwt(deps, request, target)), caId: null, username }
    },
    async redeem(input: EnrollInput, _peer: AuthPeer, change: ChangeContext): Promise<EnrollResult> {
      const token = tokenOf(input)
      const enrollment = decideRedeemable(deps.identities.snapshot().enrollmentOfToken(token), 'updb', deps.clock.now())
      const password = decideLength('password', (input.body as { password?: unknown } | null)?.password, PASSWORD_LENGTH)
      decidePolicyPassword(deps.identities.snapshot(), enrollment.identityId, password)
      const passwordHash = await hashPassword(password)
      const { username } = await deps.identities.ask({ type: 'enrollment.redeemWithPassword', token, passwordHash, change })
      return { username, controllers: [deps.advertisedUrl()] }
    },
  } as const satisfies EnrollmentMethod
}
