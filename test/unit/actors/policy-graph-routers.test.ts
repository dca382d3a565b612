// Policy graph: edge and fabric routers, the system edge router policy of tunneler-enabled edge routers, terminators
// (controller-behaviour.md §1 system entities, §3 system edge router policies; management.yml edgeRouterCreate,
// routerCreate, terminatorCreate).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { expectCode, expectInvalid, mkRouter, mkService, openGraph, type GraphHarness } from './policy-graph-support.ts'

let h: GraphHarness
beforeEach(async () => {
  h = await openGraph()
})
afterEach(async () => {
  await h.close()
})

const systemPolicy = (id: string) => ({
  id,
  name: `edge-router-${id}-system`,
  semantic: 'AnyOf',
  identityRoles: [`@${id}`],
  edgeRouterRoles: [`@${id}`],
  isSystem: true,
  tags: {},
})

describe('edge routers', () => {
  it('case=create fills the defaults and emits graph.router.put', async () => {
    const id = await mkRouter(h, 'er1')
    const r = h.actor.snapshot().routers.get(id)!
    expect(r).toMatchObject({
      name: 'er1', isEdge: true, roleAttributes: null, cost: 0, noTraversal: false, disabled: false, isTunnelerEnabled: false,
      appData: null, fingerprint: null, isVerified: false, tags: {},
    })
    expect(h.actor.snapshot().edgeRouters.get(id)).toBe(r)
    expect(h.store.db('routers').get(id)).toEqual(r)
    expect(h.events).toEqual([{ type: 'graph.router.put', router: r }])
    expect(h.actor.snapshot().edgeRouterPolicies.size).toBe(0)
  })

  it('case=name is required and unique across edge and fabric routers; cost is 0..65535', async () => {
    await expectInvalid(mkRouter(h, ''), 'name', 'name is required')
    await mkRouter(h, 'fab', {}, false)
    await expectInvalid(mkRouter(h, 'fab'), 'name', "duplicate value 'fab' in unique index on routers store", 'fab')
    await expectInvalid(mkRouter(h, 'c', { cost: 65536 }), 'cost', undefined, 65536)
    await expectInvalid(mkRouter(h, 'c', { cost: -1 }), 'cost')
    await expectInvalid(mkRouter(h, 'c', { roleAttributes: ['@x'] }), 'roleAttributes')
  })

  it('case=tunneler enabled on create: the system edge router policy is written in the same transaction', async () => {
    const id = await mkRouter(h, 'tun', { isTunnelerEnabled: true })
    const p = h.actor.snapshot().edgeRouterPolicies.get(id)!
    expect(p).toMatchObject(systemPolicy(id))
    expect(h.store.db('edge-router-policies').get(id)).toEqual(p)
    expect(h.actor.snapshot().edgeRouterPolicies.idByName(`edge-router-${id}-system`)).toBe(id)
    expect(h.events.map((e) => e.type)).toEqual(['graph.router.put', 'graph.policy.put'])
    expect(h.eventsOf('graph.policy.put')[0].policy).toEqual({
      id, kind: 'edge-router-policy', semantic: 'AnyOf', identityRoles: [`@${id}`], edgeRouterRoles: [`@${id}`],
    })
  })

  it("case=a tunneler router's name must be free among identities (its identity takes it)", async () => {
    h.identities.set('someone', 'taken')
    await expectInvalid(mkRouter(h, 'taken', { isTunnelerEnabled: true }), 'name', "duplicate value 'taken' in unique index on identities store")
    expect(h.actor.snapshot().routers.size).toBe(0)
    const plain = await mkRouter(h, 'taken')
    await expectInvalid(h.ask({ type: 'router.update', id: plain, input: { isTunnelerEnabled: true }, replace: false }), 'name')
    // its own identity (id = router id) does not count
    const tun = await mkRouter(h, 'mine', { isTunnelerEnabled: true })
    h.identities.set(tun, 'mine')
    await h.ask({ type: 'router.update', id: tun, input: { name: 'mine', cost: 3 }, replace: false })
    expect(h.actor.snapshot().routers.get(tun)!.cost).toBe(3)
  })

  it('case=turning tunneling off removes the system policy, turning it on creates it again', async () => {
    const id = await mkRouter(h, 'tun', { isTunnelerEnabled: true })
    h.clearEvents()
    await h.ask({ type: 'router.update', id, input: { isTunnelerEnabled: false }, replace: false })
    expect(h.actor.snapshot().edgeRouterPolicies.has(id)).toBe(false)
    expect(h.store.db('edge-router-policies').get(id)).toBeUndefined()
    expect(h.events.map((e) => e.type)).toEqual(['graph.router.put', 'graph.policy.deleted'])
    await h.ask({ type: 'router.update', id, input: { isTunnelerEnabled: true }, replace: false })
    expect(h.actor.snapshot().edgeRouterPolicies.get(id)).toMatchObject(systemPolicy(id))
    // put without isTunnelerEnabled resets it to false
    await h.ask({ type: 'router.update', id, input: { name: 'tun' }, replace: true })
    expect(h.actor.snapshot().routers.get(id)!.isTunnelerEnabled).toBe(false)
    expect(h.actor.snapshot().edgeRouterPolicies.has(id)).toBe(false)
  })

  it('case=the system policy cannot be updated or deleted by admins (400)', async () => {
    const id = await mkRouter(h, 'tun', { isTunnelerEnabled: true })
    await expectCode(
      h.ask({ type: 'edgeRouterPolicy.update', id, input: { name: 'x' }, replace: false }),
      'ENTITY_CAN_NOT_BE_UPDATED',
      `cannot update system edgeRouterPolicy in a non-system context (id=${id})`,
    )
    await expectCode(
      h.ask({ type: 'edgeRouterPolicy.delete', id }),
      'ENTITY_CAN_NOT_BE_DELETED',
      `cannot delete system edgeRouterPolicy in a non-system context (id=${id})`,
    )
    expect(h.actor.snapshot().edgeRouterPolicies.get(id)!.name).toBe(`edge-router-${id}-system`)
  })

  it('case=put resets absent fields; patch leaves them; createdAt kept, updatedAt stamped', async () => {
    const id = await mkRouter(h, 'r', { cost: 7, noTraversal: true, disabled: true, roleAttributes: ['a'], appData: { k: 'v' }, tags: { t: 'x' } })
    const created = h.actor.snapshot().routers.get(id)!
    h.clock.advance(50)
    h.clearEvents()
    await h.ask({ type: 'router.update', id, input: { name: 'r2' }, replace: false })
    const patched = h.actor.snapshot().routers.get(id)!
    expect(patched).toMatchObject({ name: 'r2', cost: 7, noTraversal: true, disabled: true, roleAttributes: ['a'], appData: { k: 'v' }, tags: { t: 'x' } })
    expect([patched.createdAt, patched.updatedAt]).toEqual([created.createdAt, created.createdAt + 50])
    expect(h.events).toEqual([{ type: 'graph.router.put', router: patched, previous: created }])
    await h.ask({ type: 'router.update', id, input: { name: 'r3' }, replace: true })
    expect(h.actor.snapshot().routers.get(id)).toMatchObject({
      name: 'r3', cost: 0, noTraversal: false, disabled: false, roleAttributes: null, appData: null, tags: {},
    })
    expect(h.actor.snapshot().edgeRouters.idsWithRole('a').size).toBe(0)
  })

  it('case=delete removes its terminators and system policy and strips its @id from policies', async () => {
    const r = await mkRouter(h, 'tun', { isTunnelerEnabled: true })
    const other = await mkRouter(h, 'other')
    const s = await mkService(h, 's')
    const t = ((await h.ask({ type: 'terminator.create', input: { serviceId: s, routerId: r, binding: 'b', address: 'a' } })) as { id: string }).id
    const erp = ((await h.ask({ type: 'edgeRouterPolicy.create', input: { name: 'erp', semantic: 'AnyOf', edgeRouterRoles: [`@${r}`, `@${other}`] } })) as { id: string }).id
    const serp = ((await h.ask({ type: 'serviceEdgeRouterPolicy.create', input: { name: 'serp', semantic: 'AnyOf', edgeRouterRoles: [`@${r}`] } })) as { id: string }).id
    h.clearEvents()
    await h.ask({ type: 'router.delete', id: r })
    const snap = h.actor.snapshot()
    expect(snap.routers.has(r)).toBe(false)
    expect(snap.terminators.has(t)).toBe(false)
    expect(snap.terminatorsOfService(s)).toEqual([])
    expect(snap.edgeRouterPolicies.has(r)).toBe(false)
    expect(snap.edgeRouterPolicies.get(erp)!.edgeRouterRoles).toEqual([`@${other}`])
    expect(snap.serviceEdgeRouterPolicies.get(serp)!.edgeRouterRoles).toEqual([])
    expect(h.store.db('edge-router-policies').get(r)).toBeUndefined()
    expect(h.events.map((e) => e.type)).toEqual(['graph.router.deleted', 'graph.policy.deleted', 'graph.policy.put', 'graph.policy.put'])
    expect(h.eventsOf('graph.policy.deleted')[0].policy.id).toBe(r)
  })
})

