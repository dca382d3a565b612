/**
 * The one error renderer: ApiError → `{error:{code,message,requestId,cause?}, meta:{apiVersion,apiEnrollmentVersion}}`.
 * Framework errors are mapped to catalogue codes (validation → 400 COULD_NOT_VALIDATE, never 422 or 6xx);
 * anything else is our bug: logged with its requestId, answered 500 UNHANDLED without its message.
 */
import { describeThrown } from '../lib/describe-thrown.ts'
import { ApiError, type ApiErrorCause } from '../errors/api-error.ts'
import { newShortId } from '../lib/ids.ts'
import { json } from './http-envelope.ts'

export const ERROR_META = { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' } as const

/** How an answer renders its cause: `textValues` (the fabric API) writes a field cause's value as text. */
export interface CauseStyle {
  /** The fabric spec types a field error's `value` as a string (its generated clients decode nothing else). */
  textValues?: boolean
}

const asText = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)))

/** The wire form of an error's cause (the envelope's `error.cause`, the OIDC login endpoints' bare `cause`). */
export function renderCause(c: ApiErrorCause | undefined, requestId: string, style: CauseStyle = {}): Record<string, unknown> | undefined {
  if (!c) return undefined
  switch (c.kind) {
    case 'field': {
      const value = c.value === undefined ? '' : style.textValues ? asText(c.value) : c.value
      return { field: c.field, reason: c.reason, value }
    }
    case 'api':
      return { code: c.code, message: c.message, requestId }
    case 'data':
      return { message: c.message, data: c.data }
  }
}

/** Renders an ApiError as its wire answer. */
export function renderApiError(err: ApiError, requestId: string = newShortId(), style: CauseStyle = {}): Response {
  const error: Record<string, unknown> = { code: err.code, message: err.message, requestId }
  const cause = renderCause(err.apiCause, requestId, style)
  if (cause) error.cause = cause
  return json(err.status, { error, meta: ERROR_META }, err.headers)
}

/** Where a thrown error happened, for its log line. */
export interface ThrownAt {
  method: string
  path: string
  requestId: string
}

const logToStderr = (line: string) => process.stderr.write(line + '\n')

/** Renders anything thrown while answering a request; a non-ApiError is logged (with its stack) under the request id. */
export function renderThrown(e: unknown, at: ThrownAt, log: (line: string) => void = logToStderr): Response {
  if (e instanceof ApiError) return renderApiError(e, at.requestId)
  log(`request ${at.requestId} unhandled error on ${at.method} ${at.path}: ${describeThrown(e)}`)
  return renderApiError(new ApiError('UNHANDLED'), at.requestId)
}

interface TypeBoxErrorLike {
  path?: string
  message?: string
  value?: unknown
  type?: number
  schema?: unknown
  /** A union's failures, one iterator per alternative, in the order of its anyOf. */
  errors?: Iterable<TypeBoxErrorLike>[]
}

/** The first failure of a list: a missing property is reported on its own path (not the union noise TypeBox adds). */
function firstOf(errors: readonly TypeBoxErrorLike[]): TypeBoxErrorLike | undefined {
  return errors.find((e) => e.message?.startsWith('Expected required property')) ?? errors[0]
}

/**
 * For a union with an object alternative (an object or null) that an object value failed, the failure inside that
 * object (`externalIdClaim.location`), since that is what the caller got wrong; any other error as it is.
 */
function innermost(e: TypeBoxErrorLike): TypeBoxErrorLike {
  const alternatives = (e.schema as { anyOf?: { type?: string; properties?: unknown }[] } | undefined)?.anyOf
  if (!alternatives || e.value === null || typeof e.value !== 'object' || Array.isArray(e.value) || !e.errors) return e
  const objectAt = alternatives.findIndex((a) => a.type === 'object' && a.properties !== undefined)
  if (objectAt < 0 || !e.errors[objectAt]) return e
  const inner = firstOf([...e.errors[objectAt]])
  return inner ? innermost(inner) : e
}

/** What one schema accepts, in a few words: `a string`, `null`, `"Dial"`, `an object of strings`. */
function describeSchema(schema: unknown): string {
  const s = (schema ?? {}) as { type?: unknown; const?: unknown; anyOf?: unknown; patternProperties?: Record<string, unknown> }
  if (s.const !== undefined) return JSON.stringify(s.const)
  if (Array.isArray(s.anyOf)) return s.anyOf.map(describeSchema).join(' or ')
  switch (s.type) {
    case 'null':
      return 'null'
    case 'string':
    case 'boolean':
      return `a ${s.type}`
    case 'number':
    case 'integer':
      return s.type === 'integer' ? 'an integer' : 'a number'
    case 'array':
      return 'an array'
    case 'object': {
      const values = s.patternProperties ? Object.values(s.patternProperties)[0] : undefined
      return values ? `an object of ${describeSchema(values).replace(/\ba |\ban /g, '')} values` : 'an object'
    }
    default:
      return 'a valid value'
  }
}

/** Turns a framework validation failure (TypeBox errors) into COULD_NOT_VALIDATE with the first field as cause. */
export function validationToApiError(where: string, errors: TypeBoxErrorLike[]): ApiError {
  const found = firstOf(errors)
  const first = found && innermost(found)
  const field = (first?.path ?? '').replace(/^\//, '').replace(/\//g, '.') || where
  let reason: string
  const msg = first?.message ?? 'is invalid'
  if (msg.startsWith('Expected required property')) reason = `${field} in ${where} is required`
  else if (Array.isArray((first?.schema as { anyOf?: unknown } | undefined)?.anyOf)) reason = `${field} in ${where}: expected ${describeSchema(first?.schema)}`
  else reason = `${field} in ${where}: ${msg.charAt(0).toLowerCase()}${msg.slice(1)}`
  return ApiError.invalidField(field, reason, first?.value ?? '')
}
