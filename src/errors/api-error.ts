/**
 * ApiError: every client-caused failure. Anything else thrown is a bug and renders as 500 UNHANDLED.
 * The HTTP error mapper is the only place that turns these into bodies.
 */
import { API_ERRORS, type ApiErrorCode } from './error-codes.ts'

/** Why a request failed, beyond its code. */
export type ApiErrorCause =
  | { kind: 'field'; field: string; reason: string; value?: unknown }
  | { kind: 'api'; code: ApiErrorCode | 'UNHANDLED'; message: string }
  | { kind: 'data'; message: string; data: Record<string, unknown> }

/** A client-caused failure with a catalogue code; `status` comes from the catalogue. */
export class ApiError extends Error {
  readonly code: ApiErrorCode
  readonly status: number
  readonly apiCause?: ApiErrorCause
  readonly headers?: Record<string, string>

  constructor(code: ApiErrorCode, opts: { cause?: ApiErrorCause; message?: string; headers?: Record<string, string> } = {}) {
    super(opts.message ?? API_ERRORS[code].message)
    this.name = 'ApiError'
    this.code = code
    this.status = API_ERRORS[code].status
    this.apiCause = opts.cause
    this.headers = opts.headers
  }

  static notFound(detail?: string): ApiError {
    return new ApiError('NOT_FOUND', detail ? { cause: { kind: 'api', code: 'UNHANDLED', message: detail } } : {})
  }

  /** COULD_NOT_VALIDATE with a field cause: the wire form of every field-level validation failure. */
  static invalidField(field: string, reason: string, value?: unknown): ApiError {
    return new ApiError('COULD_NOT_VALIDATE', { cause: { kind: 'field', field, reason, value } })
  }

  static unauthorized(): ApiError {
    return new ApiError('UNAUTHORIZED')
  }

  static invalidAuth(): ApiError {
    return new ApiError('INVALID_AUTH')
  }

  static invalidFilter(message: string): ApiError {
    return new ApiError('INVALID_FILTER', { cause: { kind: 'api', code: 'UNHANDLED', message } })
  }

  /** A code with a plain-message cause (the real controller's UNHANDLED-coded cause). */
  static withMessage(code: ApiErrorCode, message: string): ApiError {
    return new ApiError(code, { cause: { kind: 'api', code: 'UNHANDLED', message } })
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}
