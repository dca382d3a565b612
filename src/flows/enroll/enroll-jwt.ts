/**
 * What every enrollment method makes at create time: a one-time token (a UUID) and the enrollment JWT that carries
 * it, signed by the CA actor with the TLS server key, and the enrollment's expiry. Also how a redeem names its token.
 * - claims: iss = the advertised https address, sub = the target's id, aud = [""], jti = the token, exp, em = the
 *   method, ctrls = the control-plane endpoints routers dial (`tls:host:port`: this node's, or every node's in a
 *   cluster; `ziti router enroll` saves them); no iat (controller-behaviour.md §6 "Enrollment JWT", oidc-and-ha.md)
 * - the enrollment expires at the requested expiresAt, else after the configured enrollment duration
 */
import { ApiError } from '../../errors/api-error.ts'
import { newUuid } from '../../lib/ids.ts'
import type { Clock } from '../../lib/clock.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { EnrollInput, EnrollmentRequest, EnrollmentTarget } from './enroll-method.ts'

export interface EnrollmentJwtDeps {
  ca: CaActor
  clock: Clock
  /** `https://host:port` clients reach the controller at (the JWT's iss, the answers' controllers). */
  advertisedUrl: () => string
  /** The control-plane endpoints routers dial, `tls:host:port` (the JWT's ctrls). */
  ctrlEndpoints: () => string[]
  /** The lifetime of an enrollment whose request names no expiresAt. */
  enrollmentDurationMs: number
}

/** The claims of an enrollment JWT. */
export function enrollmentClaims(opts: { advertisedUrl: string; ctrlEndpoints: string[]; subject: string; token: string; expiresAt: number; method: string }) {
  return {
    iss: opts.advertisedUrl,
    sub: opts.subject,
    aud: [''],
    jti: opts.token,
    exp: Math.floor(opts.expiresAt / 1000),
    em: opts.method,
    ctrls: opts.ctrlEndpoints,
  }
}

/** A new token, its signed JWT and the expiry, for an enrollment of `request.method` for `target`. */
export async function issueEnrollmentJwt(
  deps: EnrollmentJwtDeps,
  request: EnrollmentRequest,
  target: EnrollmentTarget,
): Promise<{ token: string; jwt: string; expiresAt: number }> {
  const token = newUuid()
  const expiresAt = request.expiresAt ?? deps.clock.now() + deps.enrollmentDurationMs
  const claims = enrollmentClaims({ advertisedUrl: deps.advertisedUrl(), ctrlEndpoints: deps.ctrlEndpoints(), subject: target.id, token, expiresAt, method: request.method })
  const jwt = await deps.ca.ask({ type: 'ca.signJwt', key: 'server', claims })
  return { token, jwt, expiresAt }
}

/** The token a redeem names (query, else the JSON body's `token`); 400 INVALID_ENROLLMENT_TOKEN when none. */
export function tokenOf(input: EnrollInput): string {
  const token = input.token ?? (input.body as { token?: unknown } | null)?.token
  if (typeof token !== 'string' || token === '') throw new ApiError('INVALID_ENROLLMENT_TOKEN')
  return token
}
