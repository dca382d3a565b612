/**
 * The real controller's model scale scenarios (its tests/model_sdk_performance_test.go), as plain data: entity names
 * and role attributes, and the policies between them. Pure: no I/O; bench/policy-scale.ts loads it through the API.
 *
 * - Role attributes: for each entity kind, 8 attributes with target counts count/2, count/2, count/3, count/4,
 *   count/5, count/8, count/10, count/10, handed out by walking the entities after the first with a stride that
 *   starts at 2 and grows by one whenever an attribute starts while fewer than 4 targets remain.
 * - The first entity of each kind has no attribute and is named to sort last (the real test gives it the id
 *   `zzzzzzzzzzzzzz` to expose scans).
 * - Policies of each kind: two first (first entity × #all, #all × first entity), then policy i (i >= 2) takes the
 *   i-th depth-first prefix combination of each side's attributes, plus the side's first entity, semantic AllOf. So
 *   the first identity reaches every service and router; an ordinary identity reaches a few.
 */

export interface ScenarioSpec {
  name: string
  services: number
  identities: number
  edgeRouters: number
  servicePolicies: number
  edgeRouterPolicies: number
  serviceEdgeRouterPolicies: number
  /** Every n-th service policy (0, n, 2n, …) is gated by the posture checks of POSTURE_CHECKS; absent: none. */
  postureEvery?: number
}

/** The real controller's scenarios (services of 'large' as the issue states: 2,000). */
export const SCENARIOS: Record<string, ScenarioSpec> = {
  baseline: { name: 'baseline', services: 1, identities: 1, edgeRouters: 1, servicePolicies: 1, edgeRouterPolicies: 1, serviceEdgeRouterPolicies: 1 },
  small: { name: 'small', services: 20, identities: 100, edgeRouters: 10, servicePolicies: 10, edgeRouterPolicies: 10, serviceEdgeRouterPolicies: 10 },
  medium: { name: 'medium', services: 100, identities: 5000, edgeRouters: 100, servicePolicies: 50, edgeRouterPolicies: 50, serviceEdgeRouterPolicies: 25 },
  large: { name: 'large', services: 2000, identities: 100_000, edgeRouters: 500, servicePolicies: 250, edgeRouterPolicies: 250, serviceEdgeRouterPolicies: 100 },
  /** 'large' with posture checks on a quarter of the service policies (issue 11). */
  'large-posture': { name: 'large-posture', services: 2000, identities: 100_000, edgeRouters: 500, servicePolicies: 250, edgeRouterPolicies: 250, serviceEdgeRouterPolicies: 100, postureEvery: 4 },
  'many-services': { name: 'many-services', services: 10_000, identities: 16_000, edgeRouters: 100, servicePolicies: 100, edgeRouterPolicies: 100, serviceEdgeRouterPolicies: 100 },
}

/** The fractions of the entity count that carry each of the 8 attributes. */
export const ATTRIBUTE_DIVISORS = [2, 2, 3, 4, 5, 8, 10, 10] as const

export type EntityKind = 'service' | 'identity' | 'edge-router'

const PREFIX: Record<EntityKind, string> = { service: 'svc', identity: 'idn', 'edge-router': 'er' }

/** The 8 attribute names of a kind (without `#`). */
export function attributeNames(kind: EntityKind): string[] {
  return ATTRIBUTE_DIVISORS.map((d, i) => `${PREFIX[kind]}-attr${i}-1of${d}`)
}

/** The name of the first (special) entity of a kind: sorts after every other name. */
export function firstEntityName(kind: EntityKind): string {
  return `zzzzzzzz-first-${kind}`
}

export function entityName(kind: EntityKind, index: number): string {
  return index === 0 ? firstEntityName(kind) : `${PREFIX[kind]}-${String(index).padStart(6, '0')}`
}

/**
 * Role attributes of `count` entities: index 0 (the first entity) gets none. The walk gives the current attribute
 * to the entity at the walk position until its target is used up; an entity reached twice by the same attribute
 * keeps it once (the target still counts down, as in the real test).
 */
export function generateRoleAttributes(count: number, names: readonly string[]): string[][] {
  const result: string[][] = Array.from({ length: count }, () => [])
  if (count < 2) return result
  const setLen = count - 1
  const counts = ATTRIBUTE_DIVISORS.map((d) => Math.floor(count / d))
  let stride = 2
  let index = 0
  let attr = 0
  // skip attributes whose target is 0 from the start (tiny counts)
  while (attr < counts.length && counts[attr] <= 0) attr++
  while (attr < counts.length) {
    const own = result[1 + index]
    if (!own.includes(names[attr])) own.push(names[attr])
    counts[attr]--
    while (attr < counts.length && counts[attr] <= 0) {
      attr++
      if (attr < counts.length && counts[attr] > 0 && counts.length - attr < 4) stride++
    }
    index = (index + stride) % setLen
  }
  return result
}

