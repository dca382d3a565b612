// The pre-rendered client service rows: the same text as the object view, for any record, and never stale.
import { describe, expect, it } from 'bun:test'
import type { Permission } from '../../../src/domain/policy/policy-reads.ts'
import type { Config, ConfigType, Service } from '../../../src/domain/policy/policy-types.ts'
import { JsonBody } from '../../../src/http/http-envelope.ts'
import { ClientServiceJson, MAX_CONFIG_RENDERINGS } from '../../../src/http/mappers/client-service-json.ts'
import {
  configMap,
  postureQueries,
  toClientServiceDetail,
  type ConfigLookups,
  type ConfigTypeSelection,
} from '../../../src/http/mappers/client-service-mapper.ts'

const type1: ConfigType = { id: 'ct1', name: 'intercept.v1', schema: {}, target: 'service', isSystem: true, createdAt: 0, updatedAt: 0, tags: {} }
const type2: ConfigType = { id: 'ct2', name: 'host.v1', schema: {}, target: 'service', isSystem: true, createdAt: 0, updatedAt: 0, tags: {} }

function graph() {
  const configs = new Map<string, Config>([
    ['c1', { id: 'c1', name: 'i', configTypeId: 'ct1', data: { addresses: ['a.local'] }, createdAt: 0, updatedAt: 0, tags: {} } as Config],
    ['c2', { id: 'c2', name: 'h', configTypeId: 'ct2', data: { port: 80 }, createdAt: 0, updatedAt: 0, tags: {} } as Config],
    ['o1', { id: 'o1', name: 'o', configTypeId: 'ct1', data: { addresses: ['mine.local'] }, createdAt: 0, updatedAt: 0, tags: {} } as Config],
  ])
  const types = new Map([type1, type2].map((t) => [t.id, t]))
  const overrides = new Map<string, string>([['alice/s1/ct1', 'o1']])
  const lookups: ConfigLookups = {
    config: (id) => configs.get(id),
    configType: (id) => types.get(id),
    configTypeIdByName: (name) => [...types.values()].find((t) => t.name === name)?.id,
    overrideConfig: (i, s, t) => {
      const id = overrides.get(`${i}/${s}/${t}`)
      return id === undefined ? undefined : configs.get(id)
    },
  }
  return { configs, types, lookups }
}

function service(over: Partial<Service> = {}): Service {
  return {
    id: 's1', name: 'web', roleAttributes: ['web'], configs: ['c1', 'c2'], encryptionRequired: true, terminatorStrategy: 'smartrouting',
    maxIdleTimeMillis: 0, createdAt: Date.UTC(2026, 0, 2, 3, 4, 5, 6), updatedAt: Date.UTC(2026, 1, 2), tags: {}, ...over,
  }
}

/** The object view, as the text must read. */
function expected(s: Service, identityId: string, permissions: readonly Permission[], selection: ConfigTypeSelection, lookups: ConfigLookups) {
  return toClientServiceDetail(s, { permissions, config: configMap(s, identityId, selection, lookups), postureQueries: postureQueries(permissions) })
}

function textOf(r: ClientServiceJson, s: Service, identityId: string, permissions: readonly Permission[], selection: ConfigTypeSelection, lookups: ConfigLookups): string {
  const body = new JsonBody()
  const overridden = new Set(identityId === 'alice' ? [s.id] : [])
  r.write(s, permissions, { identityId, selection, lookups, overridden }, body)
  return new TextDecoder().decode(body.finish().bytes)
}

function rowOf(r: ClientServiceJson, s: Service, identityId: string, permissions: readonly Permission[], selection: ConfigTypeSelection, lookups: ConfigLookups) {
  return JSON.parse(textOf(r, s, identityId, permissions, selection, lookups))
}

