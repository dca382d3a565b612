// The integrity check's comparison of derived in-memory structures (flows/integrity/integrity-derived.ts): the policy
// index handed in is the test seam: one that missed a change is found, one that did not is not.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { change, openCore, type Core } from './flows-support.ts'
import { checkPolicyIndex } from '../../../src/flows/integrity/integrity-derived.ts'
import { buildPolicyIndex, indexEntitiesOf } from '../../../src/domain/policy/policy-index-check.ts'
import type { ThirdPartyCaReads } from '../../../src/domain/ca/ca-reads.ts'
import type { ExternalJwtSignerReads } from '../../../src/domain/ca/ca-jwt-signer-types.ts'

let core: Core
beforeAll(async () => {
  core = await openCore()
  await core.identities.ask({ type: 'identity.create', input: { name: 'derived-user', roleAttributes: ['staff'] }, change })
  await core.graph.ask({ type: 'service.create', input: { name: 'derived-svc', roleAttributes: ['web'] }, change })
  await core.graph.ask({
    type: 'servicePolicy.create', input: { name: 'derived-sp', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#web'] }, change,
  })
})
afterAll(async () => {
  await core.close()
})

const pause = () => Promise.resolve()

describe('the policy index check', () => {
  const sources = () => {
    const g = core.graph.snapshot()
    const entities = [...indexEntitiesOf({
      identities: core.identities.snapshot().identities.values(),
      services: g.services.values(),
      edgeRouters: g.edgeRouters.values(),
      postureChecks: g.postureChecks.values(),
    })]
    return { entities, policies: g.indexPolicies() }
  }
  const live = (policyIndex: ReturnType<typeof buildPolicyIndex>) => ({
    identities: core.identities.snapshot(),
    graph: core.graph.snapshot(),
    ca: {} as ThirdPartyCaReads & ExternalJwtSignerReads,
    policyIndex,
  })

  it('finds nothing when the maintained index holds what the records say', async () => {
    const { entities, policies } = sources()
    expect(await checkPolicyIndex(live(buildPolicyIndex(entities, policies, true)), pause)).toEqual([])
  })

  it('names the parts of an index that missed a policy, as not fixable in place', async () => {
    const { entities } = sources()
    const found = await checkPolicyIndex(live(buildPolicyIndex(entities, [])), pause)
    expect(found.length).toBeGreaterThan(0)
    expect(found.every((f) => f.repair === undefined && f.description.endsWith('a restart rebuilds it from the records'))).toBe(true)
    expect(found.map((f) => f.description).some((d) => d.startsWith('policy index: identity differs'))).toBe(true)
  })
})