/**
 * The first `n` depth-first prefix combinations of `v`: [a], [a,b], [a,b,c], …, [a,c], [a,c,d], …, [b], ….
 * There are 2^len - 1 of them; asking for more gives all of them.
 */
export function firstPermutations(n: number, v: readonly string[]): string[][] {
  const out: string[][] = []
  const walk = (base: string[], rest: readonly string[]): boolean => {
    for (let i = 0; i < rest.length; i++) {
      if (out.length >= n) return false
      const next = [...base, rest[i]]
      out.push(next)
      if (!walk(next, rest.slice(i + 1))) return false
    }
    return true
  }
  if (n > 0) walk([], v)
  return out
}

export interface ScenarioEntity {
  name: string
  roleAttributes: string[]
}

export interface Scenario {
  spec: ScenarioSpec
  attributes: Record<EntityKind, string[]>
  services: ScenarioEntity[]
  identities: ScenarioEntity[]
  edgeRouters: ScenarioEntity[]
}

/** The attributes a kind of `count` entities uses: those whose target is at least one entity. */
export function usedAttributes(kind: EntityKind, count: number): string[] {
  return count < 2 ? [] : attributeNames(kind).filter((_, i) => Math.floor(count / ATTRIBUTE_DIVISORS[i]) > 0)
}

export function buildScenario(spec: ScenarioSpec): Scenario {
  const attributes = {
    service: usedAttributes('service', spec.services),
    identity: usedAttributes('identity', spec.identities),
    'edge-router': usedAttributes('edge-router', spec.edgeRouters),
  }
  const entities = (kind: EntityKind, count: number): ScenarioEntity[] =>
    generateRoleAttributes(count, attributeNames(kind)).map((roleAttributes, i) => ({ name: entityName(kind, i), roleAttributes }))
  return {
    spec,
    attributes,
    services: entities('service', spec.services),
    identities: entities('identity', spec.identities),
    edgeRouters: entities('edge-router', spec.edgeRouters),
  }
}

/** The ids the server gave the first entity of each kind (policies name them with `@id`). */
export interface FirstIds {
  service: string
  identity: string
  edgeRouter: string
}

export interface ServicePolicyBody {
  name: string
  type: 'Dial'
  semantic: 'AllOf'
  serviceRoles: string[]
  identityRoles: string[]
  postureCheckRoles: string[]
}
export interface EdgeRouterPolicyBody {
  name: string
  semantic: 'AllOf'
  edgeRouterRoles: string[]
  identityRoles: string[]
}
export interface ServiceEdgeRouterPolicyBody {
  name: string
  semantic: 'AllOf'
  edgeRouterRoles: string[]
  serviceRoles: string[]
}

export interface ScenarioPolicies {
  servicePolicies: ServicePolicyBody[]
  edgeRouterPolicies: EdgeRouterPolicyBody[]
  serviceEdgeRouterPolicies: ServiceEdgeRouterPolicyBody[]
}

/**
 * The pairs of role lists of `count` policies between sides A and B: (@firstA, #all), (#all, @firstB), then the
 * i-th prefix combination of each side's attributes plus its first entity.
 */
export function policyRolePairs(count: number, attrsA: readonly string[], firstA: string, attrsB: readonly string[], firstB: string): [string[], string[]][] {
  const tag = (xs: readonly string[]) => xs.map((x) => `#${x}`)
  const permsA = firstPermutations(count, tag(attrsA))
  const permsB = firstPermutations(count, tag(attrsB))
  const maxCount = 2 ** Math.min(attrsA.length, attrsB.length) - 1
  if (count > Math.max(2, maxCount)) throw new Error(`at most ${maxCount} policies of a kind: ${count} asked`)
  const out: [string[], string[]][] = []
  for (let i = 0; i < count; i++) {
    if (i === 0) out.push([[`@${firstA}`], ['#all']])
    else if (i === 1) out.push([['#all'], [`@${firstB}`]])
    else out.push([[...permsA[i], `@${firstA}`], [...permsB[i], `@${firstB}`]])
  }
  return out
}

/** The role attribute of the scenario's posture checks (POSTURE_CHECKS). */
export const POSTURE_ROLE = 'bench-posture'

/**
 * The posture checks of a scenario with `postureEvery`: one of each kind a client reports data for, all carrying
 * POSTURE_ROLE. With POSTURE_RESPONSES reported, all of them pass; without, all fail.
 */
