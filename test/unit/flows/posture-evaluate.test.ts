// The posture evaluator's row cache (src/flows/posture/posture-evaluate.ts) and the JSON text kept with its rows
// (src/http/mappers/posture-mapper.ts PostureQueriesJson): the cached answers equal fresh evaluations, the fast path is
// taken (the same array comes back), and a check or policy change, new posture data or an MFA check bypasses it.
import { describe, expect, it } from 'bun:test'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { PolicyGraphActor } from '../../../src/actors/policy-graph/policy-graph-actor.ts'
import type { PolicyReads } from '../../../src/domain/policy/policy-reads.ts'
import type { PostureDataReads } from '../../../src/domain/posture/posture-reads.ts'
import { NO_POSTURE_DATA, type PostureCheck, type PostureData } from '../../../src/domain/posture/posture-types.ts'
import { createPostureEvaluator, type PostureSession } from '../../../src/flows/posture/posture-evaluate.ts'
import { PostureQueriesJson, toPostureQueryEntries } from '../../../src/http/mappers/posture-mapper.ts'

const T0 = Date.parse('2026-01-01T00:00:00Z')
const base = { createdAt: T0, updatedAt: T0, tags: {}, roleAttributes: null, version: 1 }

function setup() {
  const checks = new Map<string, PostureCheck>([
    ['dom', { ...base, id: 'dom', name: 'dom', typeId: 'DOMAIN', domains: ['corp'] } as PostureCheck],
    ['mfa', { ...base, id: 'mfa', name: 'mfa', typeId: 'MFA', timeoutSeconds: -1, promptOnWake: false, promptOnUnlock: false, ignoreLegacyEndpoints: false } as PostureCheck],
  ])
  const linking: Record<string, string[]> = { s1: ['p-dom', 'p-open'], s2: ['p-mfa'] }
  const members: Record<string, string[]> = { 'p-dom': ['dom'], 'p-open': [], 'p-mfa': ['mfa'] }
  let data: PostureData | undefined
  const bus = new EventBus()
  const graph = { snapshot: () => ({ postureChecks: { size: checks.size, get: (id: string) => checks.get(id) } }) } as unknown as PolicyGraphActor
  const reads = { policiesLinking: (_i: string, s: string) => linking[s] ?? [], membersOf: (p: string) => members[p] ?? [] } as unknown as PolicyReads
  const posture: PostureDataReads = { dataOf: () => data, failedRequestsOf: () => [] }
  const deps = { graph, reads, posture, bus }
  return { checks, members, linking, bus, deps, evaluator: createPostureEvaluator(deps), setData: (d: PostureData) => void (data = d), fresh: () => createPostureEvaluator({ ...deps, bus: new EventBus() }) }
}
const session: PostureSession = { id: 'as1', identityId: 'i1', isMfaComplete: false, mfaCompletedAt: null }
const corp = (version: number): PostureData => ({ ...NO_POSTURE_DATA, version, domain: { postureCheckId: 'dom', name: 'corp', at: T0 } })

