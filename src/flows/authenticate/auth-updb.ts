/**
 * Username/password primary authentication.
 * - username and password are both required (400 COULD_NOT_VALIDATE)
 * - unknown user, wrong password, disabled identity: 401 INVALID_AUTH, same answer and the cost of one argon2 verify
 * - success creates an API session (token returned once; only its SHA-256 is kept) and records envInfo/sdkInfo
 */
import { ApiError } from '../../errors/api-error.ts'
import { newUuid } from '../../lib/ids.ts'
import type { Clock } from '../../lib/clock.ts'
import { verifyAgainstDummy, verifyPassword } from '../../auth/auth-password.ts'
import { isDisabled, type EnvInfo, type SdkInfo } from '../../domain/identity/identity-types.ts'
import { hashToken, type ApiSession } from '../../domain/session/session-types.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../actors/session-registry/session-registry-actor.ts'

export interface AuthenticateInput {
  username?: string
  password?: string
  configTypes?: string[]
  envInfo?: EnvInfo
  sdkInfo?: SdkInfo
  ipAddress: string
}

export interface AuthenticateDeps {
  identities: IdentityActor
  sessions: SessionRegistryActor
  clock: Clock
}

export async function authenticateUpdb(deps: AuthenticateDeps, input: AuthenticateInput): Promise<{ session: ApiSession; token: string }> {
  if (!input.username || !input.password) {
    throw ApiError.withMessage('COULD_NOT_VALIDATE', 'username and password fields are required')
  }
  const authenticator = deps.identities.snapshot().updbByUsername(input.username)
  if (!authenticator?.passwordHash) {
    await verifyAgainstDummy(input.password)
    throw ApiError.invalidAuth()
  }
  const valid = await verifyPassword(authenticator.passwordHash, input.password)
  // re-read after the await: the identity may have been deleted or disabled meanwhile
  const identity = deps.identities.snapshot().identity(authenticator.identityId)
  if (!valid || !identity || isDisabled(identity, deps.clock.now())) throw ApiError.invalidAuth()

  const token = newUuid()
  const { session } = await deps.sessions.ask({
    type: 'apiSession.create',
    session: {
      tokenHash: hashToken(token),
      identityId: identity.id,
      authenticatorId: authenticator.id,
      configTypes: input.configTypes ?? [],
      ipAddress: input.ipAddress,
      isMfaRequired: false,
      isMfaComplete: false,
      isCertExtendable: false,
      tags: {},
    },
    change: { author: identity.id, source: 'rest' },
  })
  if (hasNews(identity.envInfo, input.envInfo) || hasNews(identity.sdkInfo, input.sdkInfo)) {
    await deps.identities.ask({
      type: 'identity.recordClientInfo',
      id: identity.id,
      envInfo: input.envInfo,
      sdkInfo: input.sdkInfo,
      change: { author: identity.id, source: 'rest' },
    })
  }
  return { session, token }
}

function hasNews(current: object, given: object | undefined): boolean {
  return given !== undefined && JSON.stringify(current) !== JSON.stringify(given)
}
