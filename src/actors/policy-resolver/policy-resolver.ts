/**
 * The policy-resolver actor: owns the precomputed policy index and keeps it current from the identity and
 * policy-graph actors' events. Its mailbox is the event bus: events are delivered synchronously, in commit order,
 * before the writing actor replies, so the very next request after a 2xx answer reads the updated index.
 * It persists nothing: the index is derived, rebuilt from the other actors' LMDB-loaded state at start.
 * Reads (the PolicyReads methods) never queue and never evaluate a policy.
 */
import type { Clock } from '../../lib/clock.ts'
import type { Identity } from '../../domain/identity/identity-types.ts'
import { buildPolicyIndex, indexEntitiesOf } from '../../domain/policy/policy-index-check.ts'
import { PolicyIndex } from '../../domain/policy/policy-index.ts'
import { previewIndexChange, type IndexChange, type IndexPreview } from '../../domain/policy/policy-preview.ts'
import type { PolicyReads } from '../../domain/policy/policy-reads.ts'
import type { IndexPolicy, Router, Service } from '../../domain/policy/policy-types.ts'
import type { EventBus } from '../runtime/event-bus.ts'
import type { PostureCheck } from '../../domain/posture/posture-types.ts'
import type { IdentityEvent } from '../identity/identity-messages.ts'
import type { PolicyGraphEvent } from '../policy-graph/policy-graph-messages.ts'

export interface ResolverSources {
  identities: Iterable<Identity>
  services: Iterable<Service>
  /** Edge routers only: fabric-only routers take part in no policy. */
  edgeRouters: Iterable<Router>
  policies: Iterable<IndexPolicy>
  postureChecks: Iterable<PostureCheck>
}

export interface PolicyResolver {
  readonly reads: PolicyReads
  /** The maintained index itself, for the integrity check's comparison with a rebuilt one (read only). */
  readonly index: Pick<PolicyIndex, 'dump'>
  /** What `change` would do to the index, computed on a copy: the index itself does not move. */
  preview(change: IndexChange): IndexPreview
  /** Classes per entity kind (diagnostics, benchmarks). */
  classCounts(): Record<string, number>
  stop(): void
}

type Ev<T extends string> = Extract<IdentityEvent | PolicyGraphEvent, { type: T }>

const sameAttrs = (a: readonly string[] | null, b: readonly string[] | null) => (a ?? []).join('\u0000') === (b ?? []).join('\u0000')

export function startPolicyResolver(bus: EventBus, clock: Clock, sources: ResolverSources): PolicyResolver {
  const index = buildPolicyIndex(indexEntitiesOf(sources), sources.policies)

  const now = () => clock.now()
  const subs = [
    bus.subscribe<Ev<'identity.created'>>('identity.created', (e) => index.putEntity('identity', e.identity.id, e.identity.roleAttributes, now())),
    bus.subscribe<Ev<'identity.updated'>>('identity.updated', (e) => {
      if (!sameAttrs(e.identity.roleAttributes, e.previous.roleAttributes)) index.putEntity('identity', e.identity.id, e.identity.roleAttributes, now())
    }),
    bus.subscribe<Ev<'identity.deleted'>>('identity.deleted', (e) => index.removeEntity('identity', e.identity.id, now())),
    bus.subscribe<Ev<'graph.service.put'>>('graph.service.put', (e) => index.putEntity('service', e.service.id, e.service.roleAttributes, now())),
    bus.subscribe<Ev<'graph.service.deleted'>>('graph.service.deleted', (e) => index.removeEntity('service', e.service.id, now())),
    bus.subscribe<Ev<'graph.router.put'>>('graph.router.put', (e) => {
      if (e.router.isEdge) index.putEntity('router', e.router.id, e.router.roleAttributes, now())
    }),
    bus.subscribe<Ev<'graph.router.deleted'>>('graph.router.deleted', (e) => {
      if (e.router.isEdge) index.removeEntity('router', e.router.id, now())
    }),
    bus.subscribe<Ev<'graph.policy.put'>>('graph.policy.put', (e) => index.putPolicy(e.policy, now())),
    bus.subscribe<Ev<'graph.policy.deleted'>>('graph.policy.deleted', (e) => index.removePolicy(e.policy.id, now())),
    bus.subscribe<Ev<'graph.services.touched'>>('graph.services.touched', (e) => index.touchServices(e.serviceIds, now())),
    bus.subscribe<Ev<'graph.postureCheck.put'>>('graph.postureCheck.put', (e) => index.putEntity('posture-check', e.check.id, e.check.roleAttributes, now())),
    bus.subscribe<Ev<'graph.postureCheck.deleted'>>('graph.postureCheck.deleted', (e) => index.removeEntity('posture-check', e.check.id, now())),
    bus.subscribe<Ev<'graph.overrides.changed'>>('graph.overrides.changed', (e) => index.touchIdentities(e.identityIds, now())),
  ]
  return {
    reads: index,
    index,
    preview: (change) => previewIndexChange(index, change),
    classCounts: () => index.classCounts(),
    stop: () => {
      for (const unsub of subs) unsub()
    },
  }
}
