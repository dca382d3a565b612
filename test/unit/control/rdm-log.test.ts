// The change-set log of the router data model: indexes only grow, each entry chains on the one before, a router is
// replayed what follows its index when that is kept, told to take a full state when it is not, and seen ahead of
// the node when it holds more; the bounds in entries and bytes drop the oldest first and keep the newest.
import { describe, expect, it } from 'bun:test'
import { create, fromBinary } from '@bufbuild/protobuf'
import { DataState_ChangeSetSchema, DataState_EventSchema, type DataState_Event } from '../../../src/control/pb/edge_ctrl_pb.ts'
import { ChangeSetLog } from '../../../src/control/rdm/rdm-log.ts'

const ev = (id: string): DataState_Event[] => [create(DataState_EventSchema, { Model: { case: 'service', value: { id, name: id } } })]

describe('ChangeSetLog', () => {
  it('chains each entry on the index before it, in its encoded body too', () => {
    const log = new ChangeSetLog(5n)
    const a = log.append(7n, ev('a'))
    const b = log.append(9n, ev('b'))
    expect([a.previousIndex, b.previousIndex]).toEqual([5n, 7n])
    const decoded = fromBinary(DataState_ChangeSetSchema, b.body)
    expect(decoded.index).toBe(9n)
    expect(decoded.previousIndex).toBe(7n)
    expect(decoded.isSynthetic).toBe(false)
    expect(log.currentIndex).toBe(9n)
  })

  it('refuses an index that does not grow', () => {
    const log = new ChangeSetLog(5n)
    log.append(6n, ev('a'))
    expect(() => log.append(6n, ev('b'))).toThrow(TypeError)
    expect(() => log.append(2n, ev('b'))).toThrow(TypeError)
  })

  it('replays what follows a held index, nothing to an up-to-date router, and a full state when the chain is not kept', () => {
    const log = new ChangeSetLog(1n)
    for (const i of [3n, 4n, 8n]) log.append(i, ev(String(i)))
    const after = (i: bigint) => {
      const r = log.replayAfter(i)
      return r.kind === 'replay' ? r.sets.map((s) => s.index) : r.kind
    }
    expect(after(1n)).toEqual([3n, 4n, 8n])
    expect(after(4n)).toEqual([8n])
    expect(after(8n)).toEqual([])
    // an index between two entries is not one this node made: the router's model is not this node's
    expect(after(5n)).toBe('full')
    expect(after(0n)).toBe('full')
    expect(after(9n)).toBe('future')
  })

  it('drops the oldest entries past its capacity, a tenth at a time, and then wants a full state for them', () => {
    const log = new ChangeSetLog(0n, 10)
    for (let i = 1n; i <= 11n; i++) log.append(i, ev(String(i)))
    expect(log.size).toBe(11)
    log.append(12n, ev('12'))
    expect(log.size).toBe(10)
    expect(log.replayAfter(1n).kind).toBe('full')
    expect(log.replayAfter(2n)).toMatchObject({ kind: 'replay' })
  })

  it('keeps the bodies within its byte bound, the newest always', () => {
    const log = new ChangeSetLog(0n, 1_000, 200)
    const big = (i: bigint) => log.append(i, [create(DataState_EventSchema, { Model: { case: 'service', value: { id: 'x'.repeat(150) } } })])
    big(1n)
    big(2n)
    expect(log.size).toBe(1)
    expect(log.replayAfter(1n)).toMatchObject({ kind: 'replay' })
    expect(log.replayAfter(0n).kind).toBe('full')
  })
})
