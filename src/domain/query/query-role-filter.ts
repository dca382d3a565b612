/**
 * The `roleFilter` / `roleSemantic` list parameters (identities, edge routers, services, posture checks):
 * parsing and matching. The normal filter and paging apply on top of the role filter.
 * @see openziti/ziti controller/db/base_store.go (getRoleAttributesCursorProvider), controller/internal/routes/identity_router.go
 */
import { ApiError } from '../../errors/api-error.ts'

/** A parsed role filter: `@` ids, `#` attributes (without their prefix) and the semantic for the attributes. */
export interface RoleFilter {
  readonly ids: string[]
  readonly attrs: string[]
  readonly semantic: 'AllOf' | 'AnyOf'
}

/**
 * Parses the `roleFilter` values (repeatable: one string or many) and `roleSemantic`.
 *
 * - No values (undefined or an empty array) → undefined: no role filtering.
 * - `roleSemantic` defaults to `AllOf` and is matched case-insensitively.
 * @throws ApiError COULD_NOT_VALIDATE field `semantic` for a semantic other than AllOf/AnyOf.
 * @throws ApiError COULD_NOT_VALIDATE field `roleFilter` for a value starting with neither `#` nor `@`
 *   (the real controller answers 500 there; we answer 400).
 */
export function parseRoleFilter(
  roleFilter: readonly string[] | string | undefined,
  roleSemantic: string | undefined,
): RoleFilter | undefined {
  const semantic = parseSemantic(roleSemantic)
  const values = roleFilter === undefined ? [] : typeof roleFilter === 'string' ? [roleFilter] : roleFilter
  if (values.length === 0) return undefined
  const ids: string[] = []
  const attrs: string[] = []
  for (const v of values) {
    if (v.startsWith('@') && v.length > 1) ids.push(v.slice(1))
    else if (v.startsWith('#') && v.length > 1) attrs.push(v.slice(1))
    else {
      throw ApiError.invalidField(
        'roleFilter',
        'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)',
        v,
      )
    }
  }
  return { ids, attrs, semantic }
}

function parseSemantic(raw: string | undefined): RoleFilter['semantic'] {
  if (raw === undefined || raw === '') return 'AllOf'
  const lower = raw.toLowerCase()
  if (lower === 'allof') return 'AllOf'
  if (lower === 'anyof') return 'AnyOf'
  throw ApiError.invalidField('semantic', 'must be one of AllOf, AnyOf', raw)
}

/**
 * Whether an entity passes a role filter: its id is one of the `@` ids, or its role attributes satisfy the `#`
 * attributes under the semantic (AllOf: has all of them; AnyOf: has one). Attributes compare case-insensitively;
 * `#all` matches every entity; no `#` attributes match no entity by attribute.
 */
export function matchesRoleFilter(
  rf: RoleFilter,
  entity: { readonly id: string; readonly roleAttributes?: readonly string[] | null },
): boolean {
  if (rf.ids.includes(entity.id)) return true
  if (rf.attrs.length === 0) return false
  if (rf.attrs.includes('all')) return true
  const has = new Set((entity.roleAttributes ?? []).map((a) => a.toLowerCase()))
  const wanted = rf.attrs.map((a) => a.toLowerCase())
  return rf.semantic === 'AllOf' ? wanted.every((a) => has.has(a)) : wanted.some((a) => has.has(a))
}
