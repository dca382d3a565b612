// Policy graph: services (defaults, configs, put/patch, delete cascade) and per-identity service config overrides
// (management.yml serviceCreate/serviceUpdate, /identities/{id}/service-configs; controller-behaviour.md §8).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { expectCode, expectInvalid, mkConfig, mkConfigType, mkRouter, mkService, openGraph, type GraphHarness } from './policy-graph-support.ts'

let h: GraphHarness
beforeEach(async () => {
  h = await openGraph()
})
afterEach(async () => {
  await h.close()
})

describe('services', () => {
  it('case=create fills the defaults and emits graph.service.put', async () => {
    h.clock.advance(5)
    const id = await mkService(h, 'svc')
    const s = h.actor.snapshot().services.get(id)!
    expect(s).toMatchObject({
      name: 'svc',
      roleAttributes: null,
      configs: [],
      encryptionRequired: true,
      terminatorStrategy: 'smartrouting',
      maxIdleTimeMillis: 0,
      tags: {},
    })
    expect(s.createdAt).toBe(h.clock.now())
    expect(h.store.db('services').get(id)).toEqual(s)
    expect(h.events).toEqual([{ type: 'graph.service.put', service: s }])
  })

  it('case=name is required and unique', async () => {
    await expectInvalid(mkService(h, ''), 'name', 'name is required')
    await mkService(h, 'dup')
    await expectInvalid(mkService(h, 'dup'), 'name', "duplicate value 'dup' in unique index on services store", 'dup')
  })

  it('case=role attributes may not be prefixed or empty', async () => {
    await expectInvalid(mkService(h, 's', { roleAttributes: ['#x'] }), 'roleAttributes')
    await expectInvalid(mkService(h, 's', { roleAttributes: [''] }), 'roleAttributes')
    const id = await mkService(h, 's', { roleAttributes: ['a', 'b', 'a'] })
    expect(h.actor.snapshot().services.get(id)!.roleAttributes).toEqual(['a', 'b'])
    expect([...h.actor.snapshot().services.idsWithRole('b')]).toEqual([id])
    expect(h.actor.snapshot().services.roleAttributes()).toEqual(['a', 'b'])
  })

  it('case=configs must exist, by id or name, one per config type', async () => {
    const t1 = await mkConfigType(h, 't1')
    const t2 = await mkConfigType(h, 't2')
    const a = await mkConfig(h, 'a', t1)
    const b = await mkConfig(h, 'b', t1)
    const c = await mkConfig(h, 'c', t2)
    await expectInvalid(mkService(h, 's', { configs: ['nope'] }), 'configs', 'nope is not a valid config id or name')
    await expectInvalid(mkService(h, 's', { configs: [a, b] }), 'configs', /duplicate configs named a and b found for config type t1/)
    const id = await mkService(h, 's', { configs: [a, 'c', a] })
    expect(h.actor.snapshot().services.get(id)!.configs).toEqual([a, c])
    expect(h.actor.snapshot().servicesUsingConfig(c).map((s) => s.id)).toEqual([id])
  })

  it('case=put resets absent optional fields; patch leaves them; encryptionRequired is fixed at create', async () => {
    const t = await mkConfigType(h, 't')
    const c = await mkConfig(h, 'c', t)
    const id = await mkService(h, 's', {
      roleAttributes: ['r'], configs: [c], encryptionRequired: false, terminatorStrategy: 'weighted', maxIdleTimeMillis: 10, tags: { k: 'v' },
    })
    const created = h.actor.snapshot().services.get(id)!
    h.clock.advance(1000)
    h.clearEvents()
    await h.ask({ type: 'service.update', id, input: { name: 's2', encryptionRequired: true }, replace: false })
    const patched = h.actor.snapshot().services.get(id)!
    expect(patched).toMatchObject({ name: 's2', roleAttributes: ['r'], configs: [c], encryptionRequired: false, terminatorStrategy: 'weighted', maxIdleTimeMillis: 10, tags: { k: 'v' } })
    expect(patched.createdAt).toBe(created.createdAt)
    expect(patched.updatedAt).toBe(created.createdAt + 1000)
    expect(h.events).toEqual([{ type: 'graph.service.put', service: patched, previous: created }])
    await h.ask({ type: 'service.update', id, input: { name: 's3' }, replace: true })
    expect(h.actor.snapshot().services.get(id)).toMatchObject({
      name: 's3', roleAttributes: null, configs: [], encryptionRequired: false, terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 0, tags: {},
    })
    expect(h.actor.snapshot().servicesUsingConfig(c)).toEqual([])
  })

  it('case=delete removes its terminators and overrides and strips its @id from policies', async () => {
    const s = await mkService(h, 's')
    const other = await mkService(h, 'other')
    const r = await mkRouter(h, 'r')
    const t = ((await h.ask({ type: 'terminator.create', input: { serviceId: s, routerId: r, binding: 'b', address: 'a' } })) as { id: string }).id
    const cfgType = await mkConfigType(h, 'ct')
    const cfg = await mkConfig(h, 'cfg', cfgType)
    h.identities.set('i1', 'one')
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: s, configId: cfg }, { serviceId: other, configId: cfg }] })
    const sp = ((await h.ask({ type: 'servicePolicy.create', input: { name: 'sp', type: 'Dial', semantic: 'AnyOf', serviceRoles: [`@${s}`, `@${other}`, '#x'] } })) as { id: string }).id
    const serp = ((await h.ask({ type: 'serviceEdgeRouterPolicy.create', input: { name: 'serp', semantic: 'AllOf', serviceRoles: [`@${s}`], edgeRouterRoles: ['#all'] } })) as { id: string }).id
    h.clearEvents()
    h.clock.advance(10)
    await h.ask({ type: 'service.delete', id: s })
    const snap = h.actor.snapshot()
    expect(snap.services.has(s)).toBe(false)
    expect(snap.terminators.has(t)).toBe(false)
    expect(h.store.db('terminators').get(t)).toBeUndefined()
    expect(snap.overridesOf('i1').map((o) => o.serviceId)).toEqual([other])
    expect(snap.servicePolicies.get(sp)!.serviceRoles).toEqual([`@${other}`, '#x'])
    expect(snap.servicePolicies.get(sp)!.updatedAt).toBe(h.clock.now())
    expect((h.store.db('service-policies').get(sp) as { serviceRoles: string[] }).serviceRoles).toEqual([`@${other}`, '#x'])
    expect(snap.serviceEdgeRouterPolicies.get(serp)!.serviceRoles).toEqual([])
    expect(snap.policiesReferencing('service', s)).toEqual([])
    expect(h.events.map((e) => e.type)).toEqual([
      'graph.service.deleted', 'graph.policy.put', 'graph.policy.put', 'graph.overrides.changed',
    ])
    const puts = h.eventsOf('graph.policy.put')
    expect(puts.map((e) => e.policy.id).sort()).toEqual([sp, serp].sort())
    expect(puts.find((e) => e.policy.id === sp)!.previous).toMatchObject({ serviceRoles: [`@${s}`, `@${other}`, '#x'] })
    await expectCode(h.ask({ type: 'service.delete', id: s }), 'NOT_FOUND')
  })
})