describe('fabric routers', () => {
  it('case=carry no edge fields, emit only their own put and delete, and cannot be named in policies', async () => {
    const id = await mkRouter(h, 'fab', { roleAttributes: ['x'], isTunnelerEnabled: true, appData: { a: 1 } }, false)
    const r = h.actor.snapshot().routers.get(id)!
    expect(r).toMatchObject({ isEdge: false, roleAttributes: null, isTunnelerEnabled: false, appData: null })
    expect(h.actor.snapshot().edgeRouters.has(id)).toBe(false)
    expect(h.actor.snapshot().edgeRouterPolicies.size).toBe(0)
    await h.ask({ type: 'router.update', id, input: { cost: 4 }, replace: false })
    await expectInvalid(
      h.ask({ type: 'edgeRouterPolicy.create', input: { name: 'p', semantic: 'AnyOf', edgeRouterRoles: [`@${id}`] } }),
      'edgeRouterRoles',
      'no edge routers found with the given ids',
      [id],
    )
    await h.ask({ type: 'router.delete', id })
    // the control plane hears of every router (a deleted one loses its channel); no policy event comes with them
    expect(h.events.map((e) => e.type)).toEqual(['graph.router.put', 'graph.router.put', 'graph.router.deleted'])
  })
})

describe('terminators', () => {
  let s: string
  let r: string
  beforeEach(async () => {
    s = await mkService(h, 's')
    r = await mkRouter(h, 'fab', {}, false)
  })

  it('case=service and router must exist; binding and address are required', async () => {
    const base = { serviceId: s, routerId: r, binding: 'transport', address: 'tcp:a:1' }
    await expectInvalid(h.ask({ type: 'terminator.create', input: { ...base, serviceId: 'x' } }), 'service', undefined, 'x')
    await expectInvalid(h.ask({ type: 'terminator.create', input: { ...base, routerId: 'x' } }), 'router', undefined, 'x')
    await expectInvalid(h.ask({ type: 'terminator.create', input: { ...base, binding: '' } }), 'binding', 'binding is required')
    await expectInvalid(h.ask({ type: 'terminator.create', input: { ...base, address: undefined } }), 'address', 'address is required')
    await expectInvalid(h.ask({ type: 'terminator.create', input: { ...base, cost: 70000 } }), 'cost')
    await expectInvalid(h.ask({ type: 'terminator.create', input: { ...base, precedence: 'best' as never } }), 'precedence')
    expect(h.actor.snapshot().terminators.size).toBe(0)
  })

  it('case=defaults, indexes by service and router, put and patch', async () => {
    const id = ((await h.ask({ type: 'terminator.create', input: { serviceId: s, routerId: r, binding: 'b', address: 'a', cost: 5, precedence: 'required' } })) as { id: string }).id
    expect(h.actor.snapshot().terminators.get(id)).toMatchObject({ identity: '', identitySecret: null, cost: 5, precedence: 'required', tags: {} })
    expect(h.actor.snapshot().terminatorsOfService(s).map((t) => t.id)).toEqual([id])
    expect(h.actor.snapshot().terminatorsOfRouter(r).map((t) => t.id)).toEqual([id])
    await h.ask({ type: 'terminator.update', id, input: { address: 'b' }, replace: false })
    expect(h.actor.snapshot().terminators.get(id)).toMatchObject({ address: 'b', cost: 5, precedence: 'required' })
    const r2 = await mkRouter(h, 'r2')
    await h.ask({ type: 'terminator.update', id, input: { serviceId: s, routerId: r2, binding: 'b', address: 'c' }, replace: true })
    expect(h.actor.snapshot().terminators.get(id)).toMatchObject({ routerId: r2, cost: 0, precedence: 'default' })
    expect(h.actor.snapshot().terminatorsOfRouter(r)).toEqual([])
    await h.ask({ type: 'terminator.delete', id })
    expect(h.actor.snapshot().terminatorsOfRouter(r2)).toEqual([])
    await expectCode(h.ask({ type: 'terminator.delete', id }), 'NOT_FOUND')
  })
})

