/**
 * Data-flow tracing of an identity (`PUT /identities/{id}/trace`): which channels a router should trace for the
 * identity's circuits, under which trace id, until when. A trace ends by itself at `until`; a trace read after that
 * is gone. Records are read-only and replaced on every change.
 */
import { ApiError } from '../../errors/api-error.ts'
import { parseDurationMs } from '../../lib/duration.ts'

export interface IdentityTrace {
  readonly identityId: string
  readonly traceId: string
  readonly channels: readonly string[]
  /** Epoch milliseconds; the trace is over from this instant on. */
  readonly until: number
}

export interface IdentityTraceReads {
  /** The identity's trace if one is running at `now`. */
  traceOf(identityId: string, now: number): IdentityTrace | undefined
}

/** The real controller's duration of a trace whose spec names none. */
export const DEFAULT_TRACE_MS = 10 * 60_000
/** The longest trace accepted: a forgotten trace must not run for ever. */
export const MAX_TRACE_MS = 24 * 3_600_000

export interface TraceSpecInput {
  enabled?: boolean
  duration?: string
  traceId?: string
  channels?: string[]
}

/**
 * The trace an enabling spec starts at `now`: the given trace id or a new one, the duration given (Go syntax, as
 * the real controller parses it) or ten minutes, the channels given or none. A duration that does not parse, is not
 * positive or is longer than MAX_TRACE_MS is refused on the field.
 */
export function decideTrace(identityId: string, spec: TraceSpecInput, now: number, newTraceId: () => string): IdentityTrace {
  let ms = DEFAULT_TRACE_MS
  if (spec.duration !== undefined && spec.duration !== '') {
    const parsed = parseDurationMs(spec.duration)
    if (parsed === undefined) throw ApiError.invalidField('duration', 'must be a duration such as 30s, 10m or 1h30m', spec.duration)
    if (parsed <= 0 || parsed > MAX_TRACE_MS) throw ApiError.invalidField('duration', 'must be longer than 0 and at most 24h', spec.duration)
    ms = Math.ceil(parsed)
  }
  const traceId = spec.traceId ? spec.traceId : newTraceId()
  return { identityId, traceId, channels: [...new Set(spec.channels ?? [])], until: now + ms }
}
