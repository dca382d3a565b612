// Policy graph: built-in config types, config types, configs (schema checks), services and per-identity overrides
// (controller-behaviour.md §1 409s and system entities, §8 config selection, §10 built-in config types).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import {
  expectCode,
  expectInvalid,
  mkConfig,
  mkConfigType,
  mkService,
  openGraph,
  type GraphHarness,
} from './policy-graph-support.ts'

let h: GraphHarness
beforeEach(async () => {
  h = await openGraph()
})
afterEach(async () => {
  await h.close()
})

const PORT_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { hostname: { type: 'string' }, port: { type: 'integer', minimum: 0, maximum: 65535 } },
  required: ['hostname'],
}

describe('built-in config types', () => {
  it('case=exist after the first start, system, with their real ids and targets', () => {
    const s = h.actor.snapshot()
    expect(s.configTypes.get('g7cIWbcGg')).toMatchObject({ name: 'intercept.v1', isSystem: true, target: 'service' })
    expect(s.configTypes.get('NH5p4FpGR')).toMatchObject({ name: 'host.v1', isSystem: true })
    expect(s.configTypes.byName('ziti-tunneler-client.v1')?.id).toBe('f2dd2df0-9c04-4b84-a91e-71437ac229f1')
    expect(s.configTypes.byName('ziti-tunneler-server.v1')?.id).toBe('cea49285-6c07-42cf-9f52-09a9b115c783')
    expect(s.configTypes.get('router.link.v1')).toMatchObject({ target: 'router', isSystem: true })
    expect(s.configTypes.all().map((t) => t.name).sort()).toEqual([
      'host.v1', 'host.v2', 'intercept.v1', 'interfaces.v1', 'proxy.v1', 'router.link.v1', 'ziti-tunneler-client.v1', 'ziti-tunneler-server.v1',
    ])
  })

  it('case=are written once: a restart keeps their createdAt', async () => {
    const before = h.actor.snapshot().configTypes.get('host.v2')!.createdAt
    h.clock.advance(60_000)
    await h.restart()
    expect(h.actor.snapshot().configTypes.size).toBe(8)
    expect(h.actor.snapshot().configTypes.get('host.v2')!.createdAt).toBe(before)
  })

  it('case=cannot be updated or deleted (400)', async () => {
    await expectCode(
      h.ask({ type: 'configType.update', id: 'host.v2', input: { name: 'x' }, replace: false }),
      'ENTITY_CAN_NOT_BE_UPDATED',
      'cannot update system configType in a non-system context (id=host.v2)',
    )
    await expectCode(h.ask({ type: 'configType.delete', id: 'g7cIWbcGg' }), 'ENTITY_CAN_NOT_BE_DELETED')
    expect(h.actor.snapshot().configTypes.get('host.v2')!.name).toBe('host.v2')
  })

  it('case=accept configs whose data is an object', async () => {
    const id = await mkConfig(h, 'icpt', 'g7cIWbcGg', { protocols: ['tcp'], addresses: ['a.b'], portRanges: [{ low: 80, high: 80 }] })
    expect(h.actor.snapshot().configsOfType('g7cIWbcGg').map((c) => c.id)).toEqual([id])
  })
})

