/**
 * The policy index, checked two ways after every step of random operation sequences:
 * - the incrementally maintained index dumps equal to one rebuilt from scratch (entities and policies in another order;
 *   the integrity check's rebuild and comparison, src/domain/policy/policy-index-check.ts);
 * - every read equals a brute-force evaluation of the policies.
 * And the change marks: an identity whose view changed gets a later mark; one whose view did not (and that no
 * service or posture change touched) keeps its mark.
 */
import { describe, expect, test } from 'bun:test'
import { PolicyIndex } from '../../../../src/domain/policy/policy-index.ts'
import { buildPolicyIndex, comparePolicyIndexes } from '../../../../src/domain/policy/policy-index-check.ts'
import { applyToIndex, applyToModel, crossCheck, KINDS, Model, randomOp, rng, type Op } from './policy-model.ts'

function rebuild(m: Model, r: () => number): PolicyIndex {
  const shuffle = <T>(xs: T[]) => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1))
      ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
    }
    return xs
  }
  const ents = shuffle(KINDS.flatMap((kind) => [...m.entities.get(kind)!.entries()].map(([id, roleAttributes]) => ({ kind, id, roleAttributes }))))
  // policies first for half the seeds: the order of loading must not matter
  const pols = shuffle([...m.policies.values()])
  return buildPolicyIndex(ents, pols, r() >= 0.5)
}

const viewOf = (ix: PolicyIndex, id: string) => JSON.stringify(ix.servicesOfIdentity(id).map((s) => [s, ix.permissionsOf(id, s)]))

/** Whether an operation may mark identities whose list did not change (service records, posture roles). */
function mayTouch(o: Op, m: Model): boolean {
  if (o.op === 'putEntity' || o.op === 'removeEntity') return o.kind === 'service'
  if (o.op === 'putPolicy') return o.policy.kind === 'service-policy' && m.policies.has(o.policy.id)
  return false
}

