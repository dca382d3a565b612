/**
 * Management API: third-party CAs (`/cas`). Admin only. CRUD through the shared plumbing (the certificate is given
 * once, on create), the CA's enrollment JWT as `application/jwt`, and verification with a text/plain PEM body.
 */
import type { CaActor } from '../../../actors/ca/ca-actor.ts'
import type { ThirdPartyCaFields } from '../../../actors/ca/ca-messages.ts'
import type { ThirdPartyCa } from '../../../domain/ca/ca-types.ts'
import { caEnrollmentJwt } from '../../../flows/ca/ca-enrollment-jwt.ts'
import { verifyThirdPartyCa } from '../../../flows/ca/ca-verify.ts'
import type { Clock } from '../../../lib/clock.ts'
import { CaCreate, CaDetail, CaPatch, CaUpdate, CaVerifyBody } from '../../../../schemas/ca.ts'
import { okEmpty } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { CA_SYMBOLS, toCaDetail, toCaRow } from '../../mappers/ca-mapper.ts'
import { changeOf } from '../route-change.ts'
import { crudRoutes, tableListing, type Listing } from './crud-routes.ts'

const ROUTES = { list: '/cas', item: '/cas/:id', jwt: '/cas/:id/jwt', verify: '/cas/:id/verify' } as const

export interface CaRouteDeps {
  ca: CaActor
  clock: Clock
  /** `https://host:port` of the controller: the issuer of the CA enrollment JWT. */
  issuer(): string
}

type CaInput = {
  name?: string | null
  isAuthEnabled?: boolean | null
  isAutoCaEnrollmentEnabled?: boolean | null
  isOttCaEnrollmentEnabled?: boolean | null
  identityRoles?: string[] | null
  identityNameFormat?: string | null
  externalIdClaim?: ThirdPartyCaFields['externalIdClaim']
  tags?: ThirdPartyCaFields['tags']
}

/** Wire body → actor fields; a null scalar (PATCH) leaves the field as it is. */
function toFields(b: CaInput): ThirdPartyCaFields {
  const f: ThirdPartyCaFields = {}
  if (b.name != null) f.name = b.name
  if (b.isAuthEnabled != null) f.isAuthEnabled = b.isAuthEnabled
  if (b.isAutoCaEnrollmentEnabled != null) f.isAutoCaEnrollmentEnabled = b.isAutoCaEnrollmentEnabled
  if (b.isOttCaEnrollmentEnabled != null) f.isOttCaEnrollmentEnabled = b.isOttCaEnrollmentEnabled
  if (b.identityRoles !== undefined) f.identityRoles = b.identityRoles
  if (b.identityNameFormat != null) f.identityNameFormat = b.identityNameFormat
  if (b.externalIdClaim !== undefined) f.externalIdClaim = b.externalIdClaim
  if (b.tags !== undefined) f.tags = b.tags
  return f
}

/** CAs as the Management API lists them. */
function caListing(deps: Pick<CaRouteDeps, 'ca'>): Listing<ThirdPartyCa> {
  return tableListing(deps.ca.snapshot().cas, { symbols: CA_SYMBOLS, indexed: ['id', 'name'], toRow: toCaRow, toView: toCaDetail })
}

export function caRoutes(deps: CaRouteDeps): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Certificate Authority' }
  return [
    ...crudRoutes({
      tag: common.tag,
      routes: ROUTES,
      entity: 'cas',
      noun: 'CA',
      detail: CaDetail,
      listing: () => caListing(deps),
      bodies: { create: CaCreate, put: CaUpdate, patch: CaPatch },
      create: (ctx) =>
        deps.ca.ask({ type: 'ca.create', input: { ...toFields(ctx.body), name: ctx.body.name, certPem: ctx.body.certPem }, change: changeOf(ctx) }),
      update: async (ctx, replace) => {
        await deps.ca.ask({ type: 'ca.update', id: ctx.params.id, input: toFields(ctx.body), replace, change: changeOf(ctx) })
      },
      remove: async (ctx) => {
        await deps.ca.ask({ type: 'ca.delete', id: ctx.params.id, change: changeOf(ctx) })
      },
    }),
    route({
      ...common, method: 'GET', path: ROUTES.jwt, summary: "Get a CA's enrollment JWT", produces: 'application/jwt',
      handle: async (ctx) =>
        new Response(await caEnrollmentJwt(deps.ca, ctx.params.id, deps.issuer()), { status: 200, headers: { 'content-type': 'application/jwt' } }),
    }),
    route({
      ...common, method: 'POST', path: ROUTES.verify, summary: 'Verify a CA with a certificate it signed', body: CaVerifyBody, consumes: 'text/plain',
      handle: async (ctx) => {
        await verifyThirdPartyCa(deps.ca, ctx.params.id, ctx.body, deps.clock.now(), changeOf(ctx))
        return okEmpty()
      },
    }),
  ]
}
