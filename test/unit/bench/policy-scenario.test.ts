// The scale scenario generator of bench/policy-scale.ts: the real controller's attribute spread (count/2, /2, /3, /4,
// /5, /8, /10, /10 over the entities after the first, walked with a growing stride), the depth-first prefix
// combinations used as policy roles, and the two first-entity policies of each kind.
import { describe, expect, it } from 'bun:test'
import {
  ATTRIBUTE_DIVISORS,
  SCENARIOS,
  attributeNames,
  buildPolicies,
  buildScenario,
  dialableServices,
  fewServicesIdentity,
  firstEntityName,
  firstPermutations,
  generateRoleAttributes,
  usedAttributes,
} from '../../../bench/policy-scenario.ts'

const FIRST = { service: 'svc0', identity: 'idn0', edgeRouter: 'er0' }

describe('SCENARIOS', () => {
  it('has the issue numbers for large and many-services', () => {
    expect(SCENARIOS.large).toMatchObject({ services: 2000, identities: 100_000, edgeRouters: 500, servicePolicies: 250, edgeRouterPolicies: 250, serviceEdgeRouterPolicies: 100 })
    expect(SCENARIOS['many-services']).toMatchObject({ services: 10_000, identities: 16_000, edgeRouters: 100, servicePolicies: 100, edgeRouterPolicies: 100, serviceEdgeRouterPolicies: 100 })
  })
})

describe('generateRoleAttributes', () => {
  const names = attributeNames('identity')

  it.each([2, 9, 10, 20, 100, 500, 2000, 16_000, 100_000])('gives attribute i to exactly count/divisor[i] entities (count %d)', (count) => {
    const attrs = generateRoleAttributes(count, names)
    expect(attrs).toHaveLength(count)
    expect(attrs[0]).toEqual([])
    names.forEach((n, i) => {
      expect(attrs.filter((a) => a.includes(n)).length).toBe(Math.floor(count / ATTRIBUTE_DIVISORS[i]))
    })
    for (const a of attrs) expect(new Set(a).size).toBe(a.length)
  })

  it('walks with stride 2, growing by one for each attribute started with fewer than 4 targets left', () => {
    const attrs = generateRoleAttributes(10, ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'])
    expect(attrs).toEqual([
      [],
      ['a0', 'a1'],
      ['a1', 'a3'],
      ['a0', 'a2'],
      ['a1', 'a4', 'a6'],
      ['a0', 'a2'],
      ['a1', 'a4'],
      ['a0', 'a2'],
      ['a1'],
      ['a0', 'a3', 'a5', 'a7'],
    ])
  })

  it('gives a single entity nothing, and uses only attributes with a target', () => {
    expect(generateRoleAttributes(1, names)).toEqual([[]])
    expect(usedAttributes('service', 1)).toEqual([])
    expect(usedAttributes('edge-router', 9)).toHaveLength(6)
    expect(usedAttributes('identity', 100)).toEqual(names)
  })
})

describe('firstPermutations', () => {
  it('lists depth-first prefix combinations', () => {
    expect(firstPermutations(100, ['a', 'b', 'c'])).toEqual([['a'], ['a', 'b'], ['a', 'b', 'c'], ['a', 'c'], ['b'], ['b', 'c'], ['c']])
    expect(firstPermutations(5, ['a', 'b', 'c'])).toEqual([['a'], ['a', 'b'], ['a', 'b', 'c'], ['a', 'c'], ['b']])
    expect(firstPermutations(0, ['a'])).toEqual([])
  })

  it('gives 255 distinct combinations of 8 attributes', () => {
    const all = firstPermutations(1000, attributeNames('service'))
    expect(all).toHaveLength(255)
    expect(new Set(all.map((p) => p.join(','))).size).toBe(255)
  })
})

describe('buildScenario and buildPolicies', () => {
  const scenario = buildScenario(SCENARIOS.small)
  const policies = buildPolicies(scenario, FIRST)

  it('names the first entity of each kind so it sorts last, without attributes', () => {
    for (const [kind, list] of [['service', scenario.services], ['identity', scenario.identities], ['edge-router', scenario.edgeRouters]] as const) {
      expect(list[0].name).toBe(firstEntityName(kind))
      expect(list[0].roleAttributes).toEqual([])
      expect([...list.map((e) => e.name)].sort().at(-1)).toBe(list[0].name)
      expect(new Set(list.map((e) => e.name)).size).toBe(list.length)
    }
    expect(scenario.services).toHaveLength(20)
    expect(scenario.identities).toHaveLength(100)
    expect(scenario.edgeRouters).toHaveLength(10)
  })

  it('starts each kind with first entity x #all and #all x first entity', () => {
    expect(policies.servicePolicies.slice(0, 2).map((p) => [p.serviceRoles, p.identityRoles])).toEqual([
      [['@svc0'], ['#all']],
      [['#all'], ['@idn0']],
    ])
    expect(policies.edgeRouterPolicies.slice(0, 2).map((p) => [p.edgeRouterRoles, p.identityRoles])).toEqual([
      [['@er0'], ['#all']],
      [['#all'], ['@idn0']],
    ])
    expect(policies.serviceEdgeRouterPolicies.slice(0, 2).map((p) => [p.edgeRouterRoles, p.serviceRoles])).toEqual([
      [['@er0'], ['#all']],
      [['#all'], ['@svc0']],
    ])
  })

  it('gives policy i the i-th prefix combination of each side plus its first entity, AllOf', () => {
    expect(policies.servicePolicies).toHaveLength(10)
    expect(policies.edgeRouterPolicies).toHaveLength(10)
    expect(policies.serviceEdgeRouterPolicies).toHaveLength(10)
    const tag = (xs: string[]) => xs.map((x) => `#${x}`)
    const svcPerms = firstPermutations(10, tag(scenario.attributes.service))
    const idnPerms = firstPermutations(10, tag(scenario.attributes.identity))
    const erPerms = firstPermutations(10, tag(scenario.attributes['edge-router']))
    for (let i = 2; i < 10; i++) {
      expect(policies.servicePolicies[i]).toMatchObject({ type: 'Dial', semantic: 'AllOf', serviceRoles: [...svcPerms[i], '@svc0'], identityRoles: [...idnPerms[i], '@idn0'], postureCheckRoles: [] })
      expect(policies.edgeRouterPolicies[i]).toMatchObject({ semantic: 'AllOf', edgeRouterRoles: [...erPerms[i], '@er0'], identityRoles: [...idnPerms[i], '@idn0'] })
      expect(policies.serviceEdgeRouterPolicies[i]).toMatchObject({ semantic: 'AllOf', edgeRouterRoles: [...erPerms[i], '@er0'], serviceRoles: [...svcPerms[i], '@svc0'] })
    }
    expect(policies.servicePolicies[2].serviceRoles).toEqual(['#svc-attr0-1of2', '#svc-attr1-1of2', '#svc-attr2-1of3', '@svc0'])
    expect(new Set(policies.servicePolicies.map((p) => p.name)).size).toBe(10)
  })

  it('lets the first identity dial every service and an ordinary one few', () => {
    const dial = dialableServices(scenario, policies, FIRST)
    expect(dial(0).size).toBe(20)
    const few = fewServicesIdentity(scenario, dial, 100)
    expect(few).toBeGreaterThan(0)
    expect([...dial(few)]).toEqual([0])
  })

  it('refuses more policies than there are combinations', () => {
    expect(() => buildPolicies(buildScenario({ ...SCENARIOS.small, servicePolicies: 300 }), FIRST)).toThrow()
  })
})
