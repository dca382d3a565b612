/**
 * Management API: revocations of OIDC tokens (`/revocations`). Admin only, as in the real controller. The identity
 * actor stores them and checks an admin's request (domain/identity/identity-revocation.ts `decideAdminRevocation`).
 * @see edge-api management.yml listRevocations, detailRevocation, createRevocation
 */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { Revocation } from '../../../domain/identity/identity-revocation.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { RevocationCreate, RevocationDetail } from '../../../../schemas/revocation.ts'
import { created, ok } from '../../http-envelope.ts'
import { respondList, type ListSpec } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { REVOCATION_SYMBOLS, toRevocationDetail, toRevocationRow } from '../../mappers/revocation-mapper.ts'
import { found } from './crud-routes.ts'
import { changeOf } from '../route-change.ts'

const ROUTES = { list: '/revocations', item: '/revocations/:id' } as const

/** Revocations as the list shows them: every stored one (expired ones until pruned), by id unless sorted otherwise. */
function revocationListing(identities: IdentityActor): ListSpec<Revocation> {
  const reads = identities.snapshot()
  return {
    symbols: REVOCATION_SYMBOLS,
    indexed: ['id'],
    candidates: (hint) => {
      if (!hint) return reads.revocations()
      const out: Revocation[] = []
      for (const id of new Set(hint.values)) {
        const r = reads.revocation(id)
        if (r) out.push(r)
      }
      return out
    },
    toRow: toRevocationRow,
    toView: toRevocationDetail,
  }
}

export function revocationRoutes(deps: { identities: IdentityActor }): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Revocation' }
  return [
    route({
      ...common, method: 'GET', path: ROUTES.list, summary: 'List revocations', query: ListQuery, response: RevocationDetail,
      handle: (ctx) => respondList(ctx.query, revocationListing(deps.identities)),
    }),
    route({
      ...common, method: 'GET', path: ROUTES.item, summary: 'Get a revocation', response: RevocationDetail,
      handle: (ctx) => ok(toRevocationDetail(found(deps.identities.snapshot().revocation(ctx.params.id)))),
    }),
    route({
      ...common, method: 'POST', path: ROUTES.list, body: RevocationCreate, successStatus: 201,
      summary: 'Create a revocation (it lives as long as the longest refresh token)',
      handle: async (ctx) => {
        const { id, type, tags } = ctx.body
        const { ids } = await deps.identities.ask({
          type: 'revocation.create',
          revocations: [{ id, type, tags: tags ?? {} }],
          validate: true,
          change: changeOf(ctx),
        })
        return created('revocations', ids[0])
      },
    }),
  ]
}
