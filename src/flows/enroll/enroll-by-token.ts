/**
 * The generic `POST /enroll?token=…` of older SDKs and routers: with `method` in the query it redeems by that method's
 * module, as before; without one (or with an empty one) it redeems by the method of the token's own enrollment record,
 * as the real controller does (`EnrollmentManager.getEnrollmentMethod`): an identity's ott, ottca or updb
 * enrollment, or a router's erott enrollment. The chosen module then reads the body as that method does (ott: the PEM
 * CSR or JSON `clientCsr`; ottca: the certificate on the TLS connection; updb: JSON `{password}`; erott: JSON
 * `{certCsr, serverCertCsr}` or `{clientCsr, serverCsr}`).
 * - no token (query, else the JSON body's `token`), or one no identity and no router holds: 400
 *   INVALID_ENROLLMENT_TOKEN
 * - a method no module redeems (named, or the record's): 400 INVALID_ENROLL_METHOD
 * - everything else (expiry, the body, the certificate, the write): the module, exactly as on its own path
 *
 * Failure story (two aggregates read, one written): finding the method reads the identity actor's snapshot, then the
 * policy graph's, and writes nothing. A token is a UUID that belongs to one record of one aggregate and never changes
 * method (a refresh or a re-enroll issues a new token). Between this lookup and the redemption the record may be
 * used, deleted with its identity or router, replaced by a refresh or re-enroll, or expire: the module decides the
 * token again against its own aggregate, before it reads the body and again in its actor's mailbox, so such a request
 * is refused (INVALID_ENROLLMENT_TOKEN, ENROLLMENT_EXPIRED) with nothing written. A redemption never runs by a method
 * the record does not have, and only the one actor of that method writes.
 * @see controller-behaviour.md §6 "Enroll endpoints"; controller/model/enrollment_manager.go getEnrollmentMethod
 */
import { ApiError } from '../../errors/api-error.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { tokenOf } from './enroll-jwt.ts'
import type { EnrollInput, EnrollmentMethodRegistry, EnrollResult } from './enroll-method.ts'

/** The method of every router enrollment (enroll-erott.ts). */
const ROUTER_ENROLLMENT_METHOD = 'erott'

export interface EnrollByTokenDeps {
  enrollments: Pick<EnrollmentMethodRegistry, 'resolve'>
  /** The identities' enrollments (the identity actor's snapshot). */
  identities: () => Pick<IdentityReads, 'enrollmentOfToken'>
  /** The routers' enrollments (the policy graph's snapshot). */
  routers: () => Pick<PolicyGraphReads, 'routerOfEnrollmentToken'>
}

export interface EnrollByToken {
  /** Redeems `input` by `method`, or by the method of its token's record when `method` is absent or empty. */
  redeem(method: string | undefined, input: EnrollInput, peer: AuthPeer, change: ChangeContext): Promise<EnrollResult>
}

export function createEnrollByToken(deps: EnrollByTokenDeps): EnrollByToken {
  /** The method of the enrollment record holding `token`; 400 INVALID_ENROLLMENT_TOKEN when none holds it. */
  const methodOfToken = (token: string): string => {
    const enrollment = deps.identities().enrollmentOfToken(token)
    if (enrollment) return enrollment.method
    if (deps.routers().routerOfEnrollmentToken(token)) return ROUTER_ENROLLMENT_METHOD
    throw new ApiError('INVALID_ENROLLMENT_TOKEN')
  }
  return {
    redeem(method, input, peer, change) {
      const module = deps.enrollments.resolve(method || methodOfToken(tokenOf(input)))
      return module.redeem(input, peer, change)
    },
  }
}
