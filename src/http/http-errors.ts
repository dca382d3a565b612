/**
 * The one error renderer: ApiError → `{error:{code,message,requestId,cause?}, meta:{apiVersion,apiEnrollmentVersion}}`.
 * Framework errors are mapped to catalogue codes (validation → 400 COULD_NOT_VALIDATE, never 422 or 6xx);
 * anything else is our bug: logged with its requestId, answered 500 UNHANDLED without its message.
 */
import { ApiError, type ApiErrorCause } from '../errors/api-error.ts'
import { newShortId } from '../lib/ids.ts'
import { json } from './http-envelope.ts'

export const ERROR_META = { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' } as const

function renderCause(c: ApiErrorCause | undefined, requestId: string): Record<string, unknown> | undefined {
  if (!c) return undefined
  switch (c.kind) {
    case 'field':
      return { field: c.field, reason: c.reason, value: c.value === undefined ? '' : c.value }
    case 'api':
      return { code: c.code, message: c.message, requestId }
    case 'data':
      return { message: c.message, data: c.data }
  }
}

/** Renders an ApiError as its wire answer. */
export function renderApiError(err: ApiError, requestId: string = newShortId()): Response {
  const error: Record<string, unknown> = { code: err.code, message: err.message, requestId }
  const cause = renderCause(err.apiCause, requestId)
  if (cause) error.cause = cause
  return json(err.status, { error, meta: ERROR_META }, err.headers)
}

/** Renders anything thrown by a handler. */
export function renderThrown(e: unknown, request?: Request): Response {
  if (e instanceof ApiError) return renderApiError(e)
  const requestId = newShortId()
  console.error(`[${requestId}] unhandled error on ${request?.method ?? '?'} ${request ? new URL(request.url).pathname : '?'}:`, e)
  return renderApiError(new ApiError('UNHANDLED'), requestId)
}

interface TypeBoxErrorLike {
  path?: string
  message?: string
  value?: unknown
  schema?: { type?: unknown; enum?: unknown; minLength?: number; maxLength?: number; minimum?: number; maximum?: number }
  type?: number
}

/** Turns a framework validation failure (TypeBox errors) into COULD_NOT_VALIDATE with the first field as cause. */
export function validationToApiError(where: string, errors: TypeBoxErrorLike[]): ApiError {
  // a missing property is reported on its own path; prefer it over the union noise TypeBox adds
  const first = errors.find((e) => e.message?.startsWith('Expected required property')) ?? errors[0]
  const field = (first?.path ?? '').replace(/^\//, '').replace(/\//g, '.') || where
  let reason: string
  const msg = first?.message ?? 'is invalid'
  if (msg.startsWith('Expected required property')) reason = `${field} in ${where} is required`
  else reason = `${field} in ${where}: ${msg.charAt(0).toLowerCase()}${msg.slice(1)}`
  return ApiError.invalidField(field, reason, first?.value ?? '')
}