export const POSTURE_CHECKS: readonly Record<string, unknown>[] = [
  { name: 'bench-domain', typeId: 'DOMAIN', domains: ['bench.example'], roleAttributes: [POSTURE_ROLE] },
  { name: 'bench-os', typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['>=10.0.19041'] }, { type: 'Linux', versions: [] }], roleAttributes: [POSTURE_ROLE] },
  { name: 'bench-mac', typeId: 'MAC', macAddresses: ['02:00:00:00:00:01'], roleAttributes: [POSTURE_ROLE] },
  { name: 'bench-process', typeId: 'PROCESS', process: { osType: 'Linux', path: '/usr/bin/bench-agent' }, roleAttributes: [POSTURE_ROLE] },
]
export const POSTURE_RESPONSES: readonly Record<string, unknown>[] = [
  { id: 'bench', typeId: 'DOMAIN', domain: 'bench.example' },
  { id: 'bench', typeId: 'OS', type: 'Linux', version: '6.1.0' },
  { id: 'bench', typeId: 'MAC', macAddresses: ['02:00:00:00:00:02', '02:00:00:00:00:01'] },
  { id: 'bench', typeId: 'PROCESS', path: '/usr/bin/bench-agent', isRunning: true },
]

export function buildPolicies(scenario: Scenario, first: FirstIds): ScenarioPolicies {
  const { spec, attributes: a } = scenario
  const pad = (i: number) => String(i).padStart(3, '0')
  const gated = (i: number) => spec.postureEvery !== undefined && i % spec.postureEvery === 0
  return {
    servicePolicies: policyRolePairs(spec.servicePolicies, a.service, first.service, a.identity, first.identity).map(([serviceRoles, identityRoles], i) => ({
      name: `sp-${pad(i)}`, type: 'Dial', semantic: 'AllOf', serviceRoles, identityRoles, postureCheckRoles: gated(i) ? [`#${POSTURE_ROLE}`] : [],
    })),
    edgeRouterPolicies: policyRolePairs(spec.edgeRouterPolicies, a['edge-router'], first.edgeRouter, a.identity, first.identity).map(([edgeRouterRoles, identityRoles], i) => ({
      name: `erp-${pad(i)}`, semantic: 'AllOf', edgeRouterRoles, identityRoles,
    })),
    serviceEdgeRouterPolicies: policyRolePairs(spec.serviceEdgeRouterPolicies, a['edge-router'], first.edgeRouter, a.service, first.service).map(([edgeRouterRoles, serviceRoles], i) => ({
      name: `serp-${pad(i)}`, semantic: 'AllOf', edgeRouterRoles, serviceRoles,
    })),
  }
}

/** Whether an entity (its id and attributes) matches a role list under AllOf (the rule of src/domain/policy). */
export function matchesAllOf(roles: readonly string[], id: string, attrs: readonly string[]): boolean {
  if (roles.includes('#all') || (id !== '' && roles.includes(`@${id}`))) return true
  const wanted = roles.filter((r) => r.startsWith('#')).map((r) => r.slice(1))
  return wanted.length > 0 && wanted.every((w) => attrs.includes(w))
}

/**
 * Which services each identity may dial, by brute force over the service policies (each policy's services are
 * computed once). Only the first entities are named by `@id`, so only their ids matter.
 */
export function dialableServices(scenario: Scenario, policies: ScenarioPolicies, first: FirstIds): (identityIndex: number) => Set<number> {
  const perPolicy = policies.servicePolicies.map((p) => {
    const services: number[] = []
    scenario.services.forEach((s, i) => {
      if (matchesAllOf(p.serviceRoles, i === 0 ? first.service : '', s.roleAttributes)) services.push(i)
    })
    return { identityRoles: p.identityRoles, services }
  })
  return (identityIndex) => {
    const out = new Set<number>()
    const idn = scenario.identities[identityIndex]
    for (const p of perPolicy) {
      if (matchesAllOf(p.identityRoles, identityIndex === 0 ? first.identity : '', idn.roleAttributes)) for (const i of p.services) out.add(i)
    }
    return out
  }
}

/** The ordinary identity with the fewest dialable services among indexes 1..limit-1 (the lowest index on ties). */
export function fewServicesIdentity(scenario: Scenario, dialable: (identityIndex: number) => Set<number>, limit: number): number {
  let best = -1
  let bestSize = Infinity
  for (let i = 1; i < Math.min(limit, scenario.identities.length); i++) {
    const size = dialable(i).size
    if (size < bestSize) {
      best = i
      bestSize = size
    }
  }
  return best
}