describe('config types', () => {
  it('case=name is required and unique', async () => {
    await expectInvalid(h.ask({ type: 'configType.create', input: { name: ' ' } }), 'name', 'name is required')
    await mkConfigType(h, 'my.v1')
    await expectInvalid(mkConfigType(h, 'my.v1'), 'name', "duplicate value 'my.v1' in unique index on configTypes store", 'my.v1')
    await expectInvalid(mkConfigType(h, 'intercept.v1'), 'name', /duplicate value/)
  })

  it('case=target defaults to service; only service and router are accepted', async () => {
    const id = await mkConfigType(h, 'a.v1')
    expect(h.actor.snapshot().configTypes.get(id)).toMatchObject({ target: 'service', schema: {}, isSystem: false, tags: {} })
    await expectInvalid(h.ask({ type: 'configType.create', input: { name: 'b.v1', target: 'box' } }), 'target')
  })

  it('case=the schema must be a valid JSON schema', async () => {
    await expectInvalid(mkConfigType(h, 'bad.v1', { type: 'bogus' }), 'schema', /schema is not a valid JSON schema/)
    await expectInvalid(mkConfigType(h, 'bad.v1', { properties: 5 }), 'schema')
    expect(h.actor.snapshot().configTypes.byName('bad.v1')).toBeUndefined()
  })

  it('case=put resets target and schema; patch keeps them', async () => {
    const id = await mkConfigType(h, 'c.v1', PORT_SCHEMA)
    await h.ask({ type: 'configType.update', id, input: { target: 'router' }, replace: false })
    expect(h.actor.snapshot().configTypes.get(id)).toMatchObject({ target: 'router', schema: PORT_SCHEMA })
    h.clock.advance(1000)
    await h.ask({ type: 'configType.update', id, input: { name: 'c.v2' }, replace: true })
    const t = h.actor.snapshot().configTypes.get(id)!
    expect(t).toMatchObject({ name: 'c.v2', target: 'service', schema: {} })
    expect(t.updatedAt).toBe(t.createdAt + 1000)
  })

  it('case=delete with configs of the type is 409 naming them', async () => {
    const t = await mkConfigType(h, 'd.v1')
    const c = await mkConfig(h, 'd1', t)
    const err = await h.ask({ type: 'configType.delete', id: t }).catch((e) => e)
    expect(err).toMatchObject({
      code: 'CAN_NOT_DELETE_REFERENCED_ENTITY',
      status: 409,
      apiCause: { kind: 'field', field: 'type', reason: `entity type configTypes referenced by configs: [${c}]`, value: [c] },
    })
    await h.ask({ type: 'config.delete', id: c })
    await h.ask({ type: 'configType.delete', id: t })
    expect(h.actor.snapshot().configTypes.has(t)).toBe(false)
    expect(h.store.db('config-types').get(t)).toBeUndefined()
  })

  it('case=a rename touches the services using configs of the type', async () => {
    const t = await mkConfigType(h, 'e.v1')
    const c = await mkConfig(h, 'e1', t)
    const s = await mkService(h, 'svc', { configs: [c] })
    h.clearEvents()
    await h.ask({ type: 'configType.update', id: t, input: { tags: { a: 'b' } }, replace: false })
    expect(h.eventsOf('graph.services.touched')).toEqual([])
    await h.ask({ type: 'configType.update', id: t, input: { name: 'e.v2' }, replace: false })
    expect(h.eventsOf('graph.services.touched')).toEqual([{ type: 'graph.services.touched', serviceIds: [s] }])
  })
})

