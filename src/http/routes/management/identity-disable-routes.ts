/**
 * Management API: disabling and enabling identities (admin only). Disable ends the identity's API sessions at once
 * (flows/identity/identity-disable.ts); enable clears every disabled state (the seed's "clear disabled state").
 */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import { disableIdentity } from '../../../flows/identity/identity-disable.ts'
import { DisableParams } from '../../../../schemas/auth-policy.ts'
import { okEmpty } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { changeOf } from '../route-change.ts'

const ROUTES = { disable: '/identities/:id/disable', enable: '/identities/:id/enable' } as const

export function identityDisableRoutes(deps: { identities: IdentityActor; sessions: SessionRegistryActor }): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Identity' }
  return [
    route({
      ...common, method: 'POST', path: ROUTES.disable, body: DisableParams,
      summary: "Disable an identity for durationMinutes (0: until enabled); its API sessions end at once",
      handle: async (ctx) => {
        await disableIdentity(deps, ctx.params.id, ctx.body.durationMinutes, changeOf(ctx))
        return okEmpty()
      },
    }),
    route({
      ...common, method: 'POST', path: ROUTES.enable, summary: 'Clear every disabled state of an identity (and its failed-attempt count)',
      handle: async (ctx) => {
        await deps.identities.ask({ type: 'identity.enable', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
  ]
}
