/**
 * Pure checks of posture checks and posture responses. Each throws ApiError (400 COULD_NOT_VALIDATE naming the field);
 * none mutates.
 * - typeId is one of OS, PROCESS, PROCESS_MULTI, DOMAIN, MAC, MFA, and cannot change after create
 * - create and put need the kind's fields: OS `operatingSystems` (at least one; `type` an osType, each version a valid
 *   semver range), PROCESS `process`, PROCESS_MULTI `semantic` and `processes` (at least one), DOMAIN `domains` and MAC
 *   `macAddresses` (at least one, none blank); MFA fields are optional (timeoutSeconds -1, flags false)
 * - patch changes only the kind fields given
 * - process: `osType` an osType, `path` not blank, `hashes` SHA-512 hex, signer fingerprints SHA-1 hex (both stored
 *   lowercase)
 * - MAC addresses: six hex octets, with `:`, `-` or no separators
 * - MFA `timeoutSeconds` an integer ≥ -1 (-1 and 0: no timeout)
 * - posture responses: the kind's fields (OS type and version, DOMAIN domain, MAC macAddresses, PROCESS path)
 */
import { ApiError } from '../../errors/api-error.ts'
import { decideSemantic } from '../policy/graph-decide.ts'
import {
  OS_TYPES,
  POSTURE_CHECK_TYPE_IDS,
  type OperatingSystemRule,
  type OsType,
  type PostureCheck,
  type PostureCheckSpec,
  type PostureCheckTypeId,
  type PostureResponse,
  type ProcessRule,
} from './posture-types.ts'
import { parseVersionRange } from './posture-version.ts'

type Opt<T> = T | null | undefined

/** Kind fields of a posture check as a request gives them (any subset). */
export interface PostureCheckKindInput {
  operatingSystems?: Opt<readonly { type?: string; versions?: Opt<readonly string[]> }[]>
  process?: Opt<ProcessInput & { signerFingerprint?: Opt<string> }>
  processes?: Opt<readonly (ProcessInput & { signerFingerprints?: Opt<readonly string[]> })[]>
  semantic?: Opt<string>
  domains?: Opt<readonly string[]>
  macAddresses?: Opt<readonly string[]>
  timeoutSeconds?: Opt<number>
  promptOnWake?: Opt<boolean>
  promptOnUnlock?: Opt<boolean>
  ignoreLegacyEndpoints?: Opt<boolean>
}
interface ProcessInput {
  osType?: string
  path?: string
  hashes?: Opt<readonly string[]>
}

/** A posture check type id, exactly as the enum spells it. */
export function decideTypeId(value: string | undefined): PostureCheckTypeId {
  const hit = POSTURE_CHECK_TYPE_IDS.find((t) => t === value)
  if (!hit) throw ApiError.invalidField('typeId', `typeId must be one of ${POSTURE_CHECK_TYPE_IDS.join(', ')}`, value ?? '')
  return hit
}

/**
 * The kind part of a posture check from a request. `prev` is the stored check (update), `replace` true for create and
 * put (every required kind field must be there), false for patch (absent fields keep their stored values).
 */
