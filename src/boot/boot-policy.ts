/**
 * The derived, memory-only parts on top of the aggregates: the policy resolver's precomputed index, posture data and
 * its evaluator, identity traces, and the policy enforcer's timer that removes service sessions whose access was lost.
 */
import type { Clock } from '../lib/clock.ts'
import type { EventBus } from '../actors/runtime/event-bus.ts'
import { startPolicyResolver, type PolicyResolver } from '../actors/policy-resolver/policy-resolver.ts'
import { startPostureDataRegistry } from '../actors/posture-data/posture-data-registry.ts'
import { startIdentityTraceRegistry } from '../actors/identity-trace/identity-trace-registry.ts'
import { createPostureEvaluator } from '../flows/posture/posture-evaluate.ts'
import { sessionsWithoutAccess } from '../domain/session/service-session-types.ts'
import type { Actors } from './boot-actors.ts'

/** Service sessions removed per message by the policy enforcer. */
const ENFORCE_SLICE = 5_000

export interface PolicyParts {
  policyResolver: PolicyResolver
  reads: PolicyResolver['reads']
  posture: ReturnType<typeof startPostureDataRegistry>['registry']
  postureEvaluator: ReturnType<typeof createPostureEvaluator>
  identityTraces: ReturnType<typeof startIdentityTraceRegistry>
  /** Removes service sessions whose access was lost, now (the timer does it every few seconds). */
  enforcePolicies(): Promise<void>
  stop(): void
}

export function bootPolicy(actors: Actors, ctx: { bus: EventBus; clock: Clock; enforceEveryMs?: number }): PolicyParts {
  const { identities, graph, sessions } = actors
  const { bus, clock } = ctx
  const g0 = graph.snapshot()
  const policyResolver = startPolicyResolver(bus, clock, {
    identities: identities.snapshot().identities.values(),
    services: g0.services.values(),
    edgeRouters: g0.edgeRouters.values(),
    policies: g0.indexPolicies(),
    postureChecks: g0.postureChecks.values(),
  })
  const reads = policyResolver.reads
  // posture data and refused requests: memory only, gone with their API session / identity
  const postureData = startPostureDataRegistry(bus)
  const posture = postureData.registry
  const postureEvaluator = createPostureEvaluator({ graph, reads, posture, bus })
  // data-flow traces of identities: memory only, as the real controller's trace manager; gone with the identity
  const identityTraces = startIdentityTraceRegistry(bus)
  // the policy enforcer: service sessions whose identity lost the permission they were made for are removed
  const enforcePolicies = async () => {
    const ids = sessionsWithoutAccess(sessions.snapshot().serviceSessions.values(), reads)
    // in slices: each is one commit (and, on a cluster node, one command, which etcd takes up to 1.5 MiB)
    for (let i = 0; i < ids.length; i += ENFORCE_SLICE) {
      await sessions.ask({ type: 'session.deleteMany', ids: ids.slice(i, i + ENFORCE_SLICE), change: { author: 'system', source: 'system' } })
    }
  }
  const enforcer = setInterval(() => void enforcePolicies().catch((e) => console.error('policy enforcer failed:', e)), ctx.enforceEveryMs ?? 5_000)
  enforcer.unref?.()
  return {
    policyResolver,
    reads,
    posture,
    postureEvaluator,
    identityTraces,
    enforcePolicies,
    stop() {
      clearInterval(enforcer)
      policyResolver.stop()
      postureData.stop()
      identityTraces.stop()
    },
  }
}