describe('service config overrides', () => {
  let svc: string
  let t1: string
  let a1: string
  let a2: string
  let b1: string
  beforeEach(async () => {
    svc = await mkService(h, 'svc')
    t1 = await mkConfigType(h, 't1')
    const t2 = await mkConfigType(h, 't2')
    a1 = await mkConfig(h, 'a1', t1)
    a2 = await mkConfig(h, 'a2', t1)
    b1 = await mkConfig(h, 'b1', t2)
    h.identities.set('i1', 'one')
    h.clearEvents()
  })

  it('case=service and config must exist', async () => {
    await expectInvalid(h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: 'nope', configId: a1 }] }), 'serviceId', undefined, 'nope')
    await expectInvalid(h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: svc, configId: 'nope' }] }), 'configId', undefined, 'nope')
    await expectCode(h.ask({ type: 'overrides.add', identityId: 'ghost', links: [{ serviceId: svc, configId: a1 }] }), 'NOT_FOUND')
    expect(h.actor.snapshot().overrideCount).toBe(0)
    expect(h.events).toEqual([])
  })

  it('case=an override of the same config type for the service is replaced', async () => {
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: svc, configId: a1 }, { serviceId: svc, configId: b1 }] })
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: svc, configId: a2 }] })
    const snap = h.actor.snapshot()
    expect(snap.overridesOf('i1').map((o) => o.configId).sort()).toEqual([a2, b1].sort())
    expect(snap.overrideConfig('i1', svc, t1)?.id).toBe(a2)
    expect(snap.overridesUsingConfig(a1)).toEqual([])
    expect(h.store.db('service-config-overrides').get(`i1/${svc}/${t1}`)).toEqual({ identityId: 'i1', serviceId: svc, configId: a2 })
    expect(h.eventsOf('graph.overrides.changed')).toEqual([
      { type: 'graph.overrides.changed', identityIds: ['i1'] },
      { type: 'graph.overrides.changed', identityIds: ['i1'] },
    ])
    h.clearEvents()
    // adding what is already there changes nothing
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: svc, configId: a2 }] })
    expect(h.events).toEqual([])
  })

  it('case=remove drops the listed overrides, or all of them', async () => {
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: svc, configId: a1 }, { serviceId: svc, configId: b1 }] })
    // a link naming another config of the type does not remove the override
    await h.ask({ type: 'overrides.remove', identityId: 'i1', links: [{ serviceId: svc, configId: a2 }] })
    expect(h.actor.snapshot().overridesOf('i1')).toHaveLength(2)
    await h.ask({ type: 'overrides.remove', identityId: 'i1', links: [{ serviceId: svc, configId: a1 }] })
    expect(h.actor.snapshot().overridesOf('i1').map((o) => o.configId)).toEqual([b1])
    await h.ask({ type: 'overrides.remove', identityId: 'i1' })
    expect(h.actor.snapshot().overridesOf('i1')).toEqual([])
    expect([...h.store.db('service-config-overrides').getRange()]).toEqual([])
  })

  it('case=identity.removed drops the overrides of the identity', async () => {
    h.identities.set('i2', 'two')
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: svc, configId: a1 }] })
    await h.ask({ type: 'overrides.add', identityId: 'i2', links: [{ serviceId: svc, configId: a1 }] })
    h.clearEvents()
    await h.ask({ type: 'identity.removed', identityId: 'i1' })
    expect(h.actor.snapshot().overridesOf('i1')).toEqual([])
    expect(h.actor.snapshot().overridesUsingConfig(a1).map((o) => o.identityId)).toEqual(['i2'])
    expect(h.events).toEqual([{ type: 'graph.overrides.changed', identityIds: ['i1'] }])
  })
})
