/** Management API: enrollments (list, create, get, delete, refresh) and an identity's enrollments. Admin only. */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { Enrollment } from '../../../domain/enrollment/enrollment-types.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { createEnrollment, refreshEnrollment } from '../../../flows/enroll/enroll-admin.ts'
import type { EnrollmentMethodRegistry } from '../../../flows/enroll/enroll-method.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { EnrollmentCreate, EnrollmentDetail, EnrollmentRefresh } from '../../../../schemas/enrollment.ts'
import { created, ok, okEmpty, selfLink } from '../../http-envelope.ts'
import { respondList, type ListSpec } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { ENROLLMENT_SYMBOLS, toEnrollmentDetail, toEnrollmentRow } from '../../mappers/enrollment-mapper.ts'
import { changeOf } from '../route-change.ts'

const ROUTES = {
  list: '/enrollments',
  item: '/enrollments/:id',
  refresh: '/enrollments/:id/refresh',
  ofIdentity: '/identities/:id/enrollments',
} as const

export interface EnrollmentRouteDeps {
  identities: IdentityActor
  enrollments: EnrollmentMethodRegistry
  clock: Clock
}

export function enrollmentRoutes(deps: EnrollmentRouteDeps): RouteDef[] {
  const s = () => deps.identities.snapshot()
  const view = (e: Enrollment) => toEnrollmentDetail(e, s().identity(e.identityId)?.name ?? '')
  const listing = (candidates: () => Iterable<Enrollment>): ListSpec<Enrollment> => ({
    symbols: ENROLLMENT_SYMBOLS,
    candidates,
    toRow: toEnrollmentRow,
    toView: view,
  })
  const find = (id: string): Enrollment => {
    const e = s().enrollments.get(id)
    if (!e) throw ApiError.notFound()
    return e
  }
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'Enrollment', summary: 'List outstanding enrollments',
      query: ListQuery, response: EnrollmentDetail,
      handle: (ctx) => respondList(ctx.query, listing(() => s().enrollments.values())),
    }),
    route({
      method: 'POST', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'Enrollment', summary: 'Create an enrollment for an identity',
      body: EnrollmentCreate, successStatus: 201,
      handle: async (ctx) => {
        const { id } = await createEnrollment(deps, ctx.body, changeOf(ctx))
        return created('enrollments', id)
      },
    }),
    route({
      method: 'GET', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Enrollment', summary: 'Get an enrollment',
      response: EnrollmentDetail,
      handle: (ctx) => ok(view(find(ctx.params.id))),
    }),
    route({
      method: 'DELETE', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Enrollment', summary: 'Delete an enrollment',
      handle: async (ctx) => {
        await deps.identities.ask({ type: 'enrollment.delete', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
    route({
      method: 'POST', path: ROUTES.refresh, apis: ['management'], access: 'admin', tag: 'Enrollment',
      summary: 'Give an enrollment a new token, JWT and expiry (the old token stops working)', body: EnrollmentRefresh,
      handle: async (ctx) => {
        await refreshEnrollment(deps, ctx.params.id, ctx.body.expiresAt, changeOf(ctx))
        // the spec answers the create envelope, with status 200
        return ok({ _links: selfLink('enrollments', ctx.params.id), id: ctx.params.id })
      },
    }),
    route({
      method: 'GET', path: ROUTES.ofIdentity, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'List the enrollments of an identity',
      query: ListQuery, response: EnrollmentDetail,
      handle: (ctx) => {
        const identity = s().identity(ctx.params.id)
        if (!identity) throw ApiError.notFound()
        return respondList(ctx.query, listing(() => [...s().enrollmentsOf(identity.id)]))
      },
    }),
  ]
}