export function decidePostureCheckSpec(typeId: string | undefined, input: PostureCheckKindInput, prev: PostureCheck | undefined, replace: boolean): PostureCheckSpec {
  const type = typeId === undefined && prev ? prev.typeId : decideTypeId(typeId)
  if (prev && type !== prev.typeId) throw ApiError.invalidField('typeId', `the type of a posture check cannot change (it is ${prev.typeId})`, type)
  const stored = replace ? undefined : (prev as (PostureCheck & Record<string, unknown>) | undefined)
  const need = <T>(field: string, given: Opt<T>, fromStored: T | undefined): T => {
    if (given !== undefined && given !== null) return given
    if (fromStored !== undefined) return fromStored
    throw ApiError.invalidField(field, `${field} is required for a ${type} posture check`, null)
  }
  switch (type) {
    case 'OS': {
      const given = input.operatingSystems === undefined || input.operatingSystems === null ? undefined : input.operatingSystems.map((o, i) => decideOs(o, i))
      const operatingSystems = need('operatingSystems', given, stored?.typeId === 'OS' ? (stored.operatingSystems as OperatingSystemRule[]) : undefined)
      nonEmpty('operatingSystems', operatingSystems)
      return { typeId: 'OS', operatingSystems }
    }
    case 'PROCESS': {
      const p = input.process
      const given = p === undefined || p === null ? undefined : decideProcess('process', p, p.signerFingerprint ? [p.signerFingerprint] : [])
      return { typeId: 'PROCESS', process: need('process', given, stored?.typeId === 'PROCESS' ? (stored.process as ProcessRule) : undefined) }
    }
    case 'PROCESS_MULTI': {
      const s = stored?.typeId === 'PROCESS_MULTI' ? stored : undefined
      const semantic = input.semantic != null ? decideSemantic(input.semantic) : need('semantic', undefined, s?.semantic)
      const given = input.processes == null ? undefined : input.processes.map((p, i) => decideProcess(`processes[${i}]`, p, p.signerFingerprints ?? []))
      const processes = need('processes', given, s?.processes as ProcessRule[] | undefined)
      nonEmpty('processes', processes)
      return { typeId: 'PROCESS_MULTI', semantic, processes }
    }
    case 'DOMAIN': {
      const domains = need('domains', input.domains == null ? undefined : [...input.domains], stored?.typeId === 'DOMAIN' ? [...stored.domains] : undefined)
      nonEmpty('domains', domains)
      domains.forEach((d, i) => notBlank(`domains[${i}]`, d))
      return { typeId: 'DOMAIN', domains }
    }
    case 'MAC': {
      const macAddresses = need('macAddresses', input.macAddresses == null ? undefined : [...input.macAddresses], stored?.typeId === 'MAC' ? [...stored.macAddresses] : undefined)
      nonEmpty('macAddresses', macAddresses)
      macAddresses.forEach((m, i) => {
        if (normaliseMac(m) === undefined) throw ApiError.invalidField(`macAddresses[${i}]`, 'not a MAC address: six hex octets, separated by : or - or not at all', m)
      })
      return { typeId: 'MAC', macAddresses }
    }
    case 'MFA': {
      const s = stored?.typeId === 'MFA' ? stored : undefined
      const timeoutSeconds = input.timeoutSeconds ?? s?.timeoutSeconds ?? -1
      if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < -1) {
        throw ApiError.invalidField('timeoutSeconds', 'timeoutSeconds must be an integer of at least -1 (-1 or 0: no timeout)', timeoutSeconds)
      }
      return {
        typeId: 'MFA',
        timeoutSeconds,
        promptOnWake: input.promptOnWake ?? s?.promptOnWake ?? false,
        promptOnUnlock: input.promptOnUnlock ?? s?.promptOnUnlock ?? false,
        ignoreLegacyEndpoints: input.ignoreLegacyEndpoints ?? s?.ignoreLegacyEndpoints ?? false,
      }
    }
  }
}

function nonEmpty(field: string, list: readonly unknown[]): void {
  if (list.length === 0) throw ApiError.invalidField(field, `${field} must have at least one entry`, [])
}

function notBlank(field: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw ApiError.invalidField(field, `${field} must not be blank`, value ?? '')
  return value
}

function decideOsType(field: string, value: string | undefined): OsType {
  const hit = OS_TYPES.find((t) => t === value)
  if (!hit) throw ApiError.invalidField(field, `${field} must be one of ${OS_TYPES.join(', ')}`, value ?? '')
  return hit
}

function decideOs(o: { type?: string; versions?: Opt<readonly string[]> }, i: number): OperatingSystemRule {
  const type = decideOsType(`operatingSystems[${i}].type`, o.type)
  const versions = [...(o.versions ?? [])]
  versions.forEach((v, j) => {
    if (parseVersionRange(v) === undefined) {
      throw ApiError.invalidField(`operatingSystems[${i}].versions[${j}]`, 'not a version range such as 10.0.19041, >=5.4.0 <6 or >=11 || =10.15', v)
    }
  })
  return { type, versions }
}

