/**
 * Enrollment methods as modules: the `EnrollmentMethod` interface every method implements (enroll-ott, enroll-ottca,
 * enroll-updb, enroll-erott for routers, and enroll-ca for CA auto-enrollment and enroll-token for enrollment by an
 * external JWT, which have no create-time part) and the registry the identity-create path and `POST /enroll`
 * dispatch through. Shaped after the real controller's enrollment modules
 * (`enrollment_mod_{ott,ottca,updb,erott,ca,token}.go`): a create-time part that makes the enrollment record stored with its
 * identity or router, and a redeem part that runs unauthenticated on `POST /enroll/<method>`.
 * - a method requested on create that no module with a create-time part handles: 400 COULD_NOT_VALIDATE, field
 *   `enrollment`, before anything is written
 * - a method named on `POST /enroll` that no module handles: 400 INVALID_ENROLL_METHOD
 * @see controller-behaviour.md §6; edge-api management.yml identityCreate.enrollment, enrollmentDetail
 */
import { ApiError } from '../../errors/api-error.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { modulesByMethod, moduleOrRefuse } from '../flow-modules.ts'
import type { NewEnrollment } from '../../domain/enrollment/enrollment-types.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'

/** One enrollment an admin asked for: `{ott: true}`, `{ottca: '<caId>'}`, `{updb: '<username>'}`. */
export interface EnrollmentRequest {
  readonly method: string
  /** The method's argument: the CA id (ottca) or the username (updb); absent for ott. */
  readonly arg?: string
  /** When the enrollment expires (epoch ms); absent: the configured enrollment duration from now. */
  readonly expiresAt?: number
  /** A re-enroll: the authenticator the enrollment replaces (its own username is no conflict for a updb enrollment). */
  readonly replacesAuthenticatorId?: string
}

/** Who an enrollment is for (the JWT's `sub`). */
export interface EnrollmentTarget {
  readonly kind: 'identity' | 'router'
  readonly id: string
  readonly name: string
}

/** The enrollment record a create-time part makes; the target's actor stores it with the target. */
export type EnrollmentDraft = NewEnrollment

/** A redeem request: the token from the query or body, the JSON body or the raw CSR text. */
export interface EnrollInput {
  readonly token?: string
  readonly body: unknown
  readonly contentType: string | null
  /** A request header by name (token enrollment reads `Authorization` and `ziti-token-issuer-id`). */
  readonly header?: (name: string) => string | null
}

/** The `data` of a successful enroll answer (certificates, controllers, username: per method). */
export type EnrollResult = Readonly<Record<string, unknown>>

/** One enrollment method. Implementations `satisfies EnrollmentMethod`. */
export interface EnrollmentMethod {
  /** The method's name on the wire: the JWT's `em` claim and the path of `POST /enroll/<method>`. */
  readonly method: string
  /**
   * Create time: checks the request and makes the enrollment stored with its target. Absent for methods that need no
   * prior record (CA auto-enrollment, certificate extension). Throws a coded ApiError.
   */
  prepare?(request: EnrollmentRequest, target: EnrollmentTarget): Promise<EnrollmentDraft>
  /** Redeem: proves the token (and, per method, the client certificate or CSR) and answers the result. */
  redeem(input: EnrollInput, peer: AuthPeer, change: ChangeContext): Promise<EnrollResult>
}

/** A module able to make the enrollment `request` asked for. */
export interface PlannedEnrollment {
  readonly module: EnrollmentMethod & Required<Pick<EnrollmentMethod, 'prepare'>>
  readonly request: EnrollmentRequest
}

export interface EnrollmentMethodRegistry {
  /** The module that redeems `method`; 400 INVALID_ENROLL_METHOD when none does. */
  resolve(method: string): EnrollmentMethod
  /**
   * A module with a create-time part for every request; 400 COULD_NOT_VALIDATE on `field` (default `enrollment`, the
   * identity create's member) otherwise.
   */
  plan(requests: readonly EnrollmentRequest[], given: unknown, field?: string): PlannedEnrollment[]
  names(): string[]
}

/** The enrollments the `enrollment` member of an identity create asks for, in the order ott, ottca, updb. */
export function requestedEnrollments(enrollment: { ott?: boolean; ottca?: string; updb?: string } | undefined): EnrollmentRequest[] {
  const out: EnrollmentRequest[] = []
  if (!enrollment) return out
  if (enrollment.ott === true) out.push({ method: 'ott' })
  if (enrollment.ottca) out.push({ method: 'ottca', arg: enrollment.ottca })
  if (enrollment.updb) out.push({ method: 'updb', arg: enrollment.updb })
  return out
}

/** A registry of `methods`. @throws TypeError when two modules claim the same name (a wiring bug). */
export function createEnrollmentMethodRegistry(methods: readonly EnrollmentMethod[]): EnrollmentMethodRegistry {
  const byName = modulesByMethod('enrollment', methods)
  return {
    resolve: (method) => moduleOrRefuse(byName, 'enrollment', method, 'INVALID_ENROLL_METHOD'),
    plan(requests, given, field = 'enrollment') {
      return requests.map((request) => {
        const m = byName.get(request.method)
        if (!m?.prepare) throw ApiError.invalidField(field, `enrollment method '${request.method}' is not enabled on this controller`, given)
        return { module: m as PlannedEnrollment['module'], request }
      })
    },
    names: () => [...byName.keys()],
  }
}
