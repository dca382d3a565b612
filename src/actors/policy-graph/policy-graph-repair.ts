/**
 * The policy graph's repairs of the integrity fix (flows/integrity/integrity-run.ts): each idempotent, each through
 * the same state mutators and events as the ordinary writes, so the policy index follows.
 */
import { assertNever } from '../../lib/assert-never.ts'
import { dropOverrides, touched } from './policy-graph-configs.ts'
import { identityRemoved, stripReferences, type GraphCtx } from './policy-graph-policies.ts'
import type { GraphRepair } from './policy-graph-messages.ts'
import type { EntityKind } from '../../domain/policy/policy-types.ts'

/** Applies the repairs; answers how many changed something. */
export function repairGraph(ctx: GraphCtx, repairs: readonly GraphRepair[]): number {
  let changed = 0
  for (const r of repairs) {
    const before = ctx.tx.ops.length
    applyRepair(ctx, r)
    if (ctx.tx.ops.length > before) changed++
  }
  return changed
}

function entityExists(ctx: GraphCtx, kind: Exclude<EntityKind, 'identity'>, id: string): boolean {
  if (kind === 'service') return ctx.state.services.has(id)
  if (kind === 'router') return ctx.state.edgeRouters.has(id)
  return ctx.state.postureChecks.has(id)
}

function applyRepair(ctx: GraphCtx, r: GraphRepair): void {
  const s = ctx.state
  switch (r.kind) {
    // every repair re-checks what the finding said (it may be older than the latest writes)
    case 'references.drop':
      if (r.entityKind === 'identity') {
        if (!ctx.lookups.identityExists(r.id)) identityRemoved(ctx, r.id)
      } else if (!entityExists(ctx, r.entityKind, r.id)) stripReferences(ctx, r.entityKind, r.id)
      return
    case 'override.drop': {
      // the key is `<identityId>/<serviceId>/<configTypeId>` (store/README.md)
      const [identityId = '', serviceId = '', configTypeId = ''] = r.key.split('/')
      const o = s.override(identityId, serviceId, configTypeId)
      if (o && ctx.lookups.identityExists(o.identityId) && s.services.has(o.serviceId) && s.configs.has(o.configId)) return
      return touched(ctx, [], dropOverrides(ctx, [r.key]))
    }
    case 'service.dropConfig': {
      const prev = s.services.get(r.serviceId)
      if (!prev?.configs.includes(r.configId) || s.configs.has(r.configId)) return
      const next = { ...prev, configs: prev.configs.filter((c) => c !== r.configId), updatedAt: ctx.tx.now }
      s.putService(next)
      ctx.tx.put('services', next.id, next)
      ctx.tx.emit({ type: 'graph.service.put', service: next, previous: prev })
      return
    }
    case 'terminator.drop': {
      const t = s.terminators.get(r.id)
      if (!t || (s.services.has(t.serviceId) && s.routers.has(t.routerId))) return
      s.removeTerminator(r.id)
      ctx.tx.remove('terminators', r.id)
      return
    }
    default:
      return assertNever(r, 'policy graph repair')
  }
}