describe('posture evaluator', () => {
  it('answers the same array again while nothing changed, equal to a fresh evaluation', () => {
    const t = setup()
    const a = t.evaluator.policies(session, 's1', 'Dial', T0)
    expect(t.evaluator.policies(session, 's1', 'Dial', T0 + 5)).toBe(a)
    expect(a).toEqual(t.fresh().policies(session, 's1', 'Dial', T0))
    expect(a.map((p) => [p.policyId, p.isPassing])).toEqual([['p-dom', false], ['p-open', true]])
  })

  it('evaluates again on new posture data and after a check changes', () => {
    const t = setup()
    const a = t.evaluator.policies(session, 's1', 'Dial', T0)
    t.setData(corp(1))
    const b = t.evaluator.policies(session, 's1', 'Dial', T0)
    expect(b).not.toBe(a)
    expect(b[0]!.isPassing).toBe(true)
    t.checks.set('dom', { ...t.checks.get('dom')!, domains: ['other'] } as PostureCheck)
    t.bus.publish({ type: 'graph.postureCheck.put' })
    const c = t.evaluator.policies(session, 's1', 'Dial', T0)
    expect(c[0]!.isPassing).toBe(false)
    expect(c).toEqual(t.fresh().policies(session, 's1', 'Dial', T0))
  })

  it('answers the same array after an unrelated policy or check change, and judges anew when a policy\'s checks or a check it read changed', () => {
    const t = setup()
    t.setData(corp(1))
    const a = t.evaluator.policies(session, 's1', 'Dial', T0)
    t.bus.publish({ type: 'graph.policy.put' })
    t.bus.publish({ type: 'graph.postureCheck.put' })
    expect(t.evaluator.policies(session, 's1', 'Dial', T0)).toBe(a)
    // a check joins the open policy (the index hands out a new list)
    t.members['p-open'] = ['dom', 'gone']
    t.bus.publish({ type: 'graph.policy.put' })
    const b = t.evaluator.policies(session, 's1', 'Dial', T0)
    expect(b).not.toBe(a)
    expect(b.map((p) => p.checks.map((c) => c.check.id))).toEqual([['dom'], ['dom']])
    expect(b).toEqual(t.fresh().policies(session, 's1', 'Dial', T0))
    // a listed check that did not exist appears: judged anew
    t.checks.set('gone', { ...base, id: 'gone', name: 'gone', typeId: 'DOMAIN', domains: ['elsewhere'] } as PostureCheck)
    t.bus.publish({ type: 'graph.postureCheck.put' })
    const c = t.evaluator.policies(session, 's1', 'Dial', T0)
    expect(c.map((p) => [p.policyId, p.isPassing])).toEqual([['p-dom', true], ['p-open', false]])
    expect(c).toEqual(t.fresh().policies(session, 's1', 'Dial', T0))
    // a check deleted: judged anew
    t.checks.delete('gone')
    t.bus.publish({ type: 'graph.postureCheck.deleted' })
    const d = t.evaluator.policies(session, 's1', 'Dial', T0)
    expect(d.map((p) => [p.policyId, p.isPassing])).toEqual([['p-dom', true], ['p-open', true]])
    expect(d).toEqual(t.fresh().policies(session, 's1', 'Dial', T0))
  })

  it('finds a row again when the index hands out an equal granting-policy list in a new array, not a different one', () => {
    const t = setup()
    t.setData(corp(1))
    const a = t.evaluator.policies(session, 's1', 'Dial', T0)
    t.linking.s1 = [...t.linking.s1!]
    expect(t.evaluator.policies(session, 's1', 'Dial', T0)).toBe(a)
    t.bus.publish({ type: 'graph.policy.put' })
    t.linking.s1 = [...t.linking.s1!]
    expect(t.evaluator.policies(session, 's1', 'Dial', T0)).toBe(a)
    t.linking.s1 = ['p-dom']
    const b = t.evaluator.policies(session, 's1', 'Dial', T0)
    expect(b.map((p) => p.policyId)).toEqual(['p-dom'])
    expect(b).toEqual(t.fresh().policies(session, 's1', 'Dial', T0))
    // the same list for the other type is another row (its entries name their type)
    t.linking.s1 = ['p-dom', 'p-open']
    expect(t.evaluator.policies(session, 's1', 'Bind', T0).map((p) => p.policyType)).toEqual(['Bind', 'Bind'])
  })

  it('never caches a row with an MFA check', () => {
    const t = setup()
    const a = t.evaluator.policies(session, 's2', 'Dial', T0)
    expect(a[0]!.isPassing).toBe(false)
    const b = t.evaluator.policies({ ...session, isMfaComplete: true, mfaCompletedAt: T0 }, 's2', 'Dial', T0)
    expect(b).not.toBe(a)
    expect(b[0]!.isPassing).toBe(true)
  })
})

describe('posture evaluator for one session', () => {
  it('answers as policies() does, with the posture data of when it was made, and takes the cached rows', () => {
    const t = setup()
    t.setData(corp(1))
    const judge = t.evaluator.forSession(session, T0)
    for (const [s, type] of [['s1', 'Dial'], ['s2', 'Dial'], ['none', 'Dial']] as const) {
      expect(judge(s, type)).toEqual(t.fresh().policies(session, s, type, T0))
    }
    const before = judge('s1', 'Dial')
    expect(before).toBe(t.evaluator.policies(session, 's1', 'Dial', T0))
    // made before a report: judges on the data it read (a rendering is one synchronous pass)
    t.setData({ ...NO_POSTURE_DATA, version: 2 })
    expect(judge('s1', 'Dial')).toBe(before)
    const after = t.evaluator.forSession(session, T0)('s1', 'Dial')
    expect(after).not.toBe(before)
    expect(after[0]!.isPassing).toBe(false)
  })
})

describe('PostureQueriesJson', () => {
  it('gives the text of the entries of each permission, equal to rendering them afresh, and keeps it per array and pair', () => {
    const t = setup()
    t.setData(corp(1))
    const dial = t.evaluator.policies(session, 's1', 'Dial', T0)
    const bind = t.evaluator.policies(session, 's2', 'Bind', T0)
    const json = new PostureQueriesJson()
    const text = (first?: typeof dial, second?: typeof dial) => new TextDecoder().decode(json.textOf(first, second))
    expect(text(bind, dial)).toBe(JSON.stringify([...toPostureQueryEntries(bind), ...toPostureQueryEntries(dial)]))
    expect(text(dial)).toBe(JSON.stringify(toPostureQueryEntries(dial)))
    expect(text([], dial)).toBe(text(dial))
    expect(text(dial, [])).toBe(text(dial))
    expect(text(undefined, dial)).toBe(text(dial))
    expect(text()).toBe('[]')
    expect(text([], [])).toBe('[]')
    expect(json.textOf(dial)).toBe(json.textOf(dial))
    expect(json.textOf(bind, dial)).toBe(json.textOf(bind, dial))
  })
})