const SHA512 = /^[0-9a-f]{128}$/
const SHA1 = /^[0-9a-f]{40}$/

function decideProcess(field: string, p: ProcessInput, fingerprints: readonly string[]): ProcessRule {
  const hashes = (p.hashes ?? []).map((h, i) => {
    const v = String(h).toLowerCase()
    if (!SHA512.test(v)) throw ApiError.invalidField(`${field}.hashes[${i}]`, 'a hash is the SHA-512 of the binary: 128 hex digits', h)
    return v
  })
  const signerFingerprints = fingerprints.map((f, i) => {
    const v = String(f).toLowerCase().replaceAll(':', '')
    if (!SHA1.test(v)) throw ApiError.invalidField(`${field}.signerFingerprint${fingerprints.length > 1 || field.startsWith('processes') ? `s[${i}]` : ''}`, 'a signer fingerprint is the SHA-1 of the signing certificate: 40 hex digits', f)
    return v
  })
  return { osType: decideOsType(`${field}.osType`, p.osType), path: notBlank(`${field}.path`, p.path), hashes, signerFingerprints }
}

/** A MAC address as 12 lowercase hex digits, or undefined when it is not one. */
export function normaliseMac(mac: string): string | undefined {
  const v = String(mac).trim().toLowerCase()
  if (!/^([0-9a-f]{2}([:-]?)){5}[0-9a-f]{2}$/.test(v)) return undefined
  const flat = v.replace(/[:-]/g, '')
  return flat.length === 12 ? flat : undefined
}

/** Fields of a posture response as a request gives them. */
export interface PostureResponseInput {
  id: string
  typeId: string
  type?: string
  version?: string
  build?: string
  domain?: string
  macAddresses?: readonly string[]
  path?: string
  isRunning?: boolean
  hash?: string
  signerFingerprints?: readonly string[]
  woken?: boolean
  unlocked?: boolean
}

const RESPONSE_TYPES = ['OS', 'DOMAIN', 'MAC', 'PROCESS', 'ENDPOINT_STATE'] as const

/** A posture response from a request, checked; `at` names the element of a bulk request in field names. */
export function decidePostureResponse(r: PostureResponseInput, at = ''): PostureResponse {
  const f = (name: string) => `${at}${name}`
  const need = (name: string, v: string | undefined) => {
    if (v === undefined) throw ApiError.invalidField(f(name), `${name} is required for a ${r.typeId} posture response`, null)
    return v
  }
  switch (r.typeId) {
    case 'OS':
      return { typeId: 'OS', id: r.id, type: need('type', r.type), version: need('version', r.version), build: r.build ?? '' }
    case 'DOMAIN':
      return { typeId: 'DOMAIN', id: r.id, domain: need('domain', r.domain) }
    case 'MAC':
      if (r.macAddresses === undefined) throw ApiError.invalidField(f('macAddresses'), 'macAddresses is required for a MAC posture response', null)
      return { typeId: 'MAC', id: r.id, macAddresses: [...r.macAddresses] }
    case 'PROCESS':
      return {
        typeId: 'PROCESS', id: r.id, path: need('path', r.path), isRunning: r.isRunning ?? false,
        hash: (r.hash ?? '').toLowerCase(), signerFingerprints: (r.signerFingerprints ?? []).map((s) => s.toLowerCase().replaceAll(':', '')),
      }
    case 'ENDPOINT_STATE':
      return { typeId: 'ENDPOINT_STATE', id: r.id, woken: r.woken ?? false, unlocked: r.unlocked ?? false }
    default:
      throw ApiError.invalidField(f('typeId'), `typeId of a posture response must be one of ${RESPONSE_TYPES.join(', ')}`, r.typeId)
  }
}