describe('router enrollment in the router record', () => {
  const enrollment = (token: string, expiresAt = 1_700_000_000_000 + 60_000) => ({ token, jwt: `jwt-${token}`, expiresAt })
  const enrolled = async (name: string, token: string) =>
    ((await h.ask({ type: 'router.create', input: { name }, isEdge: true, id: `id-${name}`, enrollment: enrollment(token) })) as { id: string }).id

  it('case=create takes the chosen id and the enrollment, findable by its token', async () => {
    const id = await enrolled('er-e1', 'tok-1')
    expect(id).toBe('id-er-e1')
    const r = h.actor.snapshot().routers.get(id)!
    expect(r).toMatchObject({ isVerified: false, fingerprint: null, enrollment: { token: 'tok-1', jwt: 'jwt-tok-1', createdAt: h.clock.now() } })
    expect(h.actor.snapshot().routerOfEnrollmentToken('tok-1')?.id).toBe(id)
  })

  it('case=enroll verifies the router with the fingerprint and consumes the token, once', async () => {
    const id = await enrolled('er-e2', 'tok-2')
    h.clearEvents()
    expect(await h.ask({ type: 'router.enroll', token: 'tok-2', fingerprint: 'fp-2' })).toEqual({ id })
    const s = h.actor.snapshot()
    expect(s.routers.get(id)).toMatchObject({ isVerified: true, fingerprint: 'fp-2', enrollment: null })
    expect(s.routerOfEnrollmentToken('tok-2')).toBeUndefined()
    expect(s.routerOfFingerprint('fp-2')?.id).toBe(id)
    expect(h.eventsOf('graph.router.put').length).toBe(1)
    await expectCode(h.ask({ type: 'router.enroll', token: 'tok-2', fingerprint: 'fp-other' }), 'INVALID_ENROLLMENT_TOKEN')
    expect(h.actor.snapshot().routers.get(id)?.fingerprint).toBe('fp-2')
  })

  it('case=enroll refuses an expired token and writes nothing', async () => {
    const id = await enrolled('er-e3', 'tok-3')
    h.clock.advance(60_000)
    await expectCode(h.ask({ type: 'router.enroll', token: 'tok-3', fingerprint: 'fp-3' }), 'ENROLLMENT_EXPIRED')
    expect(h.actor.snapshot().routers.get(id)).toMatchObject({ isVerified: false, fingerprint: null })
  })

  it('case=extend moves the fingerprint only from the current one', async () => {
    const id = await enrolled('er-e4', 'tok-4')
    await h.ask({ type: 'router.enroll', token: 'tok-4', fingerprint: 'fp-a' })
    await h.ask({ type: 'router.extend', id, previous: 'fp-a', fingerprint: 'fp-b' })
    expect(h.actor.snapshot().routerOfFingerprint('fp-a')).toBeUndefined()
    expect(h.actor.snapshot().routerOfFingerprint('fp-b')?.id).toBe(id)
    await expectCode(h.ask({ type: 'router.extend', id, previous: 'fp-a', fingerprint: 'fp-c' }), 'UNAUTHORIZED')
    expect(h.actor.snapshot().routers.get(id)?.fingerprint).toBe('fp-b')
  })

  it('case=reEnroll drops the certificate and replaces the enrollment; the rest is kept; it all survives a restart', async () => {
    const id = await enrolled('er-e5', 'tok-5')
    await h.ask({ type: 'router.update', id, input: { roleAttributes: ['x'], cost: 3 }, replace: false })
    await h.ask({ type: 'router.enroll', token: 'tok-5', fingerprint: 'fp-5' })
    await h.ask({ type: 'router.reEnroll', id, enrollment: enrollment('tok-6') })
    await h.restart()
    const s = h.actor.snapshot()
    expect(s.routers.get(id)).toMatchObject({ name: 'er-e5', roleAttributes: ['x'], cost: 3, isVerified: false, fingerprint: null, enrollment: { token: 'tok-6' } })
    expect(s.routerOfFingerprint('fp-5')).toBeUndefined()
    expect(s.routerOfEnrollmentToken('tok-6')?.id).toBe(id)
    await expectCode(h.ask({ type: 'router.reEnroll', id: 'nope', enrollment: enrollment('tok-7') }), 'NOT_FOUND')
  })
})
