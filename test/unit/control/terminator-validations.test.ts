// The validation queue of the terminators feature (src/control/terminators/terminator-validations.ts), with the
// time passed in: markers, the 5 s age, one request per router at a time, the 3 min retry, answers settling only
// their markers, deletes in batches of existing terminators (ziti controller/network/router_messaging.go).
import { describe, expect, it } from 'bun:test'
import { TerminatorValidations, type ValidatedTerminator } from '../../../src/control/terminators/terminator-validations.ts'

const t = (id: string, routerId = 'r1', createdAt = 0, sourceCtrl = 'a'): ValidatedTerminator => ({ id, routerId, binding: 'edge', address: id, createdAt, sourceCtrl })
const connected = () => true
const all = () => true
const ids = (reqs: { terminators: { id: string }[] }[]) => reqs.map((r) => r.terminators.map((x) => x.id))

describe('TerminatorValidations', () => {
  it('asks about terminators older than 5 s, one request per router, with distinct non-zero markers', () => {
    const v = new TerminatorValidations()
    v.queue([t('a', 'r1', 0), t('b', 'r1', 4_000), t('c', 'r2', 0)])
    const reqs = v.requests(5_001, connected, all)
    expect(reqs.map((r) => r.routerId)).toEqual(['r1', 'r2'])
    expect(ids(reqs)).toEqual([['a'], ['c']])
    const markers = reqs.flatMap((r) => r.terminators.map((x) => x.marker))
    expect(new Set(markers).size).toBe(2)
    expect(markers.every((m) => m > 0n)).toBe(true)
  })

  it('sends no second request to a router while one is out, until 3 min have passed', () => {
    const v = new TerminatorValidations()
    v.queue([t('a')])
    expect(ids(v.requests(10_000, connected, all))).toEqual([['a']])
    v.queue([t('b')])
    expect(v.requests(20_000, connected, all)).toEqual([])
    expect(ids(v.requests(10_000 + 180_000, connected, all))).toEqual([['a', 'b']])
  })

  it('settles what an answer names with the current marker (or 0); invalid ones are to be deleted; the rest go out again', () => {
    const v = new TerminatorValidations()
    v.queue([t('a'), t('b'), t('c'), t('d')])
    const [req] = v.requests(10_000, connected, all)
    const m = new Map(req!.terminators.map((x) => [x.id, x.marker]))
    const invalid = v.answered('r1', new Map([
      ['a', { valid: true, marker: m.get('a')! }],
      ['b', { valid: false, marker: m.get('b')! }],
      ['c', { valid: false, marker: m.get('c')! + 99n }],
      ['x', { valid: false, marker: 0n }],
    ]))
    expect(invalid).toEqual(['b'])
    expect(v.queued().get('r1')).toEqual(['c', 'd'])
    // the answer ended the request: the rest are asked about at once
    expect(ids(v.requests(10_001, connected, all))).toEqual([['c', 'd']])
    expect(v.answered('r1', new Map([['c', { valid: false, marker: 0n }], ['d', { valid: true, marker: 0n }]]))).toEqual(['c'])
    expect(v.queued().has('r1')).toBe(false)
  })

  it('queues a terminator again with a new marker: an answer to the older request does not settle it', () => {
    const v = new TerminatorValidations()
    v.queue([t('a')])
    const [first] = v.requests(10_000, connected, all)
    v.queue([t('a')])
    expect(v.answered('r1', new Map([['a', { valid: false, marker: first!.terminators[0]!.marker }]]))).toEqual([])
    expect(v.queued().get('r1')).toEqual(['a'])
  })

  it('drops the queue of a router that is not connected, and terminators this node may not validate', () => {
    const v = new TerminatorValidations()
    v.queue([t('a', 'gone'), t('b', 'r1', 0, 'other-node'), t('c', 'r1', 0, 'a')])
    expect(ids(v.requests(10_000, (r) => r !== 'gone', (x) => x.sourceCtrl === 'a'))).toEqual([['c']])
    expect([...v.queued().keys()]).toEqual(['r1'])
    v.routerGone('r1')
    expect(v.queued().size).toBe(0)
  })

  it('a request that could not be sent may go out again at once', () => {
    const v = new TerminatorValidations()
    v.queue([t('a')])
    v.requests(10_000, connected, all)
    v.unsent('r1')
    expect(ids(v.requests(10_001, connected, all))).toEqual([['a']])
  })

  it('hands out deletes in batches of 100, of terminators that still exist', () => {
    const v = new TerminatorValidations()
    v.queue(Array.from({ length: 150 }, (_, i) => t(`t${i}`)))
    const [req] = v.requests(10_000, connected, all)
    v.answered('r1', new Map(req!.terminators.map((x) => [x.id, { valid: false, marker: x.marker }])))
    expect(v.pendingDeletes).toBe(150)
    const first = v.nextDeletes((id) => id !== 't0')
    expect(first).toHaveLength(100)
    expect(first).not.toContain('t0')
    expect(v.pendingDeletes).toBe(149)
    v.deleted(first)
    expect(v.nextDeletes(() => true)).toHaveLength(49)
  })
})
