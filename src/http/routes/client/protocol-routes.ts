/**
 * Client API: `GET /protocols`, no session: the address each protocol the Edge APIs listen with is reached at, as the
 * real controller lists it (routes/protocol_router.go): `https` alone, at the advertised `host:port` (its
 * `edge.api.address`), without a scheme.
 * @see edge-api client.yml listProtocols
 */
import { Protocols } from '../../../../schemas/enroll.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

const ROUTES = { list: '/protocols' } as const

export function protocolRoutes(deps: {
  /** `https://host:port` clients reach the controller at (known once the listener is up). */
  advertisedUrl: () => string
}): RouteDef[] {
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['client'], access: 'public', tag: 'Informational',
      summary: 'The listening Edge protocols and their addresses', response: Protocols,
      handle: () => ok({ https: { address: deps.advertisedUrl().replace(/^https:\/\//, '') } }),
    }),
  ]
}
