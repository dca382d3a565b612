/**
 * JSON-schema checks of config types and config data (ajv, draft-07 rules; `$schema` is ignored, so draft-04/06
 * schemas are read as draft-07). Schemas compile once per config type and are cached until the type's schema changes.
 * - a config type's schema must itself be a valid JSON schema (field `schema`)
 * - config data must match its type's schema; the first violation is reported as field `data.<path>` (or `data`),
 *   reason `<field> is invalid: <message>` and the offending value, like the real controller's ValidationErrors
 */
import Ajv, { type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { ApiError } from '../../errors/api-error.ts'

// one instance for every schema: `addUsedSchema: false` keeps schemas with the same `$id` from colliding
const ajv = new Ajv({ strict: false, allErrors: false, addUsedSchema: false, logger: false })
addFormats(ajv)

/** A compiled check of config data. */
export type ConfigDataCheck = (data: unknown) => void

/** Compiles a config type schema; throws `COULD_NOT_VALIDATE` (field `schema`) when it is not a valid JSON schema. */
export function compileConfigSchema(schema: Record<string, unknown>): ConfigDataCheck {
  let validate: ValidateFunction
  try {
    const { $schema: _ignored, ...rest } = schema
    validate = ajv.compile(rest)
  } catch (e) {
    throw ApiError.invalidField('schema', `schema is not a valid JSON schema: ${(e as Error).message}`, schema)
  }
  return (data) => {
    if (validate(data)) return
    const err = validate.errors?.[0]
    if (!err) throw ApiError.invalidField('data', 'data is invalid', data)
    const segments = err.instancePath === '' ? [] : err.instancePath.slice(1).split('/').map(unescapePointer)
    const field = ['data', ...segments].join('.')
    throw ApiError.invalidField(field, `${field} is invalid: ${err.message ?? 'does not match the schema'}`, valueAt(data, segments))
  }
}

/** Compiled checks keyed by config type id, dropped when the type's schema object changes. */
export class ConfigSchemaCache {
  private readonly compiled = new Map<string, { schema: Record<string, unknown>; check: ConfigDataCheck }>()

  /** The check for a type, compiling its schema on first use (schemas stored before were valid when written). */
  checkFor(typeId: string, schema: Record<string, unknown>): ConfigDataCheck {
    const hit = this.compiled.get(typeId)
    if (hit && hit.schema === schema) return hit.check
    const check = compileConfigSchema(schema)
    this.compiled.set(typeId, { schema, check })
    return check
  }

  forget(typeId: string): void {
    this.compiled.delete(typeId)
  }
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~')
}

function valueAt(data: unknown, segments: string[]): unknown {
  let v = data
  for (const s of segments) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<string, unknown>)[s]
  }
  return v
}
