/**
 * The claim selectors of an external JWT signer's token enrollment (`enrollNameClaimsSelector`,
 * `enrollAttributeClaimsSelector`): JSON pointers (RFC 6901) into a verified token's claims, read as the real
 * controller reads them (`resolveStringClaimSelector`, `resolveStringSliceClaimProperty` in
 * controller/model/token_provider_cache.go):
 * - a selector without a leading `/` gets one (`email` is `/email`); "" selects nothing
 * - a selector is valid when its pointer parses (a `~` must be followed by 0 or 1)
 * - the name: the selected value must be a string
 * - the attributes: a string is one attribute, an array must hold strings only; empty strings are dropped; a pointer
 *   that selects nothing (absent member, a step into a scalar) or null gives none
 * Members are looked up as own properties only (`__proto__` selects nothing).
 */
import * as JsonPointer from '@hyperjump/json-pointer'
import type { Json } from '@hyperjump/json-pointer'

/** The name selector of a signer that names none (the real controller's default). */
export const DEFAULT_ENROLL_NAME_SELECTOR = '/sub'

/** `selector` as a JSON pointer (a leading `/` added), or "" for none. */
export function toClaimPointer(selector: string): string {
  if (selector === '') return ''
  return selector.startsWith('/') ? selector : `/${selector}`
}

/** Why `selector` is not a valid claim selector, or null when it is. */
export function claimSelectorProblem(selector: string): string | null {
  try {
    for (const _ of JsonPointer.pointerSegments(toClaimPointer(selector))) {
      // every segment is parsed while iterating: an invalid escape throws
    }
    return null
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}


/** The value `selector` picks from `claims`; undefined when it picks nothing (or the selector is invalid). */
function pick(claims: Record<string, unknown>, selector: string): unknown {
  const pointer = toClaimPointer(selector)
  if (pointer === '') return undefined
  try {
    return JsonPointer.get(pointer, claims as Json)
  } catch {
    // a step into a scalar or an absent member: nothing selected
    return undefined
  }
}

/** The string `selector` picks, or undefined when it picks nothing or a value that is not a string. */
export function claimString(claims: Record<string, unknown>, selector: string): string | undefined {
  const v = pick(claims, selector)
  return typeof v === 'string' ? v : undefined
}

/**
 * The role attributes `selector` picks: a string is one, an array of strings is each (empty strings dropped), nothing
 * or null is none; `{ok: false}` when the value is another type or an array holds something other than strings.
 */
export function claimStrings(claims: Record<string, unknown>, selector: string): { ok: true; values: string[] } | { ok: false; reason: string } {
  const v = pick(claims, selector)
  if (v === undefined || v === null) return { ok: true, values: [] }
  if (typeof v === 'string') return { ok: true, values: v === '' ? [] : [v] }
  if (!Array.isArray(v)) return { ok: false, reason: `the claim at ${toClaimPointer(selector)} is neither a string nor an array of strings` }
  const values: string[] = []
  for (const [i, item] of v.entries()) {
    if (typeof item !== 'string') return { ok: false, reason: `the claim at ${toClaimPointer(selector)} holds a value that is not a string at index ${i}` }
    if (item !== '') values.push(item)
  }
  return { ok: true, values }
}
