// Pure policy-graph checks: names, semantic, type, cost, precedence, role lists with @id existence, 409 and system
// refusals (controller-behaviour.md §1, §3), service config lists, and config data against JSON schemas.
import { describe, expect, it } from 'bun:test'
import { ApiError } from '../../../../src/errors/api-error.ts'
import {
  decideCost,
  decideName,
  decideNotSystem,
  decidePolicyRoles,
  decidePolicyType,
  decidePrecedence,
  decideSemantic,
  referencedEntity,
} from '../../../../src/domain/policy/graph-decide.ts'
import { decideConfigTypeTarget, decideServiceConfigs, type ConfigLookup } from '../../../../src/domain/policy/graph-decide-configs.ts'
import { compileConfigSchema, ConfigSchemaCache } from '../../../../src/domain/policy/config-schema.ts'
import type { Config, ConfigType } from '../../../../src/domain/policy/policy-types.ts'

/** The ApiError a function throws, for asserting on. */
function thrown(fn: () => unknown): ApiError {
  try {
    fn()
  } catch (e) {
    if (e instanceof ApiError) return e
    throw e
  }
  throw new Error('expected an ApiError')
}

describe('decideName', () => {
  const taken = (n: string) => (n === 'a' ? 'id-a' : undefined)
  it('case=requires a non-blank name', () => {
    expect(thrown(() => decideName('services', '  ', taken)).apiCause).toEqual({ kind: 'field', field: 'name', reason: 'name is required', value: '  ' })
    expect(thrown(() => decideName('services', undefined, taken)).apiCause).toMatchObject({ field: 'name', reason: 'name is required' })
  })
  it('case=refuses a name held by another entity, accepts its own', () => {
    expect(thrown(() => decideName('servicePolicies', 'a', taken)).apiCause).toEqual({
      kind: 'field', field: 'name', reason: "duplicate value 'a' in unique index on servicePolicies store", value: 'a',
    })
    expect(decideName('services', 'a', taken, 'id-a')).toBe('a')
  })
})

describe('semantic, type, cost, precedence', () => {
  it('case=semantic in any case is stored canonical; absent is AllOf', () => {
    expect(decideSemantic('anyOF')).toBe('AnyOf')
    expect(decideSemantic('ALLOF')).toBe('AllOf')
    expect(decideSemantic(undefined)).toBe('AllOf')
    expect(thrown(() => decideSemantic('Some')).apiCause).toMatchObject({ field: 'semantic', value: 'Some' })
  })
  it('case=type is Dial or Bind and required', () => {
    expect(decidePolicyType('dial')).toBe('Dial')
    expect(decidePolicyType('Bind')).toBe('Bind')
    expect(thrown(() => decidePolicyType(undefined)).apiCause).toMatchObject({ field: 'type' })
    expect(thrown(() => decidePolicyType('Host')).apiCause).toMatchObject({ field: 'type', value: 'Host' })
  })
  it('case=cost is an integer 0..65535', () => {
    expect(decideCost('cost', 0)).toBe(0)
    expect(decideCost('cost', 65535)).toBe(65535)
    for (const bad of [-1, 65536, 1.5]) expect(thrown(() => decideCost('cost', bad)).apiCause).toMatchObject({ field: 'cost', value: bad })
  })
  it('case=precedence is default, required or failed', () => {
    expect(decidePrecedence('Required')).toBe('required')
    expect(thrown(() => decidePrecedence('first')).apiCause).toMatchObject({ field: 'precedence' })
  })
  it('case=config type target defaults to service', () => {
    expect(decideConfigTypeTarget(undefined)).toBe('service')
    expect(decideConfigTypeTarget(null)).toBe('service')
    expect(decideConfigTypeTarget('router')).toBe('router')
    expect(thrown(() => decideConfigTypeTarget('x')).apiCause).toMatchObject({ field: 'target' })
  })
})

describe('decidePolicyRoles', () => {
  const target = { noun: 'services', exists: (id: string) => id === 's1' }
  it('case=keeps attributes, known ids and #all; drops duplicates', () => {
    expect(decidePolicyRoles('serviceRoles', ['#a', '@s1', '#a'], target)).toEqual(['#a', '@s1'])
    expect(decidePolicyRoles('serviceRoles', ['#all'], target)).toEqual(['#all'])
    expect(decidePolicyRoles('serviceRoles', null, target)).toEqual([])
  })
  it('case=lists every unknown id', () => {
    expect(thrown(() => decidePolicyRoles('serviceRoles', ['@s1', '@x', '@y'], target)).apiCause).toEqual({
      kind: 'field', field: 'serviceRoles', reason: 'no services found with the given ids', value: ['x', 'y'],
    })
  })
  it('case=checks syntax first', () => {
    expect(thrown(() => decidePolicyRoles('serviceRoles', ['x'], target)).apiCause).toMatchObject({ field: 'serviceRoles', value: 'x' })
  })
})

