// Policy graph: terminators routers ask for (terminator.establish, routerUpdate, removeMany), the created event, and
// system terminators under the Management API's writes (router-control-plane.md §4.2; ziti
// controller/handler_edge_ctrl/create_terminator_v2.go, common.go validateExistingTerminator; the system entity
// constraint of controller/storage/boltz and the system-context delete of controller/db/terminator_store.go).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import type { RouterTerminatorInput } from '../../../src/actors/policy-graph/policy-graph-messages.ts'
import { expectCode, expectInvalid, mkRouter, mkService, openGraph, type GraphHarness } from './policy-graph-support.ts'

let h: GraphHarness
let s: string
let r: string
beforeEach(async () => {
  h = await openGraph()
  s = await mkService(h, 's')
  r = await mkRouter(h, 'er')
})
afterEach(async () => {
  await h.close()
})

const edge = (over: Partial<RouterTerminatorInput> = {}): RouterTerminatorInput => ({
  id: 't-1', serviceId: s, routerId: r, binding: 'edge', address: 't-1', identity: '', identitySecret: null,
  peerData: { '1003': 'AQID' }, cost: 10, precedence: 'default', hostId: 'host-1', isSystem: true, sourceCtrl: 'ctrl-a',
  ...over,
})

describe('terminator.establish', () => {
  it('case=creates a system terminator with the id and address asked for, and emits graph.terminator.created', async () => {
    expect(await h.ask({ type: 'terminator.establish', input: edge() })).toEqual({ outcome: 'created', id: 't-1' })
    const t = h.actor.snapshot().terminators.get('t-1')
    expect(t).toMatchObject({ id: 't-1', address: 't-1', binding: 'edge', serviceId: s, routerId: r, hostId: 'host-1', isSystem: true, peerData: { '1003': 'AQID' }, sourceCtrl: 'ctrl-a', cost: 10 })
    expect(h.eventsOf('graph.terminator.created').map((e) => e.terminator.id)).toEqual(['t-1'])
    expect(h.actor.snapshot().terminatorsOfRouter(r).map((x) => x.id)).toEqual(['t-1'])
  })

  it('case=the same terminator again: unchanged, or only cost and precedence updated; no second created event', async () => {
    await h.ask({ type: 'terminator.establish', input: edge() })
    const createdAt = h.actor.snapshot().terminators.get('t-1')!.createdAt
    h.clearEvents()
    expect(await h.ask({ type: 'terminator.establish', input: edge({ peerData: {}, identity: 'other' }) })).toEqual({ outcome: 'unchanged', id: 't-1' })
    h.clock.advance(1_000)
    expect(await h.ask({ type: 'terminator.establish', input: edge({ cost: 20, precedence: 'required', identity: 'other' }) })).toEqual({ outcome: 'updated', id: 't-1' })
    const t = h.actor.snapshot().terminators.get('t-1')!
    expect(t).toMatchObject({ cost: 20, precedence: 'required', identity: '', peerData: { '1003': 'AQID' }, createdAt })
    expect(t.updatedAt).toBe(createdAt + 1_000)
    expect(h.eventsOf('graph.terminator.created')).toEqual([])
  })

  it('case=an id taken by another binding, service, router or identity is a conflict naming it; nothing is written', async () => {
    await h.ask({ type: 'terminator.establish', input: edge() })
    const s2 = await mkService(h, 's2')
    const r2 = await mkRouter(h, 'er2')
    expect(await h.ask({ type: 'terminator.establish', input: edge({ binding: 'transport', serviceId: s2 }) })).toEqual({ outcome: 'conflict', with: 'binding' })
    expect(await h.ask({ type: 'terminator.establish', input: edge({ serviceId: s2, routerId: r2 }) })).toEqual({ outcome: 'conflict', with: 'service' })
    expect(await h.ask({ type: 'terminator.establish', input: edge({ routerId: r2, hostId: 'other' }) })).toEqual({ outcome: 'conflict', with: 'router' })
    expect(await h.ask({ type: 'terminator.establish', input: edge({ hostId: 'other', cost: 99 }) })).toEqual({ outcome: 'conflict', with: 'identity' })
    expect(h.actor.snapshot().terminators.get('t-1')).toMatchObject({ serviceId: s, routerId: r, hostId: 'host-1', cost: 10 })
  })

  it('case=a service or router that is gone writes nothing', async () => {
    expect(await h.ask({ type: 'terminator.establish', input: edge({ serviceId: 'gone' }) })).toEqual({ outcome: 'no-service' })
    expect(await h.ask({ type: 'terminator.establish', input: edge({ routerId: 'gone' }) })).toEqual({ outcome: 'no-router' })
    expect(h.actor.snapshot().terminators.size).toBe(0)
  })

  it('case=an empty id (a fabric router\'s request) gets an id of the graph\'s, the address asked for', async () => {
    const out = await h.ask({ type: 'terminator.establish', input: edge({ id: '', binding: 'transport', address: 'tcp:db:5432', isSystem: false, hostId: '' }) })
    expect(out).toMatchObject({ outcome: 'created' })
    const id = (out as { id: string }).id
    expect(id).not.toBe('')
    expect(h.actor.snapshot().terminators.get(id)).toMatchObject({ address: 'tcp:db:5432', binding: 'transport', isSystem: false })
  })

  it('case=refuses an id longer than 512 bytes (a store key) and oversized fields, writing nothing', async () => {
    await expectInvalid(h.ask({ type: 'terminator.establish', input: edge({ id: 'x'.repeat(513), address: 'x'.repeat(513) }) }), 'id')
    await expectInvalid(h.ask({ type: 'terminator.establish', input: edge({ identity: 'i'.repeat(4_097) }) }), 'instanceId')
    await expectInvalid(h.ask({ type: 'terminator.establish', input: edge({ peerData: { '1': Buffer.alloc(70_000).toString('base64') } }) }), 'peerData')
    expect(h.actor.snapshot().terminators.size).toBe(0)
    expect(await h.ask({ type: 'terminator.establish', input: edge({ id: 'x'.repeat(512), address: 'x'.repeat(512) }) })).toMatchObject({ outcome: 'created' })
  })

  it('case=survives a restart with every field', async () => {
    await h.ask({ type: 'terminator.establish', input: edge({ identity: 'inst-1', identitySecret: 'c2VjcmV0' }) })
    const before = h.actor.snapshot().terminators.get('t-1')
    await h.restart()
    expect(h.actor.snapshot().terminators.get('t-1')).toEqual(before!)
  })
})

