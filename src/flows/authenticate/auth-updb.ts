/**
 * Username/password primary authentication (`method=password`), the first `AuthMethod`.
 * - username and password are both required (400 COULD_NOT_VALIDATE)
 * - unknown user and wrong password: 401 INVALID_AUTH, same answer and the cost of one argon2 verify
 * - an identity deleted while its password was being verified: 401 INVALID_AUTH
 * - a wrong password of a known user counts toward the lockout of the identity's policy (auth-lockout.ts); a right one
 *   starts the count again
 * - disabled identities, the policy's `primary.updb.allowed` and the session itself: `auth-api-session.ts`
 */
import { ApiError } from '../../errors/api-error.ts'
import { verifyAgainstDummy, verifyPassword } from '../../auth/auth-password.ts'
import type { AuthInput, AuthMethod, PrimaryAuth } from './auth-method.ts'
import { recordFailedAttempt, recordSuccess } from './auth-lockout.ts'
import type { IdentityDisableDeps } from '../identity/identity-disable.ts'

export type UpdbAuthDeps = IdentityDisableDeps

/** Lockout counting is the controller's own doing, not the caller's request. */
const SYSTEM = { author: 'system', source: 'system' } as const

export function createUpdbAuthMethod(deps: UpdbAuthDeps) {
  return {
    method: 'password',
    kind: 'updb',
    async authenticate(input: AuthInput): Promise<PrimaryAuth> {
      if (!input.username || !input.password) {
        throw ApiError.withMessage('COULD_NOT_VALIDATE', 'username and password fields are required')
      }
      const authenticator = deps.identities.snapshot().updbByUsername(input.username)
      if (!authenticator?.passwordHash) {
        await verifyAgainstDummy(input.password)
        throw ApiError.invalidAuth()
      }
      const valid = await verifyPassword(authenticator.passwordHash, input.password)
      // re-read after the await: the identity may have been deleted meanwhile
      const identity = deps.identities.snapshot().identity(authenticator.identityId)
      if (!identity) throw ApiError.invalidAuth()
      if (!valid) {
        await recordFailedAttempt(deps, identity.id, SYSTEM)
        throw ApiError.invalidAuth()
      }
      await recordSuccess(deps, identity.id, SYSTEM)
      return { identity, authenticator }
    },
  } as const satisfies AuthMethod
}
