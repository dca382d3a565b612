/**
 * External JWT signers: the Management API's CRUD (admin only), and the public Client API list an SDK reads before
 * it logs in (to offer ext-jwt login): enabled signers only, with what a client needs (name, externalAuthUrl,
 * clientId, scopes...). Deletes go through the delete flow, which owns the check for policies naming the signer.
 */
import type { CaActor } from '../../../actors/ca/ca-actor.ts'
import type { ExternalJwtSigner } from '../../../domain/ca/ca-jwt-signer-types.ts'
import { deleteExternalJwtSigner, type JwtSignerDeleteDeps } from '../../../flows/ca/ca-jwt-signer-delete.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import {
  ClientExternalJwtSignerDetail,
  ExternalJwtSignerCreate,
  ExternalJwtSignerDetail,
  ExternalJwtSignerPatch,
  ExternalJwtSignerUpdate,
} from '../../../../schemas/external-jwt-signer.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import {
  EXTERNAL_JWT_SIGNER_SYMBOLS,
  toClientExternalJwtSignerDetail,
  toExternalJwtSignerDetail,
  toExternalJwtSignerRow,
} from '../../mappers/external-jwt-signer-mapper.ts'
import { changeOf } from '../route-change.ts'
import { crudRoutes, tableCandidates, tableListing } from '../management/crud-routes.ts'

const ROUTES = { list: '/external-jwt-signers', item: '/external-jwt-signers/:id' } as const

export type ExternalJwtSignerRouteDeps = JwtSignerDeleteDeps & { ca: CaActor }

export function externalJwtSignerRoutes(deps: ExternalJwtSignerRouteDeps): RouteDef[] {
  const signers = () => deps.ca.snapshot().jwtSigners
  const tag = 'External JWT Signer'
  const clientListing = {
    symbols: EXTERNAL_JWT_SIGNER_SYMBOLS,
    indexed: ['id', 'name'],
    presortedById: true,
    candidates: (hint: Parameters<typeof tableCandidates>[1]) => [...tableCandidates(signers(), hint)].filter((s) => s.enabled),
    toRow: toExternalJwtSignerRow,
    toView: toClientExternalJwtSignerDetail,
  }
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['client'], access: 'public', tag,
      summary: 'List the enabled external JWT signers a client may log in with (no session needed)', query: ListQuery,
      response: ClientExternalJwtSignerDetail,
      handle: (ctx) => respondList(ctx.query, clientListing),
    }),
    ...crudRoutes({
      tag,
      routes: ROUTES,
      entity: 'external-jwt-signers',
      noun: 'external JWT signer',
      detail: ExternalJwtSignerDetail,
      listing: () =>
        tableListing<ExternalJwtSigner>(signers(), {
          symbols: EXTERNAL_JWT_SIGNER_SYMBOLS,
          indexed: ['id', 'name'],
          toRow: toExternalJwtSignerRow,
          toView: toExternalJwtSignerDetail,
        }),
      bodies: { create: ExternalJwtSignerCreate, put: ExternalJwtSignerUpdate, patch: ExternalJwtSignerPatch },
      create: (ctx) => deps.ca.ask({ type: 'jwtSigner.create', input: ctx.body, change: changeOf(ctx) }),
      update: async (ctx, replace) => {
        await deps.ca.ask({ type: 'jwtSigner.update', id: ctx.params.id, input: ctx.body, replace, change: changeOf(ctx) })
      },
      remove: (ctx) => deleteExternalJwtSigner(deps, ctx.params.id, changeOf(ctx)),
    }),
  ]
}
