/**
 * Posture records → wire: posture check types, posture checks (common fields plus the kind's), posture queries of
 * the service lists, identity posture data and failed service requests.
 * @see edge-api management.yml postureCheckTypeDetail, postureCheckDetail and kinds, postureQuery, postureData,
 *   failedServiceRequest
 */
import type { PostureCheck, PostureCheckType, PostureData, FailedServiceRequest, CheckResult } from '../../domain/posture/posture-types.ts'
import { isoOrNever, toWireProcess } from '../../domain/posture/posture-eval.ts'
import { BASE_SYMBOLS, iso, toBaseEntity } from './common-mapper.ts'
import { utf8 } from '../http-envelope.ts'

/** The fields the filter language knows on posture checks. */
export const POSTURE_CHECK_SYMBOLS = { ...BASE_SYMBOLS, name: 'string', typeId: 'string', roleAttributes: 'set', version: 'number' } as const
export const POSTURE_CHECK_TYPE_SYMBOLS = { ...BASE_SYMBOLS, name: 'string' } as const

export function toPostureCheckTypeDetail(t: PostureCheckType, at: number) {
  return {
    ...toBaseEntity('posture-check-types', { id: t.id, createdAt: at, updatedAt: at, tags: null }),
    name: t.name,
    operatingSystems: t.operatingSystems,
    version: '1',
  }
}

export function toPostureCheckTypeRow(t: PostureCheckType, at: number): Record<string, unknown> {
  return { id: t.id, name: t.name, createdAt: at, updatedAt: at, tags: {}, isSystem: true }
}

/** The kind fields of a check as the wire names them. */
function kindFields(c: PostureCheck) {
  switch (c.typeId) {
    case 'OS':
      return { operatingSystems: c.operatingSystems }
    case 'PROCESS':
      return { process: toWireProcess(c.process) }
    case 'PROCESS_MULTI':
      return { semantic: c.semantic, processes: c.processes }
    case 'DOMAIN':
      return { domains: c.domains }
    case 'MAC':
      return { macAddresses: c.macAddresses }
    case 'MFA':
      return { timeoutSeconds: c.timeoutSeconds, promptOnWake: c.promptOnWake, promptOnUnlock: c.promptOnUnlock, ignoreLegacyEndpoints: c.ignoreLegacyEndpoints }
  }
}

export function toPostureCheckDetail(c: PostureCheck) {
  return {
    ...toBaseEntity('posture-checks', c),
    name: c.name,
    typeId: c.typeId,
    roleAttributes: c.roleAttributes ?? [],
    version: c.version,
    ...kindFields(c),
  }
}

export function toPostureCheckRow(c: PostureCheck): Record<string, unknown> {
  return {
    id: c.id, name: c.name, createdAt: c.createdAt, updatedAt: c.updatedAt, tags: c.tags ?? {}, isSystem: false,
    typeId: c.typeId, roleAttributes: c.roleAttributes ?? [], version: c.version,
  }
}

/** One posture query of a service's postureQueries entry: the check and how the caller's session fares. */
export function toPostureQuery(c: PostureCheck, r: CheckResult) {
  return {
    ...toBaseEntity('posture-checks', c),
    queryType: c.typeId,
    isPassing: r.isPassing,
    timeout: r.timeout,
    timeoutRemaining: r.timeoutRemaining,
    timeoutAt: r.timeoutAt === null ? null : iso(r.timeoutAt),
    ...(c.typeId === 'PROCESS' ? { process: { osType: c.process.osType, path: c.process.path } } : {}),
    ...(c.typeId === 'PROCESS_MULTI' ? { processes: c.processes.map((p) => ({ osType: p.osType, path: p.path })) } : {}),
    ...(c.typeId === 'MFA' ? { promptOnWake: c.promptOnWake, promptOnUnlock: c.promptOnUnlock } : {}),
  }
}

/** A service's postureQueries entries as the wire shows them. */
export function toPostureQueryEntries(entries: readonly PolicyPostureView[]) {
  return entries.map((p) => ({ policyId: p.policyId, policyType: p.policyType, isPassing: p.isPassing, postureQueries: p.checks.map((c) => toPostureQuery(c.check, c.result)) }))
}

/** What toPostureQueryEntries reads of an evaluated policy (flows/posture PolicyPosture). */
export interface PolicyPostureView {
  policyId: string
  policyType: string
  isPassing: boolean
  checks: readonly { check: PostureCheck; result: CheckResult }[]
}

/**
 * The JSON text (UTF-8) of a service row's postureQueries: the entries of each permission, in order. The evaluator
 * hands out the same entries array while nothing it depends on changed, so the text of each array (and of each pair,
 * for a row granted both Bind and Dial with entries for both) is kept with it and a row costs a lookup.
 */
