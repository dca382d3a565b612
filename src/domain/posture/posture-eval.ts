/**
 * Evaluates one posture check against one API session's posture data. Pure: the caller passes the time.
 * - OS: the reported type equals a listed type (any case) and, when that entry lists versions, the reported version
 *   is in one of the ranges
 * - PROCESS: the process at the path (any case) is reported running, its hash is one of `hashes` (when any) and one of
 *   its signer fingerprints is the expected one (when given); PROCESS_MULTI: every (AllOf) or some (AnyOf) process does
 * - DOMAIN: the reported domain equals a listed one (any case); MAC: some reported address is listed
 * - MFA: the session completed MFA (`isMfaComplete` and `mfaCompletedAt`); with `timeoutSeconds` > 0 only until
 *   `mfaCompletedAt` + timeout; with `promptOnWake`/`promptOnUnlock`, not after the endpoint woke or was unlocked
 *   later than the last MFA code, until the client answers MFA again
 * Only MFA checks have a timeout; the others report timeout and timeoutRemaining -1.
 */
import type { DeepReadonly } from '../../lib/deep-readonly.ts'
import type { CheckResult, PostureCheck, PostureData, ProcessData as MutableProcessData, ProcessRule as MutableProcessRule, SessionMfaState } from './posture-types.ts'

type ProcessRule = DeepReadonly<MutableProcessRule>
type ProcessData = DeepReadonly<MutableProcessData>
import { normaliseMac } from './posture-decide.ts'
import { inVersionRange, parseVersionRange } from './posture-version.ts'

const NO_TIMEOUT = { timeout: -1, timeoutRemaining: -1, timeoutAt: null } as const
const ZERO_TIME = '0001-01-01T00:00:00.000Z'
const isoOr = (ms: number | null | undefined) => (ms === null || ms === undefined ? ZERO_TIME : new Date(ms).toISOString())

/** True when the check's outcome depends on the time as well as on the posture data (it must not be cached). */
export function dependsOnTime(check: PostureCheck): boolean {
  return check.typeId === 'MFA'
}

export function evaluateCheck(check: PostureCheck, data: PostureData | undefined, mfa: SessionMfaState, now: number): CheckResult {
  switch (check.typeId) {
    case 'OS': {
      const os = data?.os
      const pass = !!os && check.operatingSystems.some((rule) => {
        if (rule.type.toLowerCase() !== os.type.toLowerCase()) return false
        return rule.versions.length === 0 || rule.versions.some((v) => inVersionRange(parseVersionRange(v) ?? [], os.version))
      })
      return result(pass, { actualValue: { type: os?.type ?? '', version: os?.version ?? '' }, expectedValue: check.operatingSystems })
    }
    case 'PROCESS': {
      const actual = processOf(data, check.process.path)
      return result(processPasses(check.process, actual), { actualValue: processActual(check.process, actual), expectedValue: toWireProcess(check.process) })
    }
    case 'PROCESS_MULTI': {
      const each = check.processes.map((p) => processPasses(p, processOf(data, p.path)))
      const pass = check.semantic === 'AllOf' ? each.every(Boolean) : each.some(Boolean)
      return result(pass, {
        semantic: check.semantic,
        actualValue: check.processes.map((p) => processActual(p, processOf(data, p.path))),
        expectedValue: check.processes,
      })
    }
    case 'DOMAIN': {
      const name = data?.domain?.name ?? ''
      const pass = name !== '' && check.domains.some((d) => d.toLowerCase() === name.toLowerCase())
      return result(pass, { actualValue: name, expectedValue: check.domains })
    }
    case 'MAC': {
      const reported = data?.mac?.addresses ?? []
      const wanted = new Set(check.macAddresses.map((m) => normaliseMac(m)))
      const pass = reported.some((m) => wanted.has(normaliseMac(m)))
      return result(pass, { actualValue: reported, expectedValue: check.macAddresses })
    }
    case 'MFA':
      return evaluateMfa(check, data, mfa, now)
  }
}

function result(isPassing: boolean, failure: Record<string, unknown>): CheckResult {
  return { isPassing, ...NO_TIMEOUT, failure: isPassing ? null : failure }
}

function processOf(data: PostureData | undefined, path: string): ProcessData | undefined {
  return data?.processes[path.toLowerCase()]
}

function processPasses(rule: ProcessRule, p: ProcessData | undefined): boolean {
  if (!p?.isRunning) return false
  if (rule.hashes.length > 0 && !rule.hashes.includes(p.hash)) return false
  if (rule.signerFingerprints.length > 0 && !p.signerFingerprints.some((f) => rule.signerFingerprints.includes(f))) return false
  return true
}

function processActual(rule: ProcessRule, p: ProcessData | undefined) {
  return { osType: rule.osType, path: rule.path, isRunning: p?.isRunning ?? false, hash: p?.hash ?? '', signerFingerprints: p?.signerFingerprints ?? [] }
}

/** A PROCESS check's process as the wire shows it (one `signerFingerprint`). */
export function toWireProcess(p: ProcessRule) {
  return { osType: p.osType, path: p.path, hashes: p.hashes, ...(p.signerFingerprints[0] ? { signerFingerprint: p.signerFingerprints[0] } : {}) }
}

function evaluateMfa(check: Extract<PostureCheck, { typeId: 'MFA' }>, data: PostureData | undefined, mfa: SessionMfaState, now: number): CheckResult {
  const passedAt = mfa.isMfaComplete ? mfa.mfaCompletedAt : null
  const timeoutS = check.timeoutSeconds > 0 ? check.timeoutSeconds : -1
  const wokenAt = data?.wokenAt ?? null
  const unlockedAt = data?.unlockedAt ?? null
  const passedOnWake = !check.promptOnWake || wokenAt === null || (passedAt !== null && passedAt >= wokenAt)
  const passedOnUnlock = !check.promptOnUnlock || unlockedAt === null || (passedAt !== null && passedAt >= unlockedAt)
  let timeoutAt: number | null = null
  let remaining = -1
  if (timeoutS > 0) {
    timeoutAt = passedAt === null ? null : passedAt + timeoutS * 1000
    remaining = timeoutAt === null ? 0 : Math.max(0, Math.floor((timeoutAt - now) / 1000))
  }
  const timedOut = timeoutS > 0 && (timeoutAt === null || now >= timeoutAt)
  const isPassing = passedAt !== null && !timedOut && passedOnWake && passedOnUnlock
  const values = (passedMfa: boolean, onWake: boolean, onUnlock: boolean, out: boolean) => ({ passedMfa, passedOnWake: onWake, passedOnUnlock: onUnlock, timedOut: out })
  return {
    isPassing,
    timeout: timeoutS,
    timeoutRemaining: remaining,
    timeoutAt,
    failure: isPassing
      ? null
      : {
          actualValue: values(passedAt !== null, passedOnWake, passedOnUnlock, timedOut),
          expectedValue: values(true, true, true, false),
          criteria: {
            passedMfaAt: isoOr(passedAt),
            wokenAt: isoOr(wokenAt),
            unlockedAt: isoOr(unlockedAt),
            timeoutSeconds: timeoutS,
            timeoutRemainingSeconds: remaining,
          },
        },
  }
}

/** The zero time the real controller renders for a time that never happened (`x-omitempty: false` date-times). */
export const NEVER = ZERO_TIME
export { isoOr as isoOrNever }
