/**
 * Creating an identity with the enrollments an admin asks for (`enrollment` of `POST /identities`).
 * - every requested method needs a registered enrollment module with a create-time part, else 400
 *   COULD_NOT_VALIDATE on field `enrollment`; the check runs before anything is written
 * - an `enrollment` member that asks for nothing (`{}`, `{ott: false}`, empty strings) creates the identity alone
 * - the enrollments will be stored by the identity actor in the identity's own transaction (one aggregate, so no
 *   failure story between them); that store arrives with the enrollment modules, and until then none is registered
 */
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { IdentityFields } from '../../actors/identity/identity-messages.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import { requestedEnrollments, type EnrollmentMethodRegistry } from '../enroll/enroll-method.ts'

export interface IdentityCreateDeps {
  identities: IdentityActor
  enrollments: EnrollmentMethodRegistry
}

export async function createIdentity(
  deps: IdentityCreateDeps,
  input: IdentityFields & { name: string },
  enrollment: { ott?: boolean; ottca?: string; updb?: string } | undefined,
  change: ChangeContext,
): Promise<{ id: string }> {
  const planned = deps.enrollments.plan(requestedEnrollments(enrollment), enrollment)
  if (planned.length > 0) {
    // a wiring error, not a client's: a module was registered before the store its enrollments go to
    throw new TypeError(`enrollment modules (${planned.map((p) => p.request.method).join(', ')}) are registered but enrollments cannot be stored yet`)
  }
  return deps.identities.ask({ type: 'identity.create', input, change })
}
