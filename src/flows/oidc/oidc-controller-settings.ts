/**
 * The OIDC lists of the controller settings (`/controller-settings`, domain/cluster/controller-setting.ts): the
 * redirect URI patterns `authorize` accepts and the post-logout patterns of `end_session` are this node's effective
 * settings, read at each request, so a write on any node of a cluster applies on every node as soon as it applied
 * the write.
 * - the first start of a data directory (or of a cluster) makes the `global` settings: the config file's
 *   `oidc.redirectURIs` / `oidc.postLogoutURIs` when it names them, else the real controller's defaults
 * - afterwards the settings decide: lists in the config file that differ from them are noted at start and not used
 * - a node reads `global` with its own override (a cluster node's id is its node name; a single node has none)
 */
import type { ControllersActor } from '../../actors/controllers/controllers-actor.ts'
import type { EffectiveSettings } from '../../domain/cluster/controller-setting.ts'
import { DEFAULT_POST_LOGOUT_URIS, DEFAULT_REDIRECT_URIS, type OidcSettings } from './oidc-types.ts'

type UriLists = Pick<OidcSettings, 'redirectUris' | 'postLogoutUris'>

/**
 * Makes the `global` settings when there are none, from the config file's lists (`configured`, as given: undefined
 * members are unset) or the defaults; notes configured lists the settings do not hold.
 */
export async function seedControllerSettings(deps: {
  controllers: ControllersActor
  configured?: Partial<UriLists>
  /** This node's id in the cluster (its node name); absent on a single node. */
  nodeId?: string
  log: (line: string) => void
}): Promise<void> {
  const given = deps.configured ?? {}
  if (deps.controllers.snapshot().effectiveSettings(deps.nodeId) === undefined) {
    const oidc = { redirectUris: [...(given.redirectUris ?? DEFAULT_REDIRECT_URIS)], postLogoutUris: [...(given.postLogoutUris ?? DEFAULT_POST_LOGOUT_URIS)] }
    await deps.controllers.ask({ type: 'controllerSetting.seed', oidc, change: { author: 'system', source: 'system' } })
  }
  const effective = deps.controllers.snapshot().effectiveSettings(deps.nodeId)
  const differs = (name: keyof UriLists, key: string) => {
    const list = given[name]
    if (list === undefined || !effective) return
    const applied = effective.oidc[name]
    if (list.length === applied.length && list.every((v, i) => v === applied[i])) return
    deps.log(
      `note: oidc.${key} in the config differs from the controller settings, which decide: ${JSON.stringify(applied)} ` +
        `(GET /edge/management/v1/controller-settings/global/effective; change them there with PATCH)`,
    )
  }
  differs('redirectUris', 'redirectURIs')
  differs('postLogoutUris', 'postLogoutURIs')
}

/**
 * `base` with the redirect and post-logout lists read from the controller settings at each access (`effective`:
 * this node's effective settings; before `global` exists, the base lists).
 */
export function withControllerSettings(base: OidcSettings, effective: () => EffectiveSettings | undefined): OidcSettings {
  return {
    ...base,
    get redirectUris() {
      return effective()?.oidc.redirectUris ?? base.redirectUris
    },
    get postLogoutUris() {
      return effective()?.oidc.postLogoutUris ?? base.postLogoutUris
    },
  }
}
