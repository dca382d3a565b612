/**
 * Posture of an API session for a service: which service policies grant the (identity, service, Dial|Bind) and
 * whether each passes its posture checks. Reads only: the granting policies and the checks gating each come
 * precomputed from the policy index; the session's posture data from the volatile posture store.
 * Rules:
 * - a policy passes when every posture check it selects passes (a policy without checks passes)
 * - access of a type passes when at least one granting policy passes
 * - outcomes of checks that do not depend on the time (all but MFA) are cached per posture-data record and check
 *   record: both are replaced on every change, so a cached outcome is never stale
 * - the entries of a service row are cached per granting-policy list (the index hands out the same array while the
 *   links hold) and posture-data record; rows with an MFA check are not (`isTimed` tells them apart: an answer holding
 *   one must not be kept either)
 * - after a posture check or policy changed (anywhere), a cached row is answered again only once what it was judged
 *   from is found unchanged: each granting policy's list of checks (the same array from the index) and each check's
 *   record (records are replaced on every change); otherwise it is judged anew. So one policy change does not make
 *   every row of every list be judged and rendered again. The index may hand out a new, equal granting-policy list
 *   once its own caches were dropped (an entity joined a class): such a row is found again by the list's content
 *   (policy ids and type), within MAX_LISTS_BY_CONTENT lists, and checks the same way.
 */
import type { PolicyGraphActor } from '../../actors/policy-graph/policy-graph-actor.ts'
import type { EventBus } from '../../actors/runtime/event-bus.ts'
import type { PolicyReads, Permission } from '../../domain/policy/policy-reads.ts'
import type { PostureDataReads } from '../../domain/posture/posture-reads.ts'
import { NO_POSTURE_DATA, type CheckResult, type PostureCheck, type PostureData, type SessionMfaState } from '../../domain/posture/posture-types.ts'
import { dependsOnTime, evaluateCheck } from '../../domain/posture/posture-eval.ts'
import { BoundedMap } from '../../lib/bounded-map.ts'

export interface PostureEvalDeps {
  graph: PolicyGraphActor
  reads: PolicyReads
  posture: PostureDataReads
  /** The graph's events: a posture check or policy change makes cached rows stale. */
  bus: EventBus
}

/** The session an evaluation is for: its id and its MFA state (contract 2: `isMfaComplete`, `mfaCompletedAt`). */
export type PostureSession = { id: string; identityId: string; isMfaComplete: boolean; mfaCompletedAt?: number | null }

export interface CheckOutcome {
  check: PostureCheck
  result: CheckResult
}

export interface PolicyPosture {
  policyId: string
  policyType: Permission
  isPassing: boolean
  checks: CheckOutcome[]
}

export interface PostureEvaluator {
  /** True once any posture check exists (before that, clients see the placeholder entries). */
  anyChecks(): boolean
  /**
   * One entry per service policy of `type` granting the session's identity the service, judged on the session's
   * current posture data or on `data` when given. The array may be shared with later calls: never change it.
   */
  policies(session: PostureSession, serviceId: string, type: Permission, now: number, data?: PostureData): PolicyPosture[]
  /**
   * `policies` for one session at one instant, its posture data and MFA state read once: a service list asks for
   * hundreds of rows in one synchronous pass. Use it within that pass only (later data would not be seen).
   */
  forSession(session: PostureSession, now: number): (serviceId: string, type: Permission) => PolicyPosture[]
  /** True when entries `policies` answered depend on the time as well (an MFA check with its timeout is among them). */
  isTimed(entries: readonly PolicyPosture[]): boolean
  /**
   * What evaluations for the session depend on besides the policy graph and index (and the time, see isTimed): its
   * posture data record (replaced on every report) and its MFA state. Equal values (`===`), equal outcomes.
   */
  inputsOf(session: PostureSession): readonly unknown[]
}

/** Granting-policy lists whose judged rows are also found by content (see the header); the oldest leave first. */
export const MAX_LISTS_BY_CONTENT = 2048

