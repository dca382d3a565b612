// Policy graph: service policies, edge router policies, service edge router policies (role syntax and `@id` checks,
// semantic and type, put/patch, events), identity removal, and a restart that reloads everything
// (controller-behaviour.md §1 model-level validation, §3 roles and policies).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { expectCode, expectInvalid, mkConfig, mkConfigType, mkRouter, mkService, openGraph, type GraphHarness } from './policy-graph-support.ts'

let h: GraphHarness
beforeEach(async () => {
  h = await openGraph()
})
afterEach(async () => {
  await h.close()
})

const sp = (input: Record<string, unknown>) => h.ask({ type: 'servicePolicy.create', input: { name: 'sp', type: 'Dial', semantic: 'AllOf', ...input } })
const idOf = async (p: Promise<unknown>) => ((await p) as { id: string }).id

describe('service policies', () => {
  it('case=create stores canonical semantic and type and emits the index view', async () => {
    h.identities.set('i1', 'one')
    const s = await mkService(h, 's')
    h.clearEvents()
    const id = await idOf(sp({ type: 'bind', semantic: 'anyof', identityRoles: ['@i1', '#a', '#a'], serviceRoles: [`@${s}`], tags: { k: 'v' } }))
    const p = h.actor.snapshot().servicePolicies.get(id)!
    expect(p).toMatchObject({ name: 'sp', type: 'Bind', semantic: 'AnyOf', identityRoles: ['@i1', '#a'], serviceRoles: [`@${s}`], postureCheckRoles: [], tags: { k: 'v' } })
    expect(h.store.db('service-policies').get(id)).toEqual(p)
    expect(h.events).toEqual([{
      type: 'graph.policy.put',
      policy: { id, kind: 'service-policy', type: 'Bind', semantic: 'AnyOf', identityRoles: ['@i1', '#a'], serviceRoles: [`@${s}`], postureCheckRoles: [] },
    }])
    expect(h.actor.snapshot().policiesReferencing('identity', 'i1')).toEqual([{ kind: 'service-policy', id }])
  })

  it('case=name, type and semantic are checked', async () => {
    await expectInvalid(sp({ name: '' }), 'name', 'name is required')
    await sp({})
    await expectInvalid(sp({}), 'name', "duplicate value 'sp' in unique index on servicePolicies store", 'sp')
    await expectInvalid(sp({ name: 'x', type: 'Connect' }), 'type', undefined, 'Connect')
    await expectInvalid(sp({ name: 'x', type: undefined }), 'type')
    await expectInvalid(sp({ name: 'x', semantic: 'OneOf' }), 'semantic', undefined, 'OneOf')
  })

  it('case=role entries need # or @, #all alone', async () => {
    await expectInvalid(sp({ identityRoles: ['plain'] }), 'identityRoles', /must prefixed with #/)
    await expectInvalid(sp({ serviceRoles: ['#all', '#x'] }), 'serviceRoles', 'if using #all, it should be the only role specified')
    await expectInvalid(sp({ postureCheckRoles: ['#'] }), 'postureCheckRoles')
  })

  it('case=every @id must exist in its kind', async () => {
    h.identities.set('i1', 'one')
    const s = await mkService(h, 's')
    await expectInvalid(sp({ identityRoles: ['@i1', '@ghost', '@ghost2'] }), 'identityRoles', 'no identities found with the given ids', ['ghost', 'ghost2'])
    await expectInvalid(sp({ serviceRoles: [`@${s}`, '@nope'] }), 'serviceRoles', 'no services found with the given ids', ['nope'])
    await expectInvalid(sp({ postureCheckRoles: ['@pc'] }), 'postureCheckRoles', 'no posture checks found with the given ids', ['pc'])
    // a service id is not an identity id
    await expectInvalid(sp({ identityRoles: [`@${s}`] }), 'identityRoles')
    expect(h.actor.snapshot().servicePolicies.size).toBe(0)
  })

  it('case=put resets absent roles and tags; patch leaves them; previous is sent', async () => {
    const id = await idOf(sp({ identityRoles: ['#a'], serviceRoles: ['#b'], tags: { k: 'v' } }))
    const created = h.actor.snapshot().servicePolicies.get(id)!
    h.clock.advance(9)
    h.clearEvents()
    await h.ask({ type: 'servicePolicy.update', id, input: { semantic: 'AnyOf' }, replace: false })
    const patched = h.actor.snapshot().servicePolicies.get(id)!
    expect(patched).toMatchObject({ semantic: 'AnyOf', identityRoles: ['#a'], serviceRoles: ['#b'], tags: { k: 'v' }, createdAt: created.createdAt, updatedAt: created.createdAt + 9 })
    expect(h.events[0]).toMatchObject({ type: 'graph.policy.put', policy: { semantic: 'AnyOf' }, previous: { semantic: 'AllOf' } })
    await h.ask({ type: 'servicePolicy.update', id, input: { name: 'sp', type: 'Bind', semantic: 'AllOf', identityRoles: ['#z'] }, replace: true })
    expect(h.actor.snapshot().servicePolicies.get(id)).toMatchObject({ type: 'Bind', identityRoles: ['#z'], serviceRoles: [], tags: {} })
    await expectCode(h.ask({ type: 'servicePolicy.update', id: 'nope', input: {}, replace: false }), 'NOT_FOUND')
  })

  it('case=delete emits graph.policy.deleted and forgets its references', async () => {
    h.identities.set('i1', 'one')
    const id = await idOf(sp({ identityRoles: ['@i1'] }))
    h.clearEvents()
    await h.ask({ type: 'servicePolicy.delete', id })
    expect(h.actor.snapshot().servicePolicies.has(id)).toBe(false)
    expect(h.actor.snapshot().servicePolicies.idByName('sp')).toBeUndefined()
    expect(h.actor.snapshot().policiesReferencing('identity', 'i1')).toEqual([])
    expect(h.events).toEqual([{ type: 'graph.policy.deleted', policy: expect.objectContaining({ id, kind: 'service-policy' }) }])
    await expectCode(h.ask({ type: 'servicePolicy.delete', id }), 'NOT_FOUND')
  })
})

describe('edge router and service edge router policies', () => {
  it('case=@ids name identities, edge routers and services', async () => {
    h.identities.set('i1', 'one')
    const r = await mkRouter(h, 'er')
    const s = await mkService(h, 's')
    await expectInvalid(h.ask({ type: 'edgeRouterPolicy.create', input: { name: 'e', semantic: 'AnyOf', edgeRouterRoles: ['@x'] } }), 'edgeRouterRoles', 'no edge routers found with the given ids', ['x'])
    await expectInvalid(h.ask({ type: 'edgeRouterPolicy.create', input: { name: 'e', semantic: 'AnyOf', identityRoles: ['@x'] } }), 'identityRoles', 'no identities found with the given ids')
    await expectInvalid(h.ask({ type: 'serviceEdgeRouterPolicy.create', input: { name: 'e', semantic: 'AnyOf', serviceRoles: ['@x'] } }), 'serviceRoles', 'no services found with the given ids')
    const erp = await idOf(h.ask({ type: 'edgeRouterPolicy.create', input: { name: 'e', semantic: 'AnyOf', identityRoles: ['@i1'], edgeRouterRoles: [`@${r}`] } }))
    expect(h.actor.snapshot().edgeRouterPolicies.get(erp)).toMatchObject({ isSystem: false, identityRoles: ['@i1'], edgeRouterRoles: [`@${r}`] })
    const serp = await idOf(h.ask({ type: 'serviceEdgeRouterPolicy.create', input: { name: 'e', semantic: 'AllOf', serviceRoles: [`@${s}`], edgeRouterRoles: ['#all'] } }))
    expect(h.eventsOf('graph.policy.put').at(-1)!.policy).toEqual({
      id: serp, kind: 'service-edge-router-policy', semantic: 'AllOf', serviceRoles: [`@${s}`], edgeRouterRoles: ['#all'],
    })
    await expectInvalid(
      h.ask({ type: 'serviceEdgeRouterPolicy.create', input: { name: 'e', semantic: 'AllOf' } }),
      'name',
      "duplicate value 'e' in unique index on serviceEdgeRouterPolicies store",
    )
    await h.ask({ type: 'edgeRouterPolicy.update', id: erp, input: { name: 'e' }, replace: true })
    expect(h.actor.snapshot().edgeRouterPolicies.get(erp)).toMatchObject({ semantic: 'AllOf', identityRoles: [], edgeRouterRoles: [] })
    await h.ask({ type: 'edgeRouterPolicy.delete', id: erp })
    await h.ask({ type: 'serviceEdgeRouterPolicy.delete', id: serp })
    expect(h.actor.snapshot().indexPolicies()).toEqual([])
  })
})

describe('identity.removed', () => {
  it('case=strips @<identity> from identity roles of service and edge router policies', async () => {
    h.identities.set('i1', 'one')
    h.identities.set('i2', 'two')
    const p1 = await idOf(sp({ identityRoles: ['@i1', '@i2'] }))
    const p2 = await idOf(h.ask({ type: 'edgeRouterPolicy.create', input: { name: 'e', semantic: 'AnyOf', identityRoles: ['@i1'] } }))
    const untouched = await idOf(sp({ name: 'other', identityRoles: ['#x'] }))
    h.identities.delete('i1')
    h.clearEvents()
    h.clock.advance(3)
    await h.ask({ type: 'identity.removed', identityId: 'i1' })
    const snap = h.actor.snapshot()
    expect(snap.servicePolicies.get(p1)!.identityRoles).toEqual(['@i2'])
    expect(snap.edgeRouterPolicies.get(p2)!.identityRoles).toEqual([])
    expect(snap.servicePolicies.get(untouched)!.updatedAt).toBe(h.clock.now() - 3)
    expect((h.store.db('edge-router-policies').get(p2) as { identityRoles: string[] }).identityRoles).toEqual([])
    expect(h.eventsOf('graph.policy.put').map((e) => e.policy.id).sort()).toEqual([p1, p2].sort())
    expect(snap.policiesReferencing('identity', 'i1')).toEqual([])
  })
})

describe('failed decisions', () => {
  it('case=change nothing: a refused update leaves state, store and events as they were', async () => {
    const id = await idOf(sp({ identityRoles: ['#a'] }))
    const before = h.actor.snapshot().servicePolicies.get(id)
    h.clearEvents()
    await expectInvalid(h.ask({ type: 'servicePolicy.update', id, input: { name: 'renamed', serviceRoles: ['@ghost'] }, replace: false }), 'serviceRoles')
    expect(h.actor.snapshot().servicePolicies.get(id)).toBe(before!)
    expect(h.actor.snapshot().servicePolicies.idByName('renamed')).toBeUndefined()
    expect(h.store.db('service-policies').get(id)).toEqual(before)
    expect(h.events).toEqual([])
  })
})

describe('restart', () => {
  it('case=reloads every kind, the indexes and the overrides from LMDB', async () => {
    h.identities.set('i1', 'one')
    const t = await mkConfigType(h, 't', { type: 'object', properties: { p: { type: 'integer' } } })
    const c = await mkConfig(h, 'c', t, { p: 1 })
    const s = await mkService(h, 's', { configs: [c], roleAttributes: ['web'] })
    const r = await mkRouter(h, 'er', { isTunnelerEnabled: true, roleAttributes: ['edge'] })
    const f = await mkRouter(h, 'fab', {}, false)
    await h.ask({ type: 'terminator.create', input: { serviceId: s, routerId: f, binding: 'b', address: 'a' } })
    await sp({ identityRoles: ['@i1'], serviceRoles: [`@${s}`] })
    await h.ask({ type: 'serviceEdgeRouterPolicy.create', input: { name: 'serp', semantic: 'AnyOf', serviceRoles: ['#web'], edgeRouterRoles: [`@${r}`] } })
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: s, configId: c }] })
    const view = () => {
      const g = h.actor.snapshot()
      return {
        configTypes: g.configTypes.all(), configs: g.configs.all(), services: g.services.all(), routers: g.routers.all(),
        edgeRouters: g.edgeRouters.all(), terminators: g.terminators.all(), policies: g.indexPolicies(),
        erps: g.edgeRouterPolicies.all(), overrides: g.overridesOf('i1'), usingC: g.servicesUsingConfig(c), ofType: g.configsOfType(t),
        terms: g.terminatorsOfRouter(f), web: [...g.services.idsWithRole('web')], edge: g.edgeRouters.roleAttributes(),
        refs: [g.policiesReferencing('identity', 'i1'), g.policiesReferencing('service', s), g.policiesReferencing('router', r)],
        byName: [g.services.idByName('s'), g.routers.idByName('fab'), g.edgeRouterPolicies.idByName(`edge-router-${r}-system`)],
      }
    }
    const before = view()
    await h.restart()
    expect(view()).toEqual(before)
    // compiled schemas come back lazily: data checks still apply
    await expectInvalid(h.ask({ type: 'config.update', id: c, input: { data: { p: 'x' } }, replace: false }), 'data.p')
  })
})