describe('configs', () => {
  let typeId: string
  beforeEach(async () => {
    typeId = await mkConfigType(h, 'port.v1', PORT_SCHEMA)
  })

  it('case=the config type must exist (by id or name)', async () => {
    await expectInvalid(mkConfig(h, 'c', 'nope'), 'configTypeId', "no config type found with id 'nope'", 'nope')
    const id = await mkConfig(h, 'c', 'port.v1', { hostname: 'h' })
    expect(h.actor.snapshot().configs.get(id)!.configTypeId).toBe(typeId)
  })

  it('case=data is checked against the type schema: first violation, field data.<path>', async () => {
    await expectInvalid(mkConfig(h, 'c', typeId, { hostname: 'h', port: 'eighty' }), 'data.port', 'data.port is invalid: must be integer', 'eighty')
    await expectInvalid(mkConfig(h, 'c', typeId, { hostname: 'h', port: 70000 }), 'data.port', /must be <= 65535/, 70000)
    await expectInvalid(mkConfig(h, 'c', typeId, { port: 1 }), 'data', "data is invalid: must have required property 'hostname'")
    await expectInvalid(h.ask({ type: 'config.create', input: { name: 'c', configTypeId: typeId } }), 'data', 'data is required')
    expect(h.actor.snapshot().configs.size).toBe(0)
  })

  it('case=name is required and unique', async () => {
    await expectInvalid(mkConfig(h, '', typeId, { hostname: 'h' }), 'name', 'name is required')
    await mkConfig(h, 'same', typeId, { hostname: 'h' })
    await expectInvalid(mkConfig(h, 'same', typeId, { hostname: 'h' }), 'name', "duplicate value 'same' in unique index on configs store")
  })

  it('case=updating data re-validates it; a schema change re-validates nothing', async () => {
    const id = await mkConfig(h, 'c', typeId, { hostname: 'h', port: 1 })
    await expectInvalid(h.ask({ type: 'config.update', id, input: { data: { hostname: 5 } }, replace: false }), 'data.hostname')
    await h.ask({ type: 'configType.update', id: typeId, input: { schema: { type: 'object', required: ['other'] } }, replace: false })
    expect(h.actor.snapshot().configs.get(id)!.data).toEqual({ hostname: 'h', port: 1 })
    // the new schema applies to the next data change
    await expectInvalid(h.ask({ type: 'config.update', id, input: { data: { hostname: 'x' } }, replace: false }), 'data', /other/)
    await h.ask({ type: 'config.update', id, input: { data: { other: 1 } }, replace: false })
    expect(h.actor.snapshot().configs.get(id)!.data).toEqual({ other: 1 })
  })

  it('case=a data or name change touches services using it and identities overriding with it', async () => {
    const c = await mkConfig(h, 'c', typeId, { hostname: 'h' })
    const c2 = await mkConfig(h, 'c2', typeId, { hostname: 'h2' })
    const s = await mkService(h, 'svc', { configs: [c] })
    h.identities.set('i1', 'one')
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: s, configId: c }] })
    h.clearEvents()
    await h.ask({ type: 'config.update', id: c, input: { tags: { x: 'y' } }, replace: false })
    await h.ask({ type: 'config.update', id: c, input: { data: { hostname: 'h' } }, replace: false })
    expect(h.events).toEqual([])
    await h.ask({ type: 'config.update', id: c, input: { data: { hostname: 'new' } }, replace: false })
    expect(h.events).toEqual([
      { type: 'graph.services.touched', serviceIds: [s] },
      { type: 'graph.overrides.changed', identityIds: ['i1'] },
    ])
    h.clearEvents()
    await h.ask({ type: 'config.update', id: c2, input: { name: 'renamed' }, replace: false })
    expect(h.events).toEqual([])
  })

  it('case=delete of a config a service uses is 409 naming the services', async () => {
    const c = await mkConfig(h, 'c', typeId, { hostname: 'h' })
    const s = await mkService(h, 'svc', { configs: [c] })
    await expectCode(h.ask({ type: 'config.delete', id: c }), 'CAN_NOT_DELETE_REFERENCED_ENTITY')
    const err = (await h.ask({ type: 'config.delete', id: c }).catch((e: unknown) => e)) as { apiCause: unknown }
    expect(err.apiCause).toEqual({ kind: 'field', field: 'id', reason: `entity type configs referenced by services: [${s}]`, value: [s] })
  })

  it('case=delete of a config used only by overrides removes the overrides', async () => {
    const c = await mkConfig(h, 'c', typeId, { hostname: 'h' })
    const s = await mkService(h, 'svc')
    h.identities.set('i1', 'one')
    await h.ask({ type: 'overrides.add', identityId: 'i1', links: [{ serviceId: s, configId: c }] })
    h.clearEvents()
    await h.ask({ type: 'config.delete', id: c })
    expect(h.actor.snapshot().overridesOf('i1')).toEqual([])
    expect(h.store.db('service-config-overrides').get(`i1/${s}/${typeId}`)).toBeUndefined()
    expect(h.events).toEqual([{ type: 'graph.overrides.changed', identityIds: ['i1'] }])
  })

  it('case=unknown ids answer 404', async () => {
    await expectCode(h.ask({ type: 'config.update', id: 'nope', input: {}, replace: false }), 'NOT_FOUND')
    await expectCode(h.ask({ type: 'config.delete', id: 'nope' }), 'NOT_FOUND')
  })
})
