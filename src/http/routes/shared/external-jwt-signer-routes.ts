/**
 * External JWT signers: the public Client API list an SDK reads before it logs in (to offer ext-jwt login), and the
 * admin's Management API list. No signer can be created yet (the ext-jwt issue adds them), so both list an empty
 * collection, with the usual paging and filter checks.
 */
import { ListQuery } from '../../../../schemas/common.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { EXTERNAL_JWT_SIGNER_SYMBOLS } from '../../mappers/external-jwt-signer-mapper.ts'

const ROUTES = { list: '/external-jwt-signers' } as const

/** The signers there are: none until signers can be created. */
const NO_SIGNERS: readonly never[] = []

export function externalJwtSignerRoutes(): RouteDef[] {
  const listing = {
    symbols: EXTERNAL_JWT_SIGNER_SYMBOLS,
    presortedById: true,
    candidates: () => NO_SIGNERS,
    toRow: (s: never) => s,
    toView: (s: never) => s,
  }
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['client'], access: 'public', tag: 'External JWT Signer',
      summary: 'List the external JWT signers a client may log in with (no session needed)', query: ListQuery,
      handle: (ctx) => respondList(ctx.query, listing),
    }),
    route({
      method: 'GET', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'External JWT Signer',
      summary: 'List external JWT signers', query: ListQuery,
      handle: (ctx) => respondList(ctx.query, listing),
    }),
  ]
}
