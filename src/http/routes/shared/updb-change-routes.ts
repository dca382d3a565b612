/** PUT and PATCH of a username/password authenticator: one pair of routes, used by the admin and self-service paths. */
import type { TSchema } from '@sinclair/typebox'
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { Authenticator } from '../../../domain/identity/identity-types.ts'
import { updateUpdbAuthenticator, type UpdbChange } from '../../../flows/authenticate/auth-updb-authenticators.ts'
import type { AccessLevel } from '../../http-auth.ts'
import { okEmpty } from '../../http-envelope.ts'
import type { ApiName, RouteCtx, RouteDef } from '../../http-route.ts'
import { changeOf } from '../route-change.ts'

export function updbChangeRoutes(opts: {
  identities: IdentityActor
  path: string
  apis: readonly ApiName[]
  access: Exclude<AccessLevel, 'public'>
  tag: string
  subject: string
  bodies: { put: TSchema; patch: TSchema }
  find: (ctx: RouteCtx<unknown, unknown>) => Authenticator
}): RouteDef[] {
  const handle = (replace: boolean) => async (ctx: RouteCtx<UpdbChange>) => {
    await updateUpdbAuthenticator(opts.identities, opts.find(ctx), ctx.body, replace, changeOf(ctx))
    return okEmpty()
  }
  const common = { path: opts.path, apis: opts.apis, access: opts.access, tag: opts.tag }
  return [
    // the bodies' schemas guarantee the UpdbChange shape, so the records are built without route()'s inference
    { ...common, method: 'PUT', summary: `Set the username and password of ${opts.subject}`, body: opts.bodies.put, handle: handle(true) },
    { ...common, method: 'PATCH', summary: `Change the username or password of ${opts.subject}`, body: opts.bodies.patch, handle: handle(false) },
  ]
}
