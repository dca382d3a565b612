/**
 * The trace registry: one data-flow trace per identity, in memory only, as the real controller's trace manager keeps
 * them (a restart ends every trace, as it does there). It owns no sub-db and has no mailbox: changes are
 * synchronous and touch no LMDB. A trace expires by itself (reads compare `until` with the caller's clock, and an
 * expired record is dropped when it is next looked at); an identity's trace goes with the identity
 * (`identity.deleted`). At most one record per existing identity, so memory is bounded by the identity count.
 */
import type { EventBus } from '../runtime/event-bus.ts'
import type { IdentityEvent } from '../identity/identity-messages.ts'
import type { IdentityTrace, IdentityTraceReads } from '../../domain/identity/identity-trace.ts'

export class IdentityTraceRegistry implements IdentityTraceReads {
  private readonly traces = new Map<string, IdentityTrace>()

  traceOf(identityId: string, now: number): IdentityTrace | undefined {
    const trace = this.traces.get(identityId)
    if (trace && trace.until <= now) {
      this.traces.delete(identityId)
      return undefined
    }
    return trace
  }

  /** Starts (or replaces) the identity's trace. */
  start(trace: IdentityTrace): void {
    this.traces.set(trace.identityId, trace)
  }

  /** Ends the identity's trace; answers the one that was running at `now`, if any. */
  stop(identityId: string, now: number): IdentityTrace | undefined {
    const running = this.traceOf(identityId, now)
    this.traces.delete(identityId)
    return running
  }

  /** Drops the identity's trace, running or not. */
  forget(identityId: string): void {
    this.traces.delete(identityId)
  }

  /** How many records are held (expired ones included until looked at). */
  get size(): number {
    return this.traces.size
  }
}

/** The registry, kept in step with identity deletions. */
export function startIdentityTraceRegistry(bus: EventBus): { registry: IdentityTraceRegistry; stop(): void } {
  const registry = new IdentityTraceRegistry()
  const unsub = bus.subscribe<Extract<IdentityEvent, { type: 'identity.deleted' }>>('identity.deleted', (e) => registry.forget(e.identity.id))
  return { registry, stop: unsub }
}
