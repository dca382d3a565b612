/**
 * Posture enforcement at service session creation: a session for a service is refused when no service policy
 * granting the requested type passes its posture checks.
 * Rules:
 * - with no posture check anywhere, nothing is evaluated (every policy passes)
 * - refusal: 409 INVALID_POSTURE, cause `{message: "Failed to pass posture checks for service policies: [ids]",
 *   data: {<policyId>: [failed checks]}}` as the real controller answers (controller-behaviour.md §7)
 * - each refusal is recorded for the identity (`GET /identities/{id}/failed-service-requests`), newest last, bounded
 * Failure story: the record is memory only and written before the refusal is thrown; nothing else is written.
 */
import type { PostureDataRegistry } from '../../actors/posture-data/posture-data-registry.ts'
import { ApiError } from '../../errors/api-error.ts'
import type { Permission } from '../../domain/policy/policy-reads.ts'
import type { Service } from '../../domain/policy/policy-types.ts'
import type { PostureEvaluator, PolicyPosture, PostureSession } from './posture-evaluate.ts'

export interface PostureEnforceDeps {
  evaluator: PostureEvaluator
  posture: PostureDataRegistry
  /** The name of a service policy, for the failure record. */
  policyName(id: string): string
}

/** Throws INVALID_POSTURE (and records the refusal) when no policy granting `type` passes. */
export function enforcePosture(deps: PostureEnforceDeps, session: PostureSession, service: Service, type: Permission, now: number): void {
  if (!deps.evaluator.anyChecks()) return
  const policies = deps.evaluator.policies(session, service.id, type, now)
  if (policies.length === 0 || policies.some((p) => p.isPassing)) return
  const policyFailures = policies.map((p) => ({ policyId: p.policyId, policyName: deps.policyName(p.policyId), checks: failedChecks(p) }))
  deps.posture.recordFailure(session.identityId, {
    apiSessionId: session.id,
    serviceId: service.id,
    serviceName: service.name,
    sessionType: type,
    when: now,
    policyFailures,
  })
  throw new ApiError('INVALID_POSTURE', {
    cause: {
      kind: 'data',
      message: `Failed to pass posture checks for service policies: [${policies.map((p) => p.policyId).join(' ')}]`,
      data: Object.fromEntries(policyFailures.map((f) => [f.policyId, f.checks])),
    },
  })
}

function failedChecks(p: PolicyPosture): Record<string, unknown>[] {
  return p.checks
    .filter((c) => !c.result.isPassing)
    .map((c) => ({ postureCheckId: c.check.id, postureCheckName: c.check.name, postureCheckType: c.check.typeId, ...c.result.failure }))
}
