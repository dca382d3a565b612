/**
 * Management API: controller settings (`/controller-settings`), admins only. The list and `GET /{id}` show the
 * stored records (`global` and the nodes' overrides); `GET /{id}/effective` what a controller applies; PUT, PATCH and
 * DELETE of `/{id}/effective` change or remove a record (the official spec puts them there). The controllers actor
 * owns the records and decides (domain/cluster/controller-setting.ts).
 * @see edge-api management.yml listControllerSettings ... deleteControllerSetting
 */
import type { ControllersActor } from '../../../actors/controllers/controllers-actor.ts'
import { GLOBAL_SETTINGS_ID, type ControllerSetting } from '../../../domain/cluster/controller-setting.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import {
  ControllerSettingCreate,
  ControllerSettingDetail,
  ControllerSettingEffective,
  ControllerSettingPatch,
  ControllerSettingUpdate,
} from '../../../../schemas/controller-setting.ts'
import { created, ok, okEmpty } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import {
  CONTROLLER_SETTING_SYMBOLS,
  toControllerSettingDetail,
  toControllerSettingEffective,
  toControllerSettingRow,
} from '../../mappers/controller-setting-mapper.ts'
import { changeOf } from '../route-change.ts'

const ROUTES = { list: '/controller-settings', item: '/controller-settings/:id', effective: '/controller-settings/:id/effective' } as const

export function controllerSettingRoutes(deps: { controllers: ControllersActor }): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Settings' }
  const settings = () => deps.controllers.snapshot().settings
  const found = (id: string): ControllerSetting => {
    const s = settings().get(id)
    if (!s) throw ApiError.notFound()
    return s
  }
  const update = (replace: boolean) => async (ctx: RouteCtx<typeof ControllerSettingUpdate.static>) => {
    await deps.controllers.ask({ type: 'controllerSetting.update', id: ctx.params.id, input: ctx.body, replace, change: changeOf(ctx) })
    return okEmpty()
  }
  return [
    route({
      ...common, method: 'GET', path: ROUTES.list, summary: 'List the global controller settings and the controllers\' overrides', query: ListQuery,
      response: ControllerSettingDetail,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: CONTROLLER_SETTING_SYMBOLS,
          presortedById: true,
          candidates: () => [...settings().values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
          toRow: toControllerSettingRow,
          toView: toControllerSettingDetail,
        }),
    }),
    route({
      ...common, method: 'POST', path: ROUTES.list, summary: 'Create the settings override of a controller of the cluster', body: ControllerSettingCreate,
      successStatus: 201,
      handle: async (ctx) => {
        const { controllerId, ...input } = ctx.body
        const { id } = await deps.controllers.ask({ type: 'controllerSetting.create', controllerId, input, change: changeOf(ctx) })
        return created('controller-settings', id)
      },
    }),
    route({
      ...common, method: 'GET', path: ROUTES.item, summary: 'Get the global settings or a controller\'s override', response: ControllerSettingDetail,
      handle: (ctx) => ok(toControllerSettingDetail(found(ctx.params.id))),
    }),
    route({
      ...common, method: 'GET', path: ROUTES.effective, summary: 'Get the settings a controller applies: the global ones with its override',
      response: ControllerSettingEffective,
      handle: (ctx) => {
        const id = ctx.params.id
        const reads = deps.controllers.snapshot()
        const instance = reads.settings.get(id)
        // a controller without an override applies the global settings; an id no controller has is 404
        const effective = instance || id === GLOBAL_SETTINGS_ID || reads.byId.has(id) ? reads.effectiveSettings(id) : undefined
        if (!effective) throw ApiError.notFound()
        return ok(toControllerSettingEffective(id, found(GLOBAL_SETTINGS_ID), id === GLOBAL_SETTINGS_ID ? undefined : instance, effective))
      },
    }),
    route({ ...common, method: 'PUT', path: ROUTES.effective, summary: 'Update every field of the global settings or of a controller\'s override', body: ControllerSettingUpdate, handle: update(true) }),
    route({ ...common, method: 'PATCH', path: ROUTES.effective, summary: 'Update the given fields of the global settings or of a controller\'s override', body: ControllerSettingPatch, handle: update(false) }),
    route({
      ...common, method: 'DELETE', path: ROUTES.effective, summary: 'Delete a controller\'s settings override (the global settings stay)',
      handle: async (ctx) => {
        await deps.controllers.ask({ type: 'controllerSetting.delete', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
  ]
}