describe('ClientServiceJson', () => {
  it('with posture checks, puts the postureQueries text the viewer gives after the permissions, for any selection', () => {
    const { lookups } = graph()
    const r = new ClientServiceJson()
    const entries = [{ policyId: 'p1', policyType: 'Dial' as const, isPassing: false, postureQueries: [{ id: 'c1', queryType: 'DOMAIN' }] }]
    const text = new TextEncoder().encode(JSON.stringify(entries))
    for (const s of [service(), service({ id: 's3', configs: [] })]) {
      for (const perms of [['Dial'], ['Bind', 'Dial']] as Permission[][]) {
        for (const selection of ['all', new Set<string>(), new Set(['ct2'])] as ConfigTypeSelection[]) {
          for (let twice = 0; twice < 2; twice++) {
            const body = new JsonBody()
            r.write(s, perms, { identityId: 'bob', selection, lookups, overridden: new Set(), postureQueries: () => text }, body)
            const view = toClientServiceDetail(s, { permissions: perms, config: configMap(s, 'bob', selection, lookups), postureQueries: entries })
            expect(new TextDecoder().decode(body.finish().bytes)).toBe(JSON.stringify(view))
          }
        }
      }
    }
  })

  it('renders the very text of the object view, for awkward names, tags and attributes, first time and reused', () => {
    const { lookups } = graph()
    const r = new ClientServiceJson()
    const marker = '\u0000config\u0000'
    const awkward = [
      service(),
      service({ id: 's2', name: `a"b\\c,"config":"${marker}",`, tags: { config: marker, x: { nested: [1, '"permissions":[]'] } }, roleAttributes: [marker, '"'] }),
      service({ id: 's3', name: 'ünïcødé ☃', roleAttributes: null, configs: [], maxIdleTimeMillis: 1234, encryptionRequired: false }),
    ]
    for (const s of awkward) {
      for (const perms of [['Dial'], ['Bind'], ['Bind', 'Dial']] as Permission[][]) {
        for (const selection of ['all', new Set<string>(), new Set(['ct2'])] as ConfigTypeSelection[]) {
          for (const who of ['alice', 'bob', 'bob']) {
            expect(textOf(r, s, who, perms, selection, lookups)).toBe(JSON.stringify(expected(s, who, perms, selection, lookups)))
          }
        }
      }
    }
  })

  it('uses the override of the identity it renders for and no one else', () => {
    const { lookups } = graph()
    const r = new ClientServiceJson()
    const s = service()
    expect(rowOf(r, s, 'bob', ['Dial'], 'all', lookups).config['intercept.v1']).toEqual({ addresses: ['a.local'] })
    expect(rowOf(r, s, 'alice', ['Dial'], 'all', lookups).config['intercept.v1']).toEqual({ addresses: ['mine.local'] })
    expect(rowOf(r, s, 'bob', ['Dial'], 'all', lookups).config['intercept.v1']).toEqual({ addresses: ['a.local'] })
  })

  it('follows a replaced config record, a renamed config type and a replaced service record', () => {
    const { configs, types, lookups } = graph()
    const r = new ClientServiceJson()
    let s = service()
    expect(rowOf(r, s, 'bob', ['Dial'], 'all', lookups).config).toEqual({ 'intercept.v1': { addresses: ['a.local'] }, 'host.v1': { port: 80 } })
    configs.set('c2', { ...configs.get('c2')!, data: { port: 443 } })
    expect(rowOf(r, s, 'bob', ['Dial'], 'all', lookups).config['host.v1']).toEqual({ port: 443 })
    types.set('ct2', { ...type2, name: 'host.v2' })
    expect(Object.keys(rowOf(r, s, 'bob', ['Dial'], 'all', lookups).config).sort()).toEqual(['host.v2', 'intercept.v1'])
    configs.delete('c1')
    expect(Object.keys(rowOf(r, s, 'bob', ['Dial'], 'all', lookups).config)).toEqual(['host.v2'])
    s = { ...s, name: 'web2', updatedAt: Date.UTC(2027, 0, 1) }
    expect(rowOf(r, s, 'bob', ['Dial'], 'all', lookups)).toMatchObject({ name: 'web2', updatedAt: '2027-01-01T00:00:00.000Z' })
  })

  it('keeps one config rendering per selection', () => {
    const { lookups } = graph()
    const r = new ClientServiceJson()
    const s = service()
    expect(Object.keys(rowOf(r, s, 'bob', ['Dial'], new Set(['ct1']), lookups).config)).toEqual(['intercept.v1'])
    expect(Object.keys(rowOf(r, s, 'bob', ['Dial'], new Set(['ct2']), lookups).config)).toEqual(['host.v1'])
    expect(Object.keys(rowOf(r, s, 'bob', ['Dial'], new Set(['ct2', 'ct1']), lookups).config).sort()).toEqual(['host.v1', 'intercept.v1'])
    expect(r.configRenderingsOf(s)).toBe(3)
    // the same configs taken: the renderings already there serve ('all' takes both)
    expect(Object.keys(rowOf(r, s, 'bob', ['Dial'], 'all', lookups).config).sort()).toEqual(['host.v1', 'intercept.v1'])
    expect(Object.keys(rowOf(r, s, 'bob', ['Dial'], new Set(['ct1', 'ct3']), lookups).config)).toEqual(['intercept.v1'])
    expect(r.configRenderingsOf(s)).toBe(3)
    // a selection taking none of the service's configs is the empty map, kept nowhere
    expect(rowOf(r, s, 'bob', ['Dial'], new Set(['ct3']), lookups).config).toEqual({})
    expect(r.configRenderingsOf(s)).toBe(3)
  })

  it('stays bounded while a client cycles thousands of distinct config type selections, and answers as the object view', () => {
    const { lookups } = graph()
    const r = new ClientServiceJson()
    const s = service()
    for (let i = 0; i < 3000; i++) {
      const selection = new Set([`junk-${i}`, ...(i % 3 === 0 ? ['ct1'] : []), ...(i % 5 === 0 ? ['ct2'] : [])])
      expect(textOf(r, s, 'bob', ['Dial'], selection, lookups)).toBe(JSON.stringify(expected(s, 'bob', ['Dial'], selection, lookups)))
    }
    // the subsets of the service's two configs that take any: {c1}, {c2}, {c1, c2}
    expect(r.configRenderingsOf(s)).toBe(3)
  })

  it('keeps at most MAX_CONFIG_RENDERINGS renderings of a service with many configs, and answers as the object view', () => {
    for (const count of [12, 40]) {
      const { lookups, s } = wideGraph(count)
      const r = new ClientServiceJson()
      let seed = 7
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
      for (let i = 0; i < 2000; i++) {
        const selection = new Set(Array.from({ length: count }, (_, t) => `t${t}`).filter(() => random() < 0.3))
        expect(textOf(r, s, 'bob', ['Bind'], selection, lookups)).toBe(JSON.stringify(expected(s, 'bob', ['Bind'], selection, lookups)))
        expect(r.configRenderingsOf(s)).toBeLessThanOrEqual(MAX_CONFIG_RENDERINGS)
      }
      expect(r.configRenderingsOf(s)).toBe(MAX_CONFIG_RENDERINGS)
    }
  })
})

/** A service with one config of each of `count` config types (ids t0…, c0…). */
function wideGraph(count: number) {
  const configs = new Map<string, Config>()
  const types = new Map<string, ConfigType>()
  for (let i = 0; i < count; i++) {
    types.set(`t${i}`, { ...type1, id: `t${i}`, name: `type-${i}.v1` })
    configs.set(`c${i}`, { id: `c${i}`, name: `c${i}`, configTypeId: `t${i}`, data: { n: i }, createdAt: 0, updatedAt: 0, tags: {} })
  }
  const lookups: ConfigLookups = {
    config: (id) => configs.get(id),
    configType: (id) => types.get(id),
    configTypeIdByName: () => undefined,
    overrideConfig: () => undefined,
  }
  return { lookups, s: service({ configs: [...configs.keys()] }) }
}
