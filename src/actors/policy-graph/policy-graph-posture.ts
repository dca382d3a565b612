/**
 * Handlers of posture checks: create, update (put/patch) and delete. A check's kind fields are decided by
 * domain/posture; its version grows by one on every change. Deleting a check drops its `@id` from the service
 * policies naming it, as deleting a service or an identity does.
 */
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import { decideName } from '../../domain/policy/graph-decide.ts'
import { decideEntityRoleAttributes } from '../../domain/policy/policy-roles.ts'
import { decidePostureCheckSpec } from '../../domain/posture/posture-decide.ts'
import type { PostureCheck } from '../../domain/posture/posture-types.ts'
import type { PostureCheckFields } from './policy-graph-messages.ts'
import { pick, stripReferences, type GraphCtx } from './policy-graph-policies.ts'

export function savePostureCheck(ctx: GraphCtx, id: string | undefined, input: PostureCheckFields, replace: boolean): { id: string } {
  const s = ctx.state
  const prev = id === undefined ? undefined : s.postureChecks.get(id)
  if (id !== undefined && !prev) throw ApiError.notFound()
  const name = input.name !== undefined || !prev ? decideName('postureChecks', input.name, (n) => s.postureChecks.idByName(n), prev?.id) : prev.name
  const roleAttributes =
    input.roleAttributes !== undefined || !prev || replace ? decideEntityRoleAttributes(input.roleAttributes) : prev.roleAttributes
  const spec = decidePostureCheckSpec(input.typeId, input, prev, replace || !prev)
  const next = {
    id: prev?.id ?? newShortId(),
    name,
    roleAttributes,
    tags: pick(input.tags, replace, {}, prev?.tags ?? {}),
    version: (prev?.version ?? 0) + 1,
    createdAt: prev?.createdAt ?? ctx.tx.now,
    updatedAt: ctx.tx.now,
    ...spec,
  } as PostureCheck
  s.putPostureCheck(next)
  ctx.tx.put('posture-checks', next.id, next)
  ctx.tx.emit({ type: 'graph.postureCheck.put', check: next, ...(prev ? { previous: prev } : {}) })
  return { id: next.id }
}

export function deletePostureCheck(ctx: GraphCtx, id: string): void {
  const prev = ctx.state.postureChecks.get(id)
  if (!prev) throw ApiError.notFound()
  ctx.state.removePostureCheck(id)
  ctx.tx.remove('posture-checks', id)
  ctx.tx.emit({ type: 'graph.postureCheck.deleted', check: prev })
  stripReferences(ctx, 'posture-check', id)
}