describe('terminator.routerUpdate and terminator.removeMany', () => {
  beforeEach(async () => {
    await h.ask({ type: 'terminator.establish', input: edge() })
  })

  it('case=changes cost and precedence of a terminator on the asking router, of the binding asked for', async () => {
    expect(await h.ask({ type: 'terminator.routerUpdate', id: 't-1', routerId: r, binding: 'edge', cost: 7 })).toEqual({ outcome: 'updated' })
    expect(h.actor.snapshot().terminators.get('t-1')).toMatchObject({ cost: 7, precedence: 'default' })
    expect(await h.ask({ type: 'terminator.routerUpdate', id: 't-1', routerId: r, binding: 'edge', cost: 7 })).toEqual({ outcome: 'unchanged' })
    expect(await h.ask({ type: 'terminator.routerUpdate', id: 't-1', routerId: r, precedence: 'failed' })).toEqual({ outcome: 'updated' })
    expect(h.actor.snapshot().terminators.get('t-1')).toMatchObject({ cost: 7, precedence: 'failed' })
  })

  it('case=refuses an unknown terminator, one on another router, one of another binding', async () => {
    expect(await h.ask({ type: 'terminator.routerUpdate', id: 'nope', routerId: r, cost: 1 })).toEqual({ outcome: 'refused', refusal: { reason: 'not-found' } })
    expect(await h.ask({ type: 'terminator.routerUpdate', id: 't-1', routerId: 'other', cost: 1 })).toEqual({ outcome: 'refused', refusal: { reason: 'other-router', routerId: r } })
    expect(await h.ask({ type: 'terminator.routerUpdate', id: 't-1', routerId: r, binding: 'transport', cost: 1 })).toEqual({ outcome: 'refused', refusal: { reason: 'other-binding', binding: 'edge' } })
    expect(h.actor.snapshot().terminators.get('t-1')!.cost).toBe(10)
  })

  it('case=removes the listed ones present (on the router, when given) and counts them', async () => {
    await h.ask({ type: 'terminator.establish', input: edge({ id: 't-2', address: 't-2' }) })
    const r2 = await mkRouter(h, 'er2')
    await h.ask({ type: 'terminator.establish', input: edge({ id: 't-3', address: 't-3', routerId: r2 }) })
    expect(await h.ask({ type: 'terminator.removeMany', ids: ['t-1', 't-3', 'absent'], routerId: r })).toEqual({ removed: 1 })
    expect([...h.actor.snapshot().terminators.values()].map((t) => t.id).sort()).toEqual(['t-2', 't-3'])
    expect(await h.ask({ type: 'terminator.removeMany', ids: ['t-2', 't-3'] })).toEqual({ removed: 2 })
    expect(h.actor.snapshot().terminators.size).toBe(0)
    await h.restart()
    expect(h.actor.snapshot().terminators.size).toBe(0)
  })
})

describe('system terminators under the Management API', () => {
  beforeEach(async () => {
    await h.ask({ type: 'terminator.establish', input: edge() })
  })

  it('case=refuses PUT and PATCH with ENTITY_CAN_NOT_BE_UPDATED, leaves it as it was', async () => {
    await expectCode(h.ask({ type: 'terminator.update', id: 't-1', input: { cost: 1 }, replace: false }), 'ENTITY_CAN_NOT_BE_UPDATED', 'cannot update system terminator in a non-system context (id=t-1)')
    await expectCode(h.ask({ type: 'terminator.update', id: 't-1', input: { serviceId: s, routerId: r, binding: 'edge', address: 'x' }, replace: true }), 'ENTITY_CAN_NOT_BE_UPDATED')
    expect(h.actor.snapshot().terminators.get('t-1')).toMatchObject({ cost: 10, address: 't-1', isSystem: true })
  })

  it('case=takes DELETE, as the real controller deletes terminators in a system context', async () => {
    await h.ask({ type: 'terminator.delete', id: 't-1' })
    expect(h.actor.snapshot().terminators.has('t-1')).toBe(false)
  })

  it('case=a terminator the Management API creates is not system and emits graph.terminator.created too', async () => {
    h.clearEvents()
    const id = ((await h.ask({ type: 'terminator.create', input: { serviceId: s, routerId: r, binding: 'transport', address: 'tcp:a:1' } })) as { id: string }).id
    expect(h.actor.snapshot().terminators.get(id)).toMatchObject({ isSystem: false, peerData: {}, sourceCtrl: '', hostId: '' })
    expect(h.eventsOf('graph.terminator.created').map((e) => e.terminator.id)).toEqual([id])
    await h.ask({ type: 'terminator.update', id, input: { cost: 3 }, replace: false })
    expect(h.eventsOf('graph.terminator.created')).toHaveLength(1)
  })
})
