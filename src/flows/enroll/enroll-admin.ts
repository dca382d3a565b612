/**
 * An admin's enrollments (`POST /enrollments`, `POST /enrollments/{id}/refresh`): made by the same enrollment modules
 * as on identity create, then stored by the identity actor.
 * - expiresAt is required and must be a date-time in the future: 400 COULD_NOT_VALIDATE (field expiresAt)
 * - a method no registered module can make: 400 COULD_NOT_VALIDATE (field method)
 * - an unknown identity: 400 COULD_NOT_VALIDATE (field identityId); an outstanding enrollment of the same method:
 *   409 ENROLLMENT_EXISTS (both decided again by the identity actor, which may have changed meanwhile)
 * - refresh gives the enrollment a new token and JWT with the new expiry; the old token stops working at once
 * - an enrollment JWT signed for a request that then fails is never stored, so it redeems nothing
 * - re-enroll (`POST /authenticators/{id}/re-enroll {expiresAt}`): a updb authenticator gives a updb enrollment of its
 *   username, a cert authenticator of a third-party CA an ottca enrollment of that CA, any other cert authenticator an
 *   ott enrollment; ONE identity-actor message removes the authenticator and stores the enrollment (409
 *   ENROLLMENT_EXISTS when one of that method is outstanding, and then the authenticator stays)
 * @see edge-api management.yml createEnrollment, refreshEnrollment; controller-behaviour.md §6
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import { decideExpiresAt, decideNewEnrollment } from '../../domain/enrollment/enrollment-decide.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { EnrollmentMethodRegistry, EnrollmentRequest } from './enroll-method.ts'

export interface EnrollAdminDeps {
  identities: IdentityActor
  enrollments: EnrollmentMethodRegistry
  clock: Clock
}

export interface EnrollmentCreateInput {
  identityId: string
  method: string
  expiresAt: string
  caId?: string | null
  username?: string | null
}

/** The target of an enrollment of `identityId`, or 400 on field identityId. */
function targetOf(deps: EnrollAdminDeps, identityId: string) {
  const identity = deps.identities.snapshot().identity(identityId)
  if (!identity) throw ApiError.invalidField('identityId', `no identity found with id '${identityId}'`, identityId)
  return { kind: 'identity', id: identity.id, name: identity.name } as const
}

export async function createEnrollment(deps: EnrollAdminDeps, input: EnrollmentCreateInput, change: ChangeContext): Promise<{ id: string }> {
  const expiresAt = decideExpiresAt(input.expiresAt, deps.clock.now())
  const arg = input.method === 'ottca' ? input.caId : input.method === 'updb' ? input.username : undefined
  const request: EnrollmentRequest = { method: input.method, ...(arg ? { arg } : {}), expiresAt }
  const [planned] = deps.enrollments.plan([request], input.method, 'method')
  const target = targetOf(deps, input.identityId)
  // checked before signing, and again by the actor
  decideNewEnrollment(deps.identities.snapshot().enrollmentsOf(target.id), request.method)
  const enrollment = await planned.module.prepare(request, target)
  return deps.identities.ask({ type: 'enrollment.create', identityId: target.id, enrollment, change })
}

/** Turns authenticator `id` back into an enrollment expiring at `expiresAtText`; answers the enrollment's id. */
export async function reEnrollAuthenticator(deps: EnrollAdminDeps, id: string, expiresAtText: string, change: ChangeContext): Promise<{ id: string }> {
  const authenticator = deps.identities.snapshot().authenticators.get(id)
  if (!authenticator) throw ApiError.notFound()
  const expiresAt = decideExpiresAt(expiresAtText, deps.clock.now())
  const replaces = { expiresAt, replacesAuthenticatorId: id }
  const request: EnrollmentRequest =
    authenticator.method === 'updb'
      ? { method: 'updb', arg: authenticator.username, ...replaces }
      : authenticator.caId !== undefined
        ? { method: 'ottca', arg: authenticator.caId, ...replaces }
        : { method: 'ott', ...replaces }
  const [planned] = deps.enrollments.plan([request], request.method, 'method')
  const target = targetOf(deps, authenticator.identityId)
  decideNewEnrollment(deps.identities.snapshot().enrollmentsOf(target.id), request.method)
  const enrollment = await planned.module.prepare(request, target)
  return deps.identities.ask({ type: 'authenticator.reEnroll', id, enrollment, change })
}

export async function refreshEnrollment(deps: EnrollAdminDeps, id: string, expiresAtText: string, change: ChangeContext): Promise<void> {
  const current = deps.identities.snapshot().enrollments.get(id)
  if (!current) throw ApiError.notFound()
  const expiresAt = decideExpiresAt(expiresAtText, deps.clock.now())
  const arg = current.caId ?? current.username ?? undefined
  const request: EnrollmentRequest = { method: current.method, ...(arg ? { arg } : {}), expiresAt }
  const [planned] = deps.enrollments.plan([request], current.method, 'method')
  const draft = await planned.module.prepare(request, targetOf(deps, current.identityId))
  await deps.identities.ask({ type: 'enrollment.refresh', id, token: draft.token, jwt: draft.jwt, expiresAt: draft.expiresAt, change })
}
