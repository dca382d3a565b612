// The volatile posture store (src/actors/posture-data/posture-data-registry.ts): responses replace the data record
// (new version), refused requests are bounded per identity, and both go with their API session / identity.
import { describe, expect, it } from 'bun:test'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { startPostureDataRegistry } from '../../../src/actors/posture-data/posture-data-registry.ts'
import { MAX_FAILED_REQUESTS } from '../../../src/domain/posture/posture-reads.ts'

const failure = (n: number) => ({ apiSessionId: 'as1', serviceId: `s${n}`, serviceName: `s${n}`, sessionType: 'Dial' as const, when: n, policyFailures: [] })

describe('posture data registry', () => {
  it('applies responses into a new record each time, keeping what other kinds reported', () => {
    const { registry } = startPostureDataRegistry(new EventBus())
    const first = registry.apply('as1', [{ typeId: 'DOMAIN', id: 'c', domain: 'corp' }], 10).after
    const second = registry.apply('as1', [
      { typeId: 'PROCESS', id: 'p', path: '/Bin/A', isRunning: true, hash: 'h', signerFingerprints: [] },
      { typeId: 'ENDPOINT_STATE', id: 'e', woken: true, unlocked: false },
    ], 20)
    expect(second.before).toBe(first)
    expect(second.after).not.toBe(first)
    expect(second.after).toMatchObject({ version: 2, domain: { name: 'corp', at: 10 }, wokenAt: 20, unlockedAt: null })
    expect(Object.keys(second.after.processes)).toEqual(['/bin/a'])
    expect(first.processes).toEqual({})
  })

  it('keeps the last MAX_FAILED_REQUESTS refusals of an identity', () => {
    const { registry } = startPostureDataRegistry(new EventBus())
    for (let n = 0; n < MAX_FAILED_REQUESTS + 5; n++) registry.recordFailure('i1', failure(n))
    const kept = registry.failedRequestsOf('i1')
    expect(kept).toHaveLength(MAX_FAILED_REQUESTS)
    expect(kept[0]!.serviceId).toBe('s5')
    expect(registry.failedRequestsOf('i2')).toEqual([])
  })

  it('forgets a session\'s data when it is deleted and an identity\'s refusals when it is deleted', () => {
    const bus = new EventBus()
    const { registry, stop } = startPostureDataRegistry(bus)
    registry.apply('as1', [{ typeId: 'DOMAIN', id: 'c', domain: 'corp' }], 10)
    registry.recordFailure('i1', failure(1))
    bus.publish({ type: 'apiSession.deleted', session: { id: 'as1' }, reason: 'logout' })
    bus.publish({ type: 'identity.deleted', identity: { id: 'i1' } })
    expect(registry.dataOf('as1')).toBeUndefined()
    expect(registry.failedRequestsOf('i1')).toEqual([])
    stop()
    registry.apply('as2', [{ typeId: 'DOMAIN', id: 'c', domain: 'corp' }], 10)
    bus.publish({ type: 'apiSession.deleted', session: { id: 'as2' }, reason: 'logout' })
    expect(registry.dataOf('as2')).toBeDefined()
  })
})
