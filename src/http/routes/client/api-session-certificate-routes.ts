/**
 * Client API: the certificates of the caller's API session (list, create from a CSR, get, delete). Another session's
 * certificate is 404, as in the real controller; issuing is flows/sessions/session-certificate.ts.
 */
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { ApiSessionCertificate } from '../../../domain/session/session-types.ts'
import type { SessionCertificates } from '../../../flows/sessions/session-certificate.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { ApiSessionCertificateCreate, ApiSessionCertificateCreated, ApiSessionCertificateDetail } from '../../../../schemas/api-session.ts'
import { json, ok, okEmpty, selfLink } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import {
  API_SESSION_CERTIFICATE_SYMBOLS,
  API_SESSION_CERTIFICATES_PATH,
  toApiSessionCertificateDetail,
  toApiSessionCertificateRow,
} from '../../mappers/api-session-certificate-mapper.ts'
import { changeOf } from '../route-change.ts'

const ROUTES = { list: '/current-api-session/certificates', item: '/current-api-session/certificates/:id' } as const

export function apiSessionCertificateRoutes(deps: { sessions: SessionRegistryActor; sessionCertificates: SessionCertificates }): RouteDef[] {
  const common = { apis: ['client' as const], access: 'session' as const, tag: 'Current API Session' }
  const own = (ctx: RouteCtx<unknown, unknown>): ApiSessionCertificate => {
    const c = deps.sessions.snapshot().sessionCertificates.get(ctx.params.id!)
    if (!c || c.apiSessionId !== ctx.auth.session.id) throw ApiError.notFound()
    return c
  }
  return [
    route({
      ...common, method: 'GET', path: ROUTES.list, summary: 'The certificates of the caller\'s API session',
      query: ListQuery, response: ApiSessionCertificateDetail,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: API_SESSION_CERTIFICATE_SYMBOLS,
          presortedById: true,
          candidates: () => deps.sessions.snapshot().sessionCertificatesOf(ctx.auth.session.id),
          toRow: toApiSessionCertificateRow,
          toView: toApiSessionCertificateDetail,
        }),
    }),
    route({
      ...common, method: 'POST', path: ROUTES.list, summary: 'A short-lived client certificate for the caller\'s API session, from a CSR',
      body: ApiSessionCertificateCreate, response: ApiSessionCertificateCreated, successStatus: 201,
      handle: async (ctx) => {
        const { certificate, cas } = await deps.sessionCertificates.create(ctx.auth.session, ctx.body.csr, changeOf(ctx))
        const data = { _links: selfLink(API_SESSION_CERTIFICATES_PATH, certificate.id), id: certificate.id, certificate: certificate.certPem, cas }
        return json(201, { data, meta: {} })
      },
    }),
    route({
      ...common, method: 'GET', path: ROUTES.item, summary: 'One certificate of the caller\'s API session',
      response: ApiSessionCertificateDetail,
      handle: (ctx) => ok(toApiSessionCertificateDetail(own(ctx))),
    }),
    route({
      ...common, method: 'DELETE', path: ROUTES.item, summary: 'Delete a certificate of the caller\'s API session: it no longer logs in',
      handle: async (ctx) => {
        await deps.sessions.ask({ type: 'apiSessionCert.delete', id: own(ctx).id, apiSessionId: ctx.auth.session.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
  ]
}