export function createPostureEvaluator(deps: PostureEvalDeps): PostureEvaluator {
  const cache = new WeakMap<PostureData, WeakMap<PostureCheck, CheckResult>>()
  const outcome = (check: PostureCheck, data: PostureData | undefined, mfa: SessionMfaState, now: number): CheckResult => {
    if (dependsOnTime(check)) return evaluateCheck(check, data, mfa, now)
    const key = data ?? NO_POSTURE_DATA
    let perData = cache.get(key)
    if (!perData) cache.set(key, (perData = new WeakMap()))
    let r = perData.get(check)
    if (!r) perData.set(check, (r = evaluateCheck(check, data, mfa, now)))
    return r
  }
  /**
   * A judged row: `checkLists` holds the check id list of each granting policy (in `linking` order) and `checks` the
   * check records read, in order (undefined where a listed check was missing), as they were when judged.
   */
  type JudgedRow = { generation: number; entries: PolicyPosture[]; checkLists: (readonly string[])[]; checks: (PostureCheck | undefined)[] }
  const rows = new WeakMap<readonly string[], WeakMap<PostureData, JudgedRow>>()
  /** The same rows by the content of their granting-policy list (`type` + ids), for an equal list in a new array. */
  const byContent = new BoundedMap<string, WeakMap<PostureData, JudgedRow>>(MAX_LISTS_BY_CONTENT)
  const contentOf = (linking: readonly string[], type: Permission) => `${type}\n${linking.join('\n')}`
  /** The row of `linking` for `key` (a posture data record), from its array or from an equal list's. */
  const rowOf = (linking: readonly string[], type: Permission, key: PostureData): JudgedRow | undefined => {
    const hit = rows.get(linking)?.get(key)
    if (hit || linking.length === 0) return hit
    const equal = byContent.get(contentOf(linking, type))?.get(key)
    if (equal) keep(linking, type, key, equal)
    return equal
  }
  const keep = (linking: readonly string[], type: Permission, key: PostureData, row: JudgedRow) => {
    let perData = rows.get(linking)
    if (!perData) rows.set(linking, (perData = new WeakMap()))
    perData.set(key, row)
    if (linking.length === 0) return
    const content = contentOf(linking, type)
    let same = byContent.get(content)
    if (!same) byContent.set(content, (same = new WeakMap()))
    same.set(key, row)
  }
  /** Whether a row judged under an older generation was judged from what is current. */
  const stillCurrent = (row: JudgedRow, linking: readonly string[]): boolean => {
    const g = deps.graph.snapshot()
    let at = 0
    for (let i = 0; i < linking.length; i++) {
      const ids = deps.reads.membersOf(linking[i]!, 'posture-check')
      if (ids !== row.checkLists[i]) return false
      for (const id of ids) if (g.postureChecks.get(id) !== row.checks[at++]) return false
    }
    return true
  }
  const timed = new WeakSet<readonly PolicyPosture[]>()
  let generation = 0
  for (const type of ['graph.postureCheck.put', 'graph.postureCheck.deleted', 'graph.policy.put', 'graph.policy.deleted']) {
    deps.bus.subscribe(type, () => void generation++)
  }
  /** The entries of the service policies of `type` linking the session's identity to the service, judged on `data`. */
  const judge = (session: PostureSession, serviceId: string, type: Permission, now: number, data: PostureData | undefined): PolicyPosture[] => {
    const linking = deps.reads.policiesLinking(session.identityId, serviceId, type)
    const key = data ?? NO_POSTURE_DATA
    const hit = rowOf(linking, type, key)
    if (hit && (hit.generation === generation || stillCurrent(hit, linking))) {
      hit.generation = generation
      return hit.entries
    }
    const g = deps.graph.snapshot()
    const mfa: SessionMfaState = { isMfaComplete: session.isMfaComplete, mfaCompletedAt: session.mfaCompletedAt ?? null }
    const entries: PolicyPosture[] = []
    const checkLists: (readonly string[])[] = []
    const read: (PostureCheck | undefined)[] = []
    let timeDependent = false
    for (const policyId of linking) {
      const checks: CheckOutcome[] = []
      let isPassing = true
      const ids = deps.reads.membersOf(policyId, 'posture-check')
      checkLists.push(ids)
      for (const checkId of ids) {
        const check = g.postureChecks.get(checkId)
        read.push(check)
        if (!check) continue
        if (dependsOnTime(check)) timeDependent = true
        const result = outcome(check, data, mfa, now)
        if (!result.isPassing) isPassing = false
        checks.push({ check, result })
      }
      entries.push({ policyId, policyType: type, isPassing, checks })
    }
    if (timeDependent) timed.add(entries)
    else keep(linking, type, key, { generation, entries, checkLists, checks: read })
    return entries
  }
  return {
    anyChecks: () => deps.graph.snapshot().postureChecks.size > 0,
    policies: (session, serviceId, type, now, given) => judge(session, serviceId, type, now, given ?? deps.posture.dataOf(session.id)),
    forSession(session, now) {
      const data = deps.posture.dataOf(session.id)
      return (serviceId, type) => judge(session, serviceId, type, now, data)
    },
    isTimed: (entries) => timed.has(entries),
    inputsOf: (session) => [deps.posture.dataOf(session.id), session.isMfaComplete, session.mfaCompletedAt ?? null],
  }
}