export class PostureQueriesJson {
  private readonly texts = new WeakMap<readonly PolicyPostureView[], Uint8Array>()
  private readonly pairs = new WeakMap<readonly PolicyPostureView[], WeakMap<readonly PolicyPostureView[], Uint8Array>>()

  /**
   * The array of the entries of a row's permissions, in order: `first` for its first permission, `second` for its
   * second (Bind, then Dial); either may be empty or absent.
   */
  textOf(first: readonly PolicyPostureView[] | undefined, second?: readonly PolicyPostureView[]): Uint8Array {
    const a = first !== undefined && first.length > 0 ? first : undefined
    const b = second !== undefined && second.length > 0 ? second : undefined
    if (a === undefined) return b === undefined ? EMPTY_ARRAY : this.one(b)
    if (b === undefined) return this.one(a)
    let byB = this.pairs.get(a)
    if (!byB) this.pairs.set(a, (byB = new WeakMap()))
    let t = byB.get(b)
    if (!t) {
      const [ta, tb] = [this.one(a), this.one(b)]
      // `[a…]` and `[b…]` joined as `[a…,b…]`
      t = new Uint8Array(ta.length + tb.length - 1)
      t.set(ta.subarray(0, ta.length - 1), 0)
      t[ta.length - 1] = COMMA
      t.set(tb.subarray(1), ta.length)
      byB.set(b, t)
    }
    return t
  }

  private one(entries: readonly PolicyPostureView[]): Uint8Array {
    let t = this.texts.get(entries)
    if (!t) this.texts.set(entries, (t = utf8(JSON.stringify(toPostureQueryEntries(entries)))))
    return t
  }
}
const COMMA = 0x2c
const EMPTY_ARRAY = utf8('[]')

/** One API session's share of an identity's posture data (management.yml apiSessionPostureData). */
export function toApiSessionPostureData(apiSessionId: string, d: PostureData | undefined, mfa: { isMfaComplete: boolean; mfaCompletedAt: number | null }) {
  const passedAt = mfa.isMfaComplete ? mfa.mfaCompletedAt : null
  return {
    mfa: {
      apiSessionId,
      passedMfa: passedAt !== null,
      passedOnWake: passedAt !== null && (d?.wokenAt ?? null) !== null && passedAt >= d!.wokenAt!,
      passedOnUnlock: passedAt !== null && (d?.unlockedAt ?? null) !== null && passedAt >= d!.unlockedAt!,
      passedAt: isoOrNever(passedAt),
    },
    endpointState: { wokenAt: isoOrNever(d?.wokenAt), unlockedAt: isoOrNever(d?.unlockedAt) },
    ...(d?.sdkInfo ? { sdkInfo: d.sdkInfo } : {}),
  }
}

/**
 * An identity's posture data: the most recent OS, domain, MAC and process reports over its API sessions, and each
 * session's MFA and endpoint state. Never-reported parts read as empty values at the zero time, as the real one.
 */
export function toPostureData(sessions: readonly { id: string; isMfaComplete: boolean; mfaCompletedAt: number | null; data: PostureData | undefined }[]) {
  const latest = <T extends { at: number }>(pick: (d: PostureData) => T | null | undefined): T | undefined => {
    let best: T | undefined
    for (const s of sessions) {
      const v = s.data ? pick(s.data) : undefined
      if (v && (!best || v.at > best.at)) best = v
    }
    return best
  }
  const base = (v: { postureCheckId: string; at: number } | undefined) => ({ postureCheckId: v?.postureCheckId ?? '', timedOut: false, lastUpdatedAt: isoOrNever(v?.at) })
  const os = latest((d) => d.os)
  const domain = latest((d) => d.domain)
  const mac = latest((d) => d.mac)
  const processes = new Map<string, PostureData['processes'][string]>()
  for (const s of sessions) {
    for (const [k, p] of Object.entries(s.data?.processes ?? {})) if ((processes.get(k)?.at ?? -1) < p.at) processes.set(k, p)
  }
  return {
    os: { ...base(os), type: os?.type ?? '', version: os?.version ?? '', build: os?.build ?? '' },
    domain: { ...base(domain), domain: domain?.name ?? '' },
    mac: { ...base(mac), addresses: mac?.addresses ?? [] },
    processes: [...processes.values()].map((p) => ({ ...base(p), path: p.path, isRunning: p.isRunning, binaryHash: p.hash, signerFingerprints: p.signerFingerprints })),
    apiSessionPostureData: Object.fromEntries(sessions.map((s) => [s.id, toApiSessionPostureData(s.id, s.data, s)])),
  }
}

export function toFailedServiceRequest(f: FailedServiceRequest) {
  return {
    apiSessionId: f.apiSessionId,
    serviceId: f.serviceId,
    serviceName: f.serviceName,
    sessionType: f.sessionType,
    when: iso(f.when),
    policyFailures: f.policyFailures,
  }
}
