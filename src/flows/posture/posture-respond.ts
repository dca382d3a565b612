/**
 * A client reports its posture (`POST /posture-response`, `/posture-response-bulk`): the responses are checked,
 * applied to its API session's volatile posture data, and the answer lists the services whose posture outcome for
 * that session changed.
 * Rules:
 * - every response is checked before any is applied: a bad one refuses the whole request, nothing half-written
 * - a service is listed once per check kind whose outcome (passing, or its timeout) changed, with that kind's
 *   timeout and time left (-1 for kinds without a timeout)
 * Failure story: the posture store is memory only and written synchronously in one step, so there is nothing to undo.
 */
import type { PostureDataRegistry } from '../../actors/posture-data/posture-data-registry.ts'
import type { PolicyGraphActor } from '../../actors/policy-graph/policy-graph-actor.ts'
import type { PolicyReads } from '../../domain/policy/policy-reads.ts'
import { decidePostureResponse, type PostureResponseInput } from '../../domain/posture/posture-decide.ts'
import { NO_POSTURE_DATA, type PostureData } from '../../domain/posture/posture-types.ts'
import type { PostureEvaluator, PostureSession } from './posture-evaluate.ts'

export interface PostureRespondDeps {
  graph: PolicyGraphActor
  reads: PolicyReads
  posture: PostureDataRegistry
  evaluator: PostureEvaluator
}

export interface ChangedService {
  id: string
  name: string
  postureQueryType: string
  timeout: number
  timeoutRemaining: number
}

export function submitPostureResponses(
  deps: PostureRespondDeps,
  session: PostureSession,
  inputs: readonly PostureResponseInput[],
  bulk: boolean,
  now: number,
): ChangedService[] {
  const responses = inputs.map((r, i) => decidePostureResponse(r, bulk ? `[${i}].` : ''))
  const { before, after } = deps.posture.apply(session.id, responses, now)
  if (!deps.evaluator.anyChecks()) return []
  const g = deps.graph.snapshot()
  const out: ChangedService[] = []
  const outcomes = (serviceId: string, data: PostureData | undefined) => {
    const m = new Map<string, string>()
    for (const type of deps.reads.permissionsOf(session.identityId, serviceId)) {
      for (const p of deps.evaluator.policies(session, serviceId, type, now, data ?? NO_POSTURE_DATA)) {
        for (const c of p.checks) m.set(`${c.check.id}`, `${c.check.typeId}|${c.result.isPassing}|${c.result.timeoutAt}`)
      }
    }
    return m
  }
  for (const serviceId of deps.reads.servicesOfIdentity(session.identityId)) {
    const was = outcomes(serviceId, before)
    const is = outcomes(serviceId, after)
    const kinds = new Set<string>()
    for (const [checkId, state] of is) if (was.get(checkId) !== state) kinds.add(checkId)
    if (kinds.size === 0) continue
    const service = g.services.get(serviceId)
    const seen = new Set<string>()
    for (const type of deps.reads.permissionsOf(session.identityId, serviceId)) {
      for (const p of deps.evaluator.policies(session, serviceId, type, now, after)) {
        for (const c of p.checks) {
          if (!kinds.has(c.check.id) || seen.has(c.check.typeId)) continue
          seen.add(c.check.typeId)
          out.push({ id: serviceId, name: service?.name ?? serviceId, postureQueryType: c.check.typeId, timeout: c.result.timeout, timeoutRemaining: c.result.timeoutRemaining })
        }
      }
    }
  }
  return out
}
