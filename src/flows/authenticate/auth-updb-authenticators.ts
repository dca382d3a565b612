/**
 * Creating and changing username/password authenticators.
 * - admin put/patch: new username (4..100) and/or password (5..100) — password hashed here, before asking the actor
 * - self-service: the current password must verify first, else 401 UNAUTHORIZED with a currentPassword cause
 * - every new password must satisfy the password rules of the identity's authentication policy (`decidePolicyPassword`,
 *   also used by updb enrollment): 400 COULD_NOT_VALIDATE on field `password` naming the rule
 */
import { ApiError } from '../../errors/api-error.ts'
import { hashPassword, verifyPassword } from '../../auth/auth-password.ts'
import { decideUpdbChange } from '../../domain/identity/identity-decide.ts'
import { decidePassword } from '../../domain/identity/identity-auth-policy.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import { authPolicyOf } from './auth-api-session.ts'
import type { Authenticator } from '../../domain/identity/identity-types.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'

export interface UpdbChange {
  username?: string | null
  password?: string | null
  tags?: Authenticator['tags']
  currentPassword?: string
}

/**
 * A password the authentication policy of identity `identityId` accepts (400 COULD_NOT_VALIDATE naming the rule).
 * An unknown identity is left to the identity actor, which refuses it with its own answer.
 */
export function decidePolicyPassword(reads: IdentityReads, identityId: string, password: string): string {
  const identity = reads.identity(identityId)
  return identity ? decidePassword(authPolicyOf(identity, reads).primary.updb, password) : password
}

export async function updateUpdbAuthenticator(
  identities: IdentityActor,
  authenticator: Authenticator,
  change: UpdbChange,
  replace: boolean,
  ctx: ChangeContext,
): Promise<void> {
  // checked before the argon2 work; the actor checks again as the authority
  decideUpdbChange(authenticator, change.username != null || change.password != null)
  if (change.currentPassword !== undefined) {
    const valid = authenticator.passwordHash ? await verifyPassword(authenticator.passwordHash, change.currentPassword) : false
    if (!valid) {
      throw new ApiError('UNAUTHORIZED', {
        cause: { kind: 'field', field: 'currentPassword', reason: 'invalid current password', value: '' },
      })
    }
  }
  if (change.password) decidePolicyPassword(identities.snapshot(), authenticator.identityId, change.password)
  const passwordHash = change.password ? await hashPassword(change.password) : undefined
  await identities.ask({
    type: 'authenticator.update',
    id: authenticator.id,
    username: change.username ?? undefined,
    passwordHash,
    tags: change.tags,
    replaceTags: replace,
    change: ctx,
  })
}

/** Creates a username/password authenticator: the password is hashed here, outside the actor's mailbox. */
export async function createUpdbAuthenticator(
  identities: IdentityActor,
  input: { identityId: string; username: string; password: string; tags: Authenticator['tags'] },
  ctx: ChangeContext,
): Promise<{ id: string }> {
  decidePolicyPassword(identities.snapshot(), input.identityId, input.password)
  const passwordHash = await hashPassword(input.password)
  return identities.ask({
    type: 'authenticator.createUpdb',
    identityId: input.identityId,
    username: input.username,
    passwordHash,
    tags: input.tags,
    change: ctx,
  })
}
