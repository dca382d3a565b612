/**
 * Why a policy does or does not select an entity, and the smallest changes that would make a set of policies select
 * it. Pure: the caller hands in the policies that matter (from the index: the ones naming the other side) and the
 * entity's id and attributes. Rules:
 * - a role list selects an entity by `#all`, by naming it (`@id`), or by its attributes: AllOf needs every listed
 *   attribute, AnyOf at least one (policy-roles.ts); what is missing is, for AllOf, the listed attributes the entity
 *   lacks, for AnyOf all listed attributes (any one of them would do); an empty list selects nothing
 * - fixes, per policy not selecting the entity: add the missing attributes (AllOf), or any one listed attribute
 *   (AnyOf, one fix per attribute), or name the entity in the policy; each is checked by evaluating the policy again
 *   with the fix applied, and only those that pass are kept
 * - the smallest fixes are those changing the fewest things (one attribute or one role entry counts one); a new policy
 *   is proposed only when no policy could be changed (none names the other side)
 */
import { rolesMatch, splitRoles } from './policy-roles.ts'
import type { Semantic } from './policy-types.ts'

/** One policy's role list for the entity's side. */
export interface PolicySide {
  id: string
  semantic: Semantic
  roles: readonly string[]
}

/** How a role list judges an entity. */
export interface RoleVerdict {
  matches: boolean
  /** What selected it, when it matches. */
  matchedBy: '#all' | '@id' | 'attributes' | null
  /** The roles (`#attr`) it lacks: AllOf all of them are needed, AnyOf any one. Empty when it matches. */
  missingRoles: string[]
}

export type Fix =
  | { action: 'add-attributes'; attributes: string[]; policyIds: string[] }
  | { action: 'name-in-policy'; policyId: string }
  | { action: 'create-policy' }

export function judgeRoles(side: PolicySide, entityId: string, attrs: readonly string[]): RoleVerdict {
  const r = splitRoles(side.roles)
  if (r.all) return { matches: true, matchedBy: '#all', missingRoles: [] }
  if (r.ids.includes(entityId)) return { matches: true, matchedBy: '@id', missingRoles: [] }
  if (rolesMatch(r, side.semantic, entityId, attrs)) return { matches: true, matchedBy: 'attributes', missingRoles: [] }
  const lacking = side.semantic === 'AllOf' ? r.attrs.filter((a) => !attrs.includes(a)) : r.attrs
  return { matches: false, matchedBy: null, missingRoles: lacking.map((a) => `#${a}`) }
}

/** Cost of a fix: the number of attributes or role entries it adds. */
export function fixSize(f: Fix): number {
  return f.action === 'add-attributes' ? f.attributes.length : 1
}

/**
 * The smallest verified fixes that make at least one of `sides` select the entity (none when one already does).
 * `maxFixes` bounds the list.
 */
export function smallestFixes(sides: readonly PolicySide[], entityId: string, attrs: readonly string[], maxFixes = 10): Fix[] {
  if (sides.some((s) => judgeRoles(s, entityId, attrs).matches)) return []
  if (sides.length === 0) return [{ action: 'create-policy' }]
  const byAttrs = new Map<string, { attributes: string[]; policyIds: string[] }>()
  const naming: Fix[] = []
  for (const s of sides) {
    const verdict = judgeRoles(s, entityId, attrs)
    const candidates = s.semantic === 'AllOf' ? [verdict.missingRoles] : verdict.missingRoles.map((m) => [m])
    for (const roles of candidates) {
      const attributes = roles.map((m) => m.slice(1)).sort()
      // verified: the policy, evaluated again with the attributes added, selects the entity
      if (attributes.length === 0 || !judgeRoles(s, entityId, [...attrs, ...attributes]).matches) continue
      const key = attributes.join('\u0000')
      const known = byAttrs.get(key)
      if (known) known.policyIds.push(s.id)
      else byAttrs.set(key, { attributes, policyIds: [s.id] })
    }
    if (judgeRoles({ ...s, roles: [...s.roles, `@${entityId}`] }, entityId, attrs).matches) naming.push({ action: 'name-in-policy', policyId: s.id })
  }
  const all: Fix[] = [...[...byAttrs.values()].map((v) => ({ action: 'add-attributes' as const, ...v })), ...naming]
  const least = Math.min(...all.map(fixSize))
  return all.filter((f) => fixSize(f) === least).slice(0, maxFixes)
}
