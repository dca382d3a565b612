/**
 * Controller settings records → wire details, effective views and filter rows. The only place that renames their
 * fields. A record shows the lists it sets (every list in `global`); an effective view shows every list.
 */
import { GLOBAL_SETTINGS_ID, type ControllerSetting, type EffectiveSettings } from '../../domain/cluster/controller-setting.ts'
import { BASE_SYMBOLS, toBaseEntity } from './common-mapper.ts'

const ENTITY = 'controller-settings'

/** The fields the filter language knows on controller settings. */
export const CONTROLLER_SETTING_SYMBOLS = { ...BASE_SYMBOLS } as const

function settingsOf(s: { oidc: ControllerSetting['oidc'] }) {
  const oidc: { redirectUris?: string[]; postLogoutUris?: string[] } = {}
  if (s.oidc.redirectUris) oidc.redirectUris = [...s.oidc.redirectUris]
  if (s.oidc.postLogoutUris) oidc.postLogoutUris = [...s.oidc.postLogoutUris]
  return { oidc }
}

/** The spec's controllerSettingDetail. */
export function toControllerSettingDetail(s: ControllerSetting) {
  return { ...toBaseEntity(ENTITY, s), ...settingsOf(s) }
}

/**
 * The spec's controllerSettingEffective of the controller `id`: its id, the times and tags of its override (of
 * `global` when it has none), what it applies, and its override (global's own settings for `global`).
 */
export function toControllerSettingEffective(id: string, global: ControllerSetting, instance: ControllerSetting | undefined, effective: EffectiveSettings) {
  const own = instance ?? global
  const shown = id === GLOBAL_SETTINGS_ID ? global : instance
  return {
    ...toBaseEntity(ENTITY, { ...own, id }),
    effective: settingsOf(effective),
    ...(shown ? { instance: settingsOf(shown) } : {}),
  }
}

/** The row the filter language sees (see CONTROLLER_SETTING_SYMBOLS): `global` is the system's. */
export function toControllerSettingRow(s: ControllerSetting): Record<string, unknown> {
  return { id: s.id, createdAt: s.createdAt, updatedAt: s.updatedAt, tags: s.tags, isSystem: s.id === GLOBAL_SETTINGS_ID }
}
