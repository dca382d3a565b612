/**
 * The policy graph's repairs of the integrity fix (flows/integrity/integrity-run.ts): each idempotent, each through
 * the same state mutators and events as the ordinary writes, so the policy index follows.
 */
import { assertNever } from '../../lib/assert-never.ts'
import { dropOverrides, touched } from './policy-graph-configs.ts'
import { identityRemoved, stripReferences, type GraphCtx } from './policy-graph-policies.ts'
import type { GraphRepair } from './policy-graph-messages.ts'

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

function applyRepair(ctx: GraphCtx, r: GraphRepair): void {
  const s = ctx.state
  switch (r.kind) {
    case 'references.drop':
      if (r.entityKind === 'identity') identityRemoved(ctx, r.id)
      else stripReferences(ctx, r.entityKind, r.id)
      return
    case 'override.drop':
      return touched(ctx, [], dropOverrides(ctx, [r.key]))
    case 'service.dropConfig': {
      const prev = s.services.get(r.serviceId)
      if (!prev?.configs.includes(r.configId) || s.configs.has(r.configId)) return
      const next = { ...prev, configs: prev.configs.filter((c) => c !== r.configId), updatedAt: ctx.tx.now }
      s.putService(next)
      ctx.tx.put('services', next.id, next)
      ctx.tx.emit({ type: 'graph.service.put', service: next, previous: prev })
      return
    }
    case 'terminator.drop':
      if (!s.terminators.has(r.id)) return
      s.removeTerminator(r.id)
      ctx.tx.remove('terminators', r.id)
      return
    default:
      return assertNever(r, 'policy graph repair')
  }
}
