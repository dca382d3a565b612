// The trace registry (src/actors/identity-trace/identity-trace-registry.ts) and the trace decision
// (src/domain/identity/identity-trace.ts): a trace is gone once its `until` is reached, one per identity, dropped with
// its identity; durations parse as Go's, default to ten minutes and are bounded.
import { describe, expect, it } from 'bun:test'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { startIdentityTraceRegistry } from '../../../src/actors/identity-trace/identity-trace-registry.ts'
import { DEFAULT_TRACE_MS, decideTrace } from '../../../src/domain/identity/identity-trace.ts'
import { ApiError } from '../../../src/errors/api-error.ts'

const trace = (identityId: string, until: number) => ({ identityId, traceId: `t-${identityId}`, channels: [], until })

describe('identity trace registry', () => {
  it('answers a trace until its end and drops it from then on', () => {
    const { registry } = startIdentityTraceRegistry(new EventBus())
    registry.start(trace('i1', 100))
    expect(registry.traceOf('i1', 99)?.traceId).toBe('t-i1')
    expect(registry.traceOf('i1', 100)).toBeUndefined()
    expect(registry.size).toBe(0)
    expect(registry.stop('i1', 100)).toBeUndefined()
  })

  it('keeps one trace per identity; stop answers the running one', () => {
    const { registry } = startIdentityTraceRegistry(new EventBus())
    registry.start(trace('i1', 100))
    registry.start({ ...trace('i1', 200), traceId: 'second' })
    expect(registry.size).toBe(1)
    expect(registry.stop('i1', 150)?.traceId).toBe('second')
    expect(registry.traceOf('i1', 150)).toBeUndefined()
  })

  it('forgets the trace of a deleted identity', () => {
    const bus = new EventBus()
    const { registry, stop } = startIdentityTraceRegistry(bus)
    registry.start(trace('i1', 100))
    registry.start(trace('i2', 100))
    bus.publish({ type: 'identity.deleted', identity: { id: 'i1' } })
    expect(registry.traceOf('i1', 0)).toBeUndefined()
    expect(registry.traceOf('i2', 0)).toBeDefined()
    stop()
    bus.publish({ type: 'identity.deleted', identity: { id: 'i2' } })
    expect(registry.traceOf('i2', 0)).toBeDefined()
  })
})

describe('decideTrace', () => {
  const newId = () => 'new-id'
  it('takes the given id, channels (once each) and Go duration', () => {
    expect(decideTrace('i', { enabled: true, duration: '1m30s', traceId: 'mine', channels: ['a', 'b', 'a'] }, 1000, newId))
      .toEqual({ identityId: 'i', traceId: 'mine', channels: ['a', 'b'], until: 1000 + 90_000 })
  })
  it('defaults to a new id, no channels and ten minutes', () => {
    expect(decideTrace('i', { enabled: true, traceId: '', duration: '' }, 0, newId)).toEqual({ identityId: 'i', traceId: 'new-id', channels: [], until: DEFAULT_TRACE_MS })
  })
  for (const duration of ['soon', '10', '0', '0s', '24h1s', '-1m']) {
    it(`refuses the duration ${JSON.stringify(duration)} on its field`, () => {
      let thrown: unknown
      try {
        decideTrace('i', { enabled: true, duration }, 0, newId)
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(ApiError)
      expect((thrown as ApiError).code).toBe('COULD_NOT_VALIDATE')
      expect(JSON.stringify(thrown)).toContain('duration')
    })
  }
})
