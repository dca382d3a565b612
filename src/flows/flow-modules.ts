/**
 * What the registries of method modules (authentication, enrollment) share: modules keyed by their wire method name,
 * and the coded refusal of a method no module handles.
 */
import { ApiError } from '../errors/api-error.ts'
import type { ApiErrorCode } from '../errors/error-codes.ts'

/** `modules` by their `method`. @throws TypeError when two claim the same name (a wiring bug). */
export function modulesByMethod<M extends { readonly method: string }>(what: string, modules: readonly M[]): ReadonlyMap<string, M> {
  const byName = new Map<string, M>()
  for (const m of modules) {
    if (byName.has(m.method)) throw new TypeError(`${what} method '${m.method}' is registered twice`)
    byName.set(m.method, m)
  }
  return byName
}

/** The module registered as `method`, or `code` (INVALID_AUTH_METHOD, INVALID_ENROLL_METHOD) naming it. */
export function moduleOrRefuse<M>(byName: ReadonlyMap<string, M>, what: string, method: string, code: ApiErrorCode): M {
  const m = byName.get(method)
  if (!m) throw ApiError.withMessage(code, `${what} method '${method}' is not enabled on this controller`)
  return m
}
