/**
 * Controller settings wire shapes: the settings (`oidc` lists), create, put, patch, the detail and the effective view.
 * @see edge-api management.yml definitions controllerSettings, controllerSettingCreate, controllerSettingUpdate,
 *   controllerSettingPatch, controllerSettingDetail, controllerSettingEffective
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { BaseEntity, Tags } from './common.ts'

/** A redirect or post-logout URI pattern (`*` matches a run of characters; see docs/api-users/oidc.md). */
const UriPattern = Type.String({ minLength: 1, maxLength: 2048 })
const UriPatterns = Type.Array(UriPattern, { maxItems: 100 })
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const opt = Type.Optional

/** The settings in a write: a list null clears it (an override then stops overriding it). */
const OidcInput = Type.Object({ redirectUris: opt(nullable(UriPatterns)), postLogoutUris: opt(nullable(UriPatterns)) })

export const ControllerSettingCreate = Type.Object({
  controllerId: Type.String({ minLength: 1, maxLength: 255 }),
  oidc: opt(nullable(OidcInput)),
  tags: opt(Tags),
})

/** PUT: every member; one absent is cleared. */
export const ControllerSettingUpdate = Type.Object({ oidc: opt(nullable(OidcInput)), tags: opt(Tags) })

/** PATCH: the members given; one absent is left as it is. */
export const ControllerSettingPatch = ControllerSettingUpdate

/** The settings as answers show them: the lists a record sets (every list in `global` and in an effective view). */
export const ControllerSettings = Type.Object({
  oidc: Type.Object({ redirectUris: opt(Type.Array(Type.String())), postLogoutUris: opt(Type.Array(Type.String())) }),
})

export const ControllerSettingDetail = Type.Object({ ...BaseEntity, ...ControllerSettings.properties })

/** `effective`: what the controller applies; `instance`: its override (global's own settings for `global`), absent without one. */
export const ControllerSettingEffective = Type.Object({
  ...BaseEntity,
  effective: ControllerSettings,
  instance: opt(ControllerSettings),
})