describe('refusals', () => {
  it('case=referenced entity is 409 with the real cause shape', () => {
    const e = referencedEntity('configs', 'services', 'id', ['s1', 's2'])
    expect([e.code, e.status]).toEqual(['CAN_NOT_DELETE_REFERENCED_ENTITY', 409])
    expect(e.apiCause).toEqual({ kind: 'field', field: 'id', reason: 'entity type configs referenced by services: [s1 s2]', value: ['s1', 's2'] })
  })
  it('case=system entities cannot be updated or deleted', () => {
    expect(() => decideNotSystem({ id: 'x', isSystem: false }, 'edgeRouterPolicy', 'delete')).not.toThrow()
    const e = thrown(() => decideNotSystem({ id: 'x', isSystem: true }, 'edgeRouterPolicy', 'delete'))
    expect([e.code, e.status]).toEqual(['ENTITY_CAN_NOT_BE_DELETED', 400])
    expect(e.apiCause).toEqual({ kind: 'api', code: 'UNHANDLED', message: 'cannot delete system edgeRouterPolicy in a non-system context (id=x)' })
    expect(thrown(() => decideNotSystem({ id: 'x', isSystem: true }, 'edgeRouterPolicy', 'update')).code).toBe('ENTITY_CAN_NOT_BE_UPDATED')
  })
})

describe('decideServiceConfigs', () => {
  const rec = (id: string, name: string, configTypeId: string): Config => ({ id, name, configTypeId, data: {}, tags: {}, createdAt: 0, updatedAt: 0 })
  const configs = [rec('c1', 'one', 't1'), rec('c2', 'two', 't1'), rec('c3', 'three', 't2')]
  const lookup: ConfigLookup = {
    config: (id) => configs.find((c) => c.id === id),
    configIdByName: (n) => configs.find((c) => c.name === n)?.id,
    configType: (id) => ({ id, name: `type-${id}` }) as ConfigType,
  }
  it('case=resolves names, drops duplicates, keeps order', () => {
    expect(decideServiceConfigs(lookup, ['three', 'c1', 'c3'])).toEqual(['c3', 'c1'])
    expect(decideServiceConfigs(lookup, undefined)).toEqual([])
  })
  it('case=refuses unknown configs and two of one type', () => {
    expect(thrown(() => decideServiceConfigs(lookup, ['c1', 'zz'])).apiCause).toMatchObject({ field: 'configs', reason: 'zz is not a valid config id or name' })
    expect(thrown(() => decideServiceConfigs(lookup, ['c1', 'c2'])).apiCause).toMatchObject({
      field: 'configs', reason: expect.stringContaining('duplicate configs named one and two found for config type type-t1'),
    })
  })
})

describe('config schemas', () => {
  const schema = {
    $schema: 'http://json-schema.org/draft-04/schema#',
    $id: 'http://example/x.json',
    type: 'object',
    properties: { addresses: { type: 'array', items: { type: 'string', format: 'ipv4' } }, 'a/b': { type: 'boolean' } },
  }
  it('case=reports the first violation as data.<path> with the offending value', () => {
    const check = compileConfigSchema(schema)
    expect(() => check({ addresses: ['1.2.3.4'] })).not.toThrow()
    expect(thrown(() => check({ addresses: ['1.2.3.4', 'nope'] })).apiCause).toEqual({
      kind: 'field', field: 'data.addresses.1', reason: 'data.addresses.1 is invalid: must match format "ipv4"', value: 'nope',
    })
    expect(thrown(() => check({ 'a/b': 1 })).apiCause).toMatchObject({ field: 'data.a/b', value: 1 })
    expect(thrown(() => check([])).apiCause).toMatchObject({ field: 'data', reason: 'data is invalid: must be object' })
  })
  it('case=ignores $schema and tolerates repeated $ids and unknown formats', () => {
    expect(() => compileConfigSchema(schema)).not.toThrow()
    expect(() => compileConfigSchema({ type: 'string', format: 'idn-hostname' })('x')).not.toThrow()
  })
  it('case=refuses an invalid schema on field schema', () => {
    expect(thrown(() => compileConfigSchema({ type: 12 })).apiCause).toMatchObject({ field: 'schema' })
    expect(thrown(() => compileConfigSchema({ $ref: '#/definitions/none' })).apiCause).toMatchObject({ field: 'schema' })
  })
  it('case=the cache compiles once per schema object', () => {
    const cache = new ConfigSchemaCache()
    const s1 = { type: 'object' }
    expect(cache.checkFor('t', s1)).toBe(cache.checkFor('t', s1))
    const s2 = { type: 'string' }
    expect(() => cache.checkFor('t', s2)('x')).not.toThrow()
  })
})