describe('policy index', () => {
  for (const seed of (process.env.POLICY_SEEDS ? Array.from({ length: Number(process.env.POLICY_SEEDS) }, (_, i) => i + 100) : [1, 2, 3, 4, 5, 6, 7, 8])) {
    test(`case=seed ${seed}: incremental equals rebuild and brute force after every step`, () => {
      const r = rng(seed)
      const m = new Model()
      const ix = new PolicyIndex()
      let now = 1_000
      for (let step = 0; step < 250; step++) {
        const o = randomOp(m, r)
        const identities = [...m.entities.get('identity')!.keys()]
        const before = new Map(identities.map((id) => [id, { view: viewOf(ix, id), mark: ix.lastChangeAt(id) }]))
        const touching = mayTouch(o, m)
        applyToModel(m, o)
        applyToIndex(ix, o, (now += 1))
        const where = `seed ${seed} step ${step} ${JSON.stringify(o)}`
        expect({ where, differences: comparePolicyIndexes(ix, rebuild(m, r)) }).toEqual({ where, differences: [] })
        expect({ where, mismatch: crossCheck(m, ix) }).toEqual({ where, mismatch: undefined })
        for (const [id, b] of before) {
          if (!m.entities.get('identity')!.has(id)) continue
          const after = { view: viewOf(ix, id), mark: ix.lastChangeAt(id) }
          if (after.view !== b.view) expect({ where, id, moved: (after.mark ?? 0) > (b.mark ?? 0) }).toEqual({ where, id, moved: true })
          else if (!touching) expect({ where, id, mark: after.mark }).toEqual({ where, id, mark: b.mark })
        }
      }
    })
  }

  test('case=the comparison names what a maintained index missed', () => {
    const entities = [
      { kind: 'identity' as const, id: 'i1', roleAttributes: ['x'] },
      { kind: 'service' as const, id: 's1', roleAttributes: ['y'] },
    ]
    const policy = { id: 'p', kind: 'service-policy' as const, type: 'Dial' as const, semantic: 'AnyOf' as const, identityRoles: ['#x'], serviceRoles: ['#y'], postureCheckRoles: [] }
    const full = buildPolicyIndex(entities, [policy])
    expect(comparePolicyIndexes(full, buildPolicyIndex(entities, [policy], true))).toEqual([])
    const missed = buildPolicyIndex(entities, [])
    const found = comparePolicyIndexes(missed, full)
    expect(found.some((d) => d.startsWith('policy index: identity differs') && d.includes('"x"'))).toBe(true)
    expect(comparePolicyIndexes(buildPolicyIndex(entities.slice(1), [policy]), full).some((d) => d.startsWith('policy index: identity-attributes'))).toBe(true)
  })

  test('case=loading entities that share one attribute array equals putting them one by one', () => {
    const shared = ['x', 'y']
    const entities = [
      ...Array.from({ length: 6 }, (_, i) => ({ kind: 'identity' as const, id: `i${i}`, roleAttributes: shared })),
      { kind: 'identity' as const, id: 'j', roleAttributes: ['y', 'x', 'x'] },
      { kind: 'service' as const, id: 's1', roleAttributes: shared },
      // already present: moves to its new class
      { kind: 'identity' as const, id: 'i0', roleAttributes: ['z'] },
    ]
    const policy = { id: 'p', kind: 'service-policy' as const, type: 'Dial' as const, semantic: 'AllOf' as const, identityRoles: ['#x', '@i3'], serviceRoles: ['#y'], postureCheckRoles: [] }
    const oneByOne = new PolicyIndex()
    oneByOne.putPolicy(policy, null)
    for (const e of entities) oneByOne.putEntity(e.kind, e.id, e.roleAttributes, null)
    // policies first: i3 is named by the policy and gets a class of its own
    const loaded = buildPolicyIndex(entities, [policy], true)
    expect(comparePolicyIndexes(loaded, oneByOne)).toEqual([])
    expect(loaded.servicesOfIdentity('i3')).toEqual(['s1'])
    expect(loaded.servicesOfIdentity('i0')).toEqual([])
    expect(loaded.identitiesOfService('s1')).toEqual(['i1', 'i2', 'i3', 'i4', 'i5', 'j'])
    expect(comparePolicyIndexes(buildPolicyIndex(entities, [policy]), oneByOne)).toEqual([])
  })

  test('case=an identity in its own class while a policy names it, back to the shared class after', () => {
    const ix = new PolicyIndex()
    ix.putEntity('identity', 'i1', ['x'], null)
    ix.putEntity('identity', 'i2', ['x'], null)
    expect(ix.classCounts().identity).toBe(1)
    ix.putPolicy({ id: 'p', kind: 'edge-router-policy', semantic: 'AnyOf', identityRoles: ['@i1'], edgeRouterRoles: ['#all'] }, 5)
    expect(ix.classCounts().identity).toBe(2)
    ix.removePolicy('p', 6)
    expect(ix.classCounts().identity).toBe(1)
  })

  test('case=many identities with few attribute sets make few classes; creating one more costs no policy work', () => {
    const ix = new PolicyIndex()
    ix.putEntity('service', 's', ['web'], null)
    ix.putPolicy({ id: 'p', kind: 'service-policy', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#web'], postureCheckRoles: [] }, null)
    for (let i = 0; i < 5000; i++) ix.putEntity('identity', `i${String(i).padStart(5, '0')}`, i % 2 ? ['staff'] : ['guest'], null)
    expect(ix.classCounts().identity).toBe(2)
    expect(ix.identitiesOfService('s').length).toBe(2500)
    expect(ix.servicesOfIdentity('i00001')).toEqual(['s'])
    expect(ix.servicesOfIdentity('i00000')).toEqual([])
  })

  test('case=marks: granting access marks, unrelated router policies do not, touching a service marks its viewers', () => {
    const ix = new PolicyIndex()
    ix.putEntity('identity', 'i', ['u'], null)
    ix.putEntity('identity', 'j', ['v'], null)
    ix.putEntity('service', 's', ['w'], null)
    expect(ix.lastChangeAt('i')).toBeUndefined()
    ix.putPolicy({ id: 'p', kind: 'service-policy', type: 'Bind', semantic: 'AllOf', identityRoles: ['#u'], serviceRoles: ['#w'], postureCheckRoles: [] }, 100)
    expect(ix.lastChangeAt('i')).toBe(100)
    expect(ix.lastChangeAt('j')).toBeUndefined()
    ix.putPolicy({ id: 'e', kind: 'edge-router-policy', semantic: 'AllOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] }, 200)
    expect(ix.lastChangeAt('i')).toBe(100)
    ix.touchServices(['s'], 300)
    expect(ix.lastChangeAt('i')).toBe(300)
    expect(ix.lastChangeAt('j')).toBeUndefined()
    // same millisecond: still strictly later
    ix.touchServices(['s'], 300)
    expect(ix.lastChangeAt('i')).toBe(301)
    ix.touchIdentities(['j'], 310)
    expect(ix.lastChangeAt('j')).toBe(310)
    // moving to a class with the same view keeps the mark
    ix.putEntity('identity', 'i', ['u', 'extra'], 400)
    expect(ix.lastChangeAt('i')).toBe(301)
    ix.putEntity('identity', 'i', ['nothing'], 500)
    expect(ix.lastChangeAt('i')).toBe(500)
  })
})
