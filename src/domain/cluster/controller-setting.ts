/**
 * Controller settings (`/controller-settings`): values the controllers of a network share, stored and replicated
 * like any other record, with a per-node override. Pure records, the merge and the checks; the controllers actor
 * stores them.
 * - `global` always exists (made at the first start, seeded from the config file's OIDC lists, else the real
 *   controller's defaults) and can never be deleted: 400 ENTITY_CAN_NOT_BE_DELETED
 * - an instance override is keyed by the id of a controller of the cluster (`GET /controllers`): one per node; `global`
 *   and `any` are no controller's id; an id no node has, or one that has an override already, is 400
 *   COULD_NOT_VALIDATE on `controllerId` (the real controller answers 500 for all three)
 * - the effective settings of a node are `global` with each list the node's override sets in its place, list by list
 *   (an override that sets only `redirectUris` keeps the global `postLogoutUris`)
 * - a write that clears a list (a put without it, a null): `global` then holds an empty list; an override stops
 *   overriding it
 * - an override goes with its node (`controller.remove`)
 * @see edge-api management.yml controllerSettings, controllerSettingEffective; openziti/ziti branch
 *   add.central.config.2 controller/db/controller_setting_store.go
 */
import { ApiError } from '../../errors/api-error.ts'
import type { DeepReadonly } from '../../lib/deep-readonly.ts'

/** The id of the settings every controller starts from. */
export const GLOBAL_SETTINGS_ID = 'global'
/** The real controller's wildcard of setting listeners: never a record's id. */
export const ANY_CONTROLLER_ID = 'any'

/** The OIDC part: the redirect URI patterns `authorize` accepts and where `end_session` may send the browser. */
export interface OidcUriSettings {
  redirectUris?: string[]
  postLogoutUris?: string[]
}

/** The settings a record holds: in `global` every list is set, in an override only those it overrides. */
export interface SettingValues {
  oidc: OidcUriSettings
}

/** A stored controller setting: `global`, or the override of the controller whose id it has. */
export type ControllerSetting = DeepReadonly<{
  id: string
  oidc: OidcUriSettings
  tags: Record<string, unknown>
  createdAt: number
  updatedAt: number
}>

/** The settings a controller applies: every list set. */
export type EffectiveSettings = DeepReadonly<{ oidc: Required<OidcUriSettings> }>

/** A write's settings: a list absent is left as it is on a patch (cleared on a put), null clears it. */
export interface ControllerSettingInput {
  oidc?: { redirectUris?: string[] | null; postLogoutUris?: string[] | null } | null
  tags?: Record<string, unknown> | null
}

const OIDC_LISTS = ['redirectUris', 'postLogoutUris'] as const

/** The effective settings of a controller: `global` with the lists its override sets in their place. */
export function effectiveSettings(global: ControllerSetting, instance: ControllerSetting | undefined): EffectiveSettings {
  const pick = (name: (typeof OIDC_LISTS)[number]) => instance?.oidc[name] ?? global.oidc[name] ?? []
  return { oidc: { redirectUris: pick('redirectUris'), postLogoutUris: pick('postLogoutUris') } }
}

/** The `global` record made at the first start, or undefined when it exists. */
export function decideGlobalSeed(existing: ControllerSetting | undefined, seed: Required<OidcUriSettings>, now: number): ControllerSetting | undefined {
  if (existing) return undefined
  return { id: GLOBAL_SETTINGS_ID, oidc: { redirectUris: [...seed.redirectUris], postLogoutUris: [...seed.postLogoutUris] }, tags: {}, createdAt: now, updatedAt: now }
}

/** A new override of the controller `controllerId`; `isController` says whether a node of the cluster has that id. */
export function decideSettingCreate(
  existing: ControllerSetting | undefined,
  controllerId: string,
  isController: boolean,
  input: ControllerSettingInput,
  now: number,
): ControllerSetting {
  if (controllerId === GLOBAL_SETTINGS_ID || controllerId === ANY_CONTROLLER_ID) {
    throw ApiError.invalidField('controllerId', `'${controllerId}' is not the id of a controller; change the global settings at /controller-settings/global/effective`, controllerId)
  }
  if (!isController) throw ApiError.invalidField('controllerId', 'no controller of the cluster has this id (GET /controllers lists them)', controllerId)
  if (existing) throw ApiError.invalidField('controllerId', 'this controller has settings already; change them at /controller-settings/{id}/effective', controllerId)
  return { id: controllerId, oidc: overridden({}, input, true, false), tags: input.tags ?? {}, createdAt: now, updatedAt: now }
}

/** The record after a put (`replace`) or a patch; 404 when there is none. */
export function decideSettingUpdate(existing: ControllerSetting | undefined, input: ControllerSettingInput, replace: boolean, now: number): ControllerSetting {
  if (!existing) throw ApiError.notFound()
  const tags = input.tags !== undefined ? (input.tags ?? {}) : replace ? {} : existing.tags
  return { ...existing, oidc: overridden(existing.oidc, input, replace, existing.id === GLOBAL_SETTINGS_ID), tags, updatedAt: now }
}

/** A delete: 404 for none, and `global` stays. */
export function decideSettingDelete(existing: ControllerSetting | undefined): ControllerSetting {
  if (!existing) throw ApiError.notFound()
  if (existing.id === GLOBAL_SETTINGS_ID) throw ApiError.withMessage('ENTITY_CAN_NOT_BE_DELETED', 'the global settings can not be deleted, only updated')
  return existing
}

/**
 * The OIDC lists after a write: a list given replaces; absent (or `oidc` null) stays on a patch; cleared (null, or
 * absent on a put) is [] in global, not set in an override.
 */
function overridden(current: DeepReadonly<OidcUriSettings>, input: ControllerSettingInput, replace: boolean, isGlobal: boolean): OidcUriSettings {
  const out: OidcUriSettings = {}
  for (const name of OIDC_LISTS) {
    const given = input.oidc?.[name]
    const kept = current[name]
    const value = Array.isArray(given) ? [...given] : given === null || replace ? undefined : kept && [...kept]
    if (value !== undefined) out[name] = value
    else if (isGlobal) out[name] = []
  }
  return out
}
