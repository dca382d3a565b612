/**
 * Validation of request bodies and query parameters against a route's TypeBox schema, run by the app after the
 * access check. Rules:
 * - Members a schema does not declare are dropped before the check (the real controller ignores unknown members, so
 *   clients written for an older or newer spec keep working); declared members stay strictly checked, at any depth.
 * - An object schema that says `additionalProperties: false` keeps refusing extra members (it means "exactly this");
 *   free maps (`Type.Record`, `additionalProperties: true` or a schema) keep their members, as own properties even when
 *   they are named `__proto__`, `constructor` or `toString`.
 * - Bodies are read as the real controller's JSON decoder (Go's encoding/json, then go-swagger) reads them: a member
 *   whose name matches a declared one only in case (`Type` for `type`) is that member (the official CLI sends OS
 *   posture checks so), and a `null` on an optional member that takes no null is no value at all (the CLI sends
 *   `"configs": null` for a service without configs). Query parameters are matched exactly.
 * - The first failure becomes 400 COULD_NOT_VALIDATE with its field as cause.
 * The walk recurses over schema and value together; bodies reach it only within MAX_BODY_DEPTH (http-json.ts).
 */
import { Kind, type TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { validationToApiError } from './http-errors.ts'

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()

/** The compiled checker of a schema, compiled on first use and kept for the process. */
function checkerOf(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)))
  return c
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Sets an own data property, whatever its name (an assignment to `__proto__` would set the prototype instead). */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** The declared member a body member names: the same name, else the first declared one equal to it but for case. */
function declaredNameOf(properties: Record<string, TSchema>, key: string, foldCase: boolean): string | undefined {
  if (Object.hasOwn(properties, key)) return key
  if (!foldCase) return undefined
  const folded = key.toLowerCase()
  return Object.keys(properties).find((name) => name.toLowerCase() === folded)
}

/**
 * `value` without the members `schema` does not declare, at every depth; never mutates `value`. With `asBody`, member
 * names are matched regardless of case and nulls on optional members that take no null are dropped (see the header).
 */
export function withoutUnknownMembers(schema: TSchema, value: unknown, asBody = false): unknown {
  if (typeof value !== 'object' || value === null) return value
  switch (schema[Kind]) {
    case 'Object': {
      if (!isPlainObject(value)) return value
      const extra = schema.additionalProperties as boolean | TSchema | undefined
      if (extra === false) return value
      const properties = (schema.properties ?? {}) as Record<string, TSchema>
      const required = new Set((schema.required ?? []) as string[])
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(value)) {
        // a free map's own members are keys, not names: only a closed object folds case
        const name = declaredNameOf(properties, key, asBody && extra === undefined)
        if (name !== undefined) {
          const v = value[key]
          // Go leaves a member that takes no null as it was (a later member of the same name may have set it)
          if (asBody && v === null && !required.has(name) && !checkerOf(properties[name]).Check(null)) continue
          defineOwn(out, name, withoutUnknownMembers(properties[name], v, asBody))
        } else if (extra === true) defineOwn(out, key, value[key])
        else if (extra !== undefined) defineOwn(out, key, withoutUnknownMembers(extra, value[key], asBody))
      }
      return out
    }
    case 'Record': {
      if (!isPlainObject(value)) return value
      const [valueSchema] = Object.values(schema.patternProperties as Record<string, TSchema>)
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(value)) defineOwn(out, key, withoutUnknownMembers(valueSchema, value[key], asBody))
      return out
    }
    case 'Array':
      return Array.isArray(value) ? value.map((item) => withoutUnknownMembers(schema.items as TSchema, item, asBody)) : value
    case 'Union': {
      // the first alternative the value satisfies once its unknown members are gone
      for (const alternative of schema.anyOf as TSchema[]) {
        const candidate = withoutUnknownMembers(alternative, value, asBody)
        if (checkerOf(alternative).Check(candidate)) return candidate
      }
      return value
    }
    default:
      return value
  }
}

/**
 * A validator for one schema: answers the value without unknown members, or throws 400 COULD_NOT_VALIDATE naming the
 * first bad field (`where` is `body` or `query`, as in the cause's reason).
 */
export function validatorOf(schema: TSchema, where: 'body' | 'query'): (value: unknown) => unknown {
  return (value) => {
    const cleaned = withoutUnknownMembers(schema, value, where === 'body')
    const checker = checkerOf(schema)
    if (checker.Check(cleaned)) return cleaned
    const errors = []
    // the first error, plus the missing-property one if it comes soon after (validationToApiError prefers it)
    for (const e of checker.Errors(cleaned)) {
      errors.push(e)
      if (errors.length >= 8) break
    }
    throw validationToApiError(where, errors)
  }
}
