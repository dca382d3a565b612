/**
 * Identities as stored: the members most identities hold at their default value (no external id, the default auth
 * policy, empty hosting maps, never disabled, ...) are left out of the stored record and put back when it is read.
 * A stored identity is ~150 bytes of JSON instead of ~450: at 100,000 identities the start-up scan parses a third of
 * the text, and the file is ~40 MB smaller. Reading fills in exactly what writing left out, so a record reads back
 * equal to what was written (members left out as empty maps come back as the one shared empty object), and a record
 * written before (every member present) reads as it is. Members unknown here are kept as they are.
 */
import { shareEmpty } from '../../lib/shared-values.ts'
import type { Identity } from './identity-types.ts'

/** The members that are left out when they hold their default (empty maps: any empty object). */
const DEFAULTS = {
  typeId: 'Default',
  isAdmin: false,
  isDefaultAdmin: false,
  externalId: null,
  authPolicyId: 'default',
  appData: null,
  tags: {},
  defaultHostingCost: 0,
  defaultHostingPrecedence: 'default',
  serviceHostingCosts: {},
  serviceHostingPrecedences: {},
  envInfo: {},
  sdkInfo: {},
  disabledAt: null,
  disabledUntil: null,
} as const satisfies Partial<Record<keyof Identity, unknown>>

type Stored = Record<string, unknown>

const isEmptyMap = (v: unknown): boolean => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  for (const k in v) if (Object.hasOwn(v, k)) return false
  return true
}

function isDefault(key: string, value: unknown): boolean {
  if (!Object.hasOwn(DEFAULTS, key)) return false
  const d = DEFAULTS[key as keyof typeof DEFAULTS]
  return typeof d === 'object' && d !== null ? isEmptyMap(value) : value === d
}

/** The record to store: `identity` without the members that hold their default. */
export function toStoredIdentity(identity: Identity): Stored {
  const out: Stored = {}
  for (const [k, v] of Object.entries(identity)) if (!isDefault(k, v)) out[k] = v
  return out
}

/**
 * The identity a stored record holds: the members left out put back (empty maps as the one shared empty object), the
 * rest as stored (a member stored as null stays null).
 */
export function fromStoredIdentity(r: Stored): Identity {
  const or = <T>(v: unknown, d: T) => (v === undefined ? d : v)
  const out: Stored = {
    id: r.id,
    name: r.name,
    typeId: or(r.typeId, DEFAULTS.typeId),
    isAdmin: or(r.isAdmin, DEFAULTS.isAdmin),
    isDefaultAdmin: or(r.isDefaultAdmin, DEFAULTS.isDefaultAdmin),
    roleAttributes: r.roleAttributes,
    externalId: or(r.externalId, DEFAULTS.externalId),
    authPolicyId: or(r.authPolicyId, DEFAULTS.authPolicyId),
    appData: or(r.appData, DEFAULTS.appData),
    tags: or(r.tags, EMPTY),
    defaultHostingCost: or(r.defaultHostingCost, DEFAULTS.defaultHostingCost),
    defaultHostingPrecedence: or(r.defaultHostingPrecedence, DEFAULTS.defaultHostingPrecedence),
    serviceHostingCosts: or(r.serviceHostingCosts, EMPTY),
    serviceHostingPrecedences: or(r.serviceHostingPrecedences, EMPTY),
    envInfo: or(r.envInfo, EMPTY),
    sdkInfo: or(r.sdkInfo, EMPTY),
    disabledAt: or(r.disabledAt, DEFAULTS.disabledAt),
    disabledUntil: or(r.disabledUntil, DEFAULTS.disabledUntil),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  }
  // members not named above (isRouterIdentity, or newer ones) as they are
  for (const k in r) if (!(k in out)) out[k] = r[k]
  return out as Identity
}

const EMPTY = shareEmpty({})
