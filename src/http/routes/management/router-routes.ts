/**
 * Management API: routers, the fabric view. Lists every router, edge ones included; creating one makes a fabric-only
 * router. Writes touch only the fabric fields, so an edge router keeps its edge fields when changed here.
 * `/transit-routers`, the real controller's older name, still in the spec, serves the same operations.
 */
import type { RouterFields } from '../../../actors/policy-graph/policy-graph-messages.ts'
import { RouterCreate, RouterDetail, RouterPatch, RouterUpdate } from '../../../../schemas/router.ts'
import type { RouteDef } from '../../http-route.ts'
import { changeOf } from '../route-change.ts'
import { crudRoutes, presentFields, routerListing } from './crud-routes.ts'
import type { RouterRouteDeps } from './edge-router-routes.ts'
import { createRouter, deleteRouter, updateRouter } from '../../../flows/routers/router-identity.ts'
import { decideNoRouterBootstrap } from '../../../domain/policy/graph-decide.ts'

const ROUTES = { list: '/routers', item: '/routers/:id' } as const
const TRANSIT_ROUTES = { list: '/transit-routers', item: '/transit-routers/:id' } as const

const FIELDS = ['name', 'cost', 'noTraversal', 'disabled', 'tags'] as const
/** What a put resets the absent fabric fields to. */
const FABRIC_DEFAULTS: RouterFields = { cost: 0, noTraversal: false, disabled: false, tags: {} }

/** Wire body → the fabric fields it may change (see decideNoRouterBootstrap for configs and listeners). */
function fabricFields(body: object): RouterFields {
  const b = body as { configs?: string[] | null; ctrlChanListeners?: Record<string, unknown> | null }
  decideNoRouterBootstrap(b.configs, b.ctrlChanListeners)
  return presentFields<RouterFields>(body, FIELDS)
}

export function routerRoutes(deps: RouterRouteDeps): RouteDef[] {
  return [ROUTES, TRANSIT_ROUTES].flatMap((routes) => crudRoutes({
    tag: 'Router', routes, entity: 'routers', noun: routes === ROUTES ? 'router' : 'router (older path)', detail: RouterDetail,
    listing: () => routerListing(deps),
    bodies: { create: RouterCreate, put: RouterUpdate, patch: RouterPatch },
    create: (ctx) => createRouter(deps, fabricFields(ctx.body), false, changeOf(ctx)),
    update: async (ctx, replace) => {
      const given = fabricFields(ctx.body)
      // a put resets only the fabric fields: the edge fields of an edge router are not this view's to clear
      const input = replace ? { ...FABRIC_DEFAULTS, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null)) } : given
      await updateRouter(deps, ctx.params.id, input, false, changeOf(ctx))
    },
    remove: (ctx) => deleteRouter(deps, ctx.params.id, changeOf(ctx)),
  }))
}
