/**
 * Creating an identity with the enrollments an admin asks for (`enrollment` of `POST /identities`).
 * - every requested method needs a registered enrollment module with a create-time part, else 400
 *   COULD_NOT_VALIDATE on field `enrollment`; the check runs before anything is written
 * - an `enrollment` member that asks for nothing (`{}`, `{ott: false}`, empty strings) creates the identity alone
 * - the enrollments are made first (each module signs its JWT for the identity id chosen here), then stored by the
 *   identity actor in the identity's own transaction: one aggregate, so an identity never exists without the
 *   enrollments asked for, nor the reverse. A refused create leaves only signed JWTs no record refers to (unusable).
 */
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { IdentityFields } from '../../actors/identity/identity-messages.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import { requestedEnrollments, type EnrollmentMethodRegistry } from '../enroll/enroll-method.ts'
import { decideName } from '../../domain/identity/identity-decide.ts'
import { newShortId } from '../../lib/ids.ts'

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
  if (planned.length === 0) return deps.identities.ask({ type: 'identity.create', input, change })
  // the identity's own checks first, so a refused name costs no signature
  decideName(deps.identities.snapshot(), input.name)
  const id = newShortId()
  const target = { kind: 'identity', id, name: input.name } as const
  const enrollments = await Promise.all(planned.map((p) => p.module.prepare(p.request, target)))
  return deps.identities.ask({ type: 'identity.create', input, id, enrollments, change })
}
