/**
 * Role lists of policies (`#attr`, `@id`, `#all`) and the matching rule.
 * An entity matches a role list when its id is listed, the list is `#all`, or (AllOf) it has every listed attribute /
 * (AnyOf) at least one. An empty list matches nothing.
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Semantic } from './policy-types.ts'

/** A role list split into its parts. */
export interface ParsedRoles {
  all: boolean
  attrs: string[]
  ids: string[]
}

/** Splits a stored (already validated) role list. */
export function splitRoles(roles: readonly string[]): ParsedRoles {
  const out: ParsedRoles = { all: false, attrs: [], ids: [] }
  for (const r of roles) {
    if (r === '#all') out.all = true
    else if (r.startsWith('#')) out.attrs.push(r.slice(1))
    else if (r.startsWith('@')) out.ids.push(r.slice(1))
  }
  return out
}

/**
 * Checks a role list from a request: every entry `#attr` or `@id`, `#all` alone, no empty names. Duplicates are
 * dropped. Returns the list to store. Existence of `@id`s is checked by the caller, which knows the entity kind.
 */
export function decideRoles(field: string, roles: readonly string[] | null | undefined): string[] {
  if (roles === null || roles === undefined) return []
  const out: string[] = []
  for (const r of roles) {
    if (typeof r !== 'string' || (!r.startsWith('#') && !r.startsWith('@'))) {
      throw ApiError.invalidField(field, 'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)', r)
    }
    if (r.length === 1) throw ApiError.invalidField(field, 'role entries must name an attribute or an id after # or @', r)
    if (!out.includes(r)) out.push(r)
  }
  if (out.includes('#all') && out.length > 1) {
    throw ApiError.invalidField(field, 'if using #all, it should be the only role specified', roles)
  }
  return out
}

/** Role attributes an entity may carry: no `#`/`@` prefix, not empty; duplicates dropped. null stays null. */
export function decideEntityRoleAttributes(attrs: readonly string[] | null | undefined): string[] | null {
  if (attrs === null || attrs === undefined) return null
  const out: string[] = []
  for (const a of attrs) {
    if (a.length === 0) throw ApiError.invalidField('roleAttributes', 'role attributes may not be empty', a)
    if (a.startsWith('#') || a.startsWith('@')) {
      throw ApiError.invalidField('roleAttributes', 'role attributes may not be prefixed with @ or #', a)
    }
    if (!out.includes(a)) out.push(a)
  }
  return out
}

/** The matching rule, for one entity against one role list. */
export function rolesMatch(
  roles: ParsedRoles,
  semantic: Semantic,
  entityId: string,
  attrs: ReadonlySet<string> | readonly string[] | null,
): boolean {
  if (roles.all) return true
  if (roles.ids.includes(entityId)) return true
  if (roles.attrs.length === 0) return false
  const has = (a: string) => (attrs === null ? false : Array.isArray(attrs) ? attrs.includes(a) : (attrs as ReadonlySet<string>).has(a))
  return semantic === 'AllOf' ? roles.attrs.every(has) : roles.attrs.some(has)
}
