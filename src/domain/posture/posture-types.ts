/**
 * Posture checks as stored, the built-in posture check types, and the volatile posture data a client reports per API
 * session. Times are epoch milliseconds.
 * @see edge-api management.yml postureCheckDetail (discriminated by typeId), postureCheckTypeDetail, operatingSystem,
 *   process, processMulti; client.yml postureResponseCreate; controller-behaviour.md §10
 */
import type { DeepReadonly } from '../../lib/deep-readonly.ts'
import type { Semantic, Tags } from '../policy/policy-types.ts'

/** Operating system names of the edge API (`osType`). */
export const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'] as const
export type OsType = (typeof OS_TYPES)[number]

/** The kinds of posture check (`typeId`). */
export const POSTURE_CHECK_TYPE_IDS = ['OS', 'PROCESS', 'DOMAIN', 'MAC', 'MFA', 'PROCESS_MULTI'] as const
export type PostureCheckTypeId = (typeof POSTURE_CHECK_TYPE_IDS)[number]

export interface OperatingSystemRule {
  type: OsType
  /** Allowed versions as semver ranges (`>=10.0.0 <11.0.0`, `10`, `=5.4.0 || >=6`); empty: any version. */
  versions: string[]
}

/** A process of a PROCESS check: `hashes` are SHA-512 hex (lowercase); empty means any binary. */
export interface ProcessRule {
  osType: OsType
  path: string
  hashes: string[]
  /** SHA-1 hex (lowercase) fingerprints of the signing certificates accepted; empty means unsigned is fine. */
  signerFingerprints: string[]
}

interface CheckFields {
  id: string
  createdAt: number
  updatedAt: number
  tags: Tags
  name: string
  roleAttributes: string[] | null
  /** Starts at 1 and grows by one on every change. */
  version: number
}

/** The kind-specific part of a posture check. */
export type PostureCheckSpec =
  | { typeId: 'OS'; operatingSystems: OperatingSystemRule[] }
  | { typeId: 'PROCESS'; process: ProcessRule }
  | { typeId: 'PROCESS_MULTI'; semantic: Semantic; processes: ProcessRule[] }
  | { typeId: 'DOMAIN'; domains: string[] }
  | { typeId: 'MAC'; macAddresses: string[] }
  | {
      typeId: 'MFA'
      /** Seconds an MFA check stays passing after the last MFA code; -1 (or 0) for no timeout. */
      timeoutSeconds: number
      promptOnWake: boolean
      promptOnUnlock: boolean
      ignoreLegacyEndpoints: boolean
    }

/** A stored posture check. Records are replaced on every change, never mutated. */
export type PostureCheck = DeepReadonly<CheckFields & PostureCheckSpec>

/** A posture check type: which operating systems it applies to. */
export interface PostureCheckType {
  id: PostureCheckTypeId
  name: string
  operatingSystems: readonly OperatingSystemRule[]
}

const WINDOWS: OperatingSystemRule = { type: 'Windows', versions: ['Vista', '7', '8', '10', '2000'] }
const LINUX: OperatingSystemRule = { type: 'Linux', versions: ['4.14', '4.19', '5.4', '5.9'] }
const IOS: OperatingSystemRule = { type: 'iOS', versions: ['11', '12'] }
const MACOS: OperatingSystemRule = { type: 'macOS', versions: ['10.15', '11.0'] }
const ANDROID: OperatingSystemRule = { type: 'Android', versions: ['9', '10', '11'] }

/**
 * The posture check types, with the operating systems the real controller seeds for each
 * (`migration_initialize.go` addPostureCheckTypes). MFA is not a stored type there; here it is listed too, for every
 * operating system, so that each valid `typeId` has a type (README differences).
 */
export const POSTURE_CHECK_TYPES: readonly PostureCheckType[] = [
  { id: 'OS', name: 'Operating System Check', operatingSystems: [WINDOWS, LINUX, ANDROID, MACOS, IOS] },
  { id: 'PROCESS', name: 'Process Check', operatingSystems: [WINDOWS, MACOS, LINUX] },
  { id: 'DOMAIN', name: 'Windows Domain Check', operatingSystems: [WINDOWS] },
  { id: 'MAC', name: 'MAC Address Check', operatingSystems: [WINDOWS, LINUX, MACOS, ANDROID] },
  { id: 'PROCESS_MULTI', name: 'Process Multi Check', operatingSystems: [WINDOWS, MACOS, LINUX] },
  { id: 'MFA', name: 'MFA Check', operatingSystems: [WINDOWS, LINUX, ANDROID, MACOS, IOS] },
]

/** One process as the client last reported it. */
export interface ProcessData {
  /** The posture check the client answered for (the response's `id`). */
  postureCheckId: string
  path: string
  isRunning: boolean
  /** SHA-512 hex, lowercase; '' when not given. */
  hash: string
  signerFingerprints: string[]
  at: number
}

/**
 * What one API session's client has reported (volatile: memory only, gone with the API session or a restart, as in
 * the real controller). `version` grows with every change, so evaluations can be cached per version.
 */
export type PostureData = DeepReadonly<{
  version: number
  os: { postureCheckId: string; type: string; version: string; build: string; at: number } | null
  domain: { postureCheckId: string; name: string; at: number } | null
  mac: { postureCheckId: string; addresses: string[]; at: number } | null
  /** By path (lowercase for matching). */
  processes: Record<string, ProcessData>
  /** When the endpoint last reported waking up or being unlocked. */
  wokenAt: number | null
  unlockedAt: number | null
  sdkInfo: Record<string, unknown> | null
}>

/** The posture data of a session whose client has reported nothing yet. */
export const NO_POSTURE_DATA: PostureData = { version: 0, os: null, domain: null, mac: null, processes: {}, wokenAt: null, unlockedAt: null, sdkInfo: null }

/** A posture response, checked: one change to a session's posture data. */
export type PostureResponse =
  | { typeId: 'OS'; id: string; type: string; version: string; build: string }
  | { typeId: 'DOMAIN'; id: string; domain: string }
  | { typeId: 'MAC'; id: string; macAddresses: string[] }
  | { typeId: 'PROCESS'; id: string; path: string; isRunning: boolean; hash: string; signerFingerprints: string[] }
  | { typeId: 'ENDPOINT_STATE'; id: string; woken: boolean; unlocked: boolean }

/** The MFA state of an API session that the MFA check reads (contract 2 of issue 11). */
export interface SessionMfaState {
  isMfaComplete: boolean
  /** Epoch ms of the last successful TOTP or recovery code on the session; null when none. */
  mfaCompletedAt: number | null
}

/** The outcome of one posture check for one session. */
export interface CheckResult {
  isPassing: boolean
  /** Seconds; -1 when the check has no timeout. */
  timeout: number
  /** Seconds left before the check times out; -1 when it has none, 0 once timed out. */
  timeoutRemaining: number
  /** When the check times out (epoch ms), or null. */
  timeoutAt: number | null
  /** What failed, as the failed-service-request shape wants it (`actualValue`, `expectedValue`, ...). */
  failure: Record<string, unknown> | null
}

/** A refused service session request, recorded per identity (volatile, bounded). */
export type FailedServiceRequest = DeepReadonly<{
  apiSessionId: string
  serviceId: string
  serviceName: string
  sessionType: 'Dial' | 'Bind'
  when: number
  policyFailures: { policyId: string; policyName: string; checks: Record<string, unknown>[] }[]
}>
