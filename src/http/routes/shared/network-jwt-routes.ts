/**
 * Both APIs: `GET /network-jwts`, the network enrollment JWT a new client reads to learn the controller (no session,
 * as the real controller); the flow signs it once (flows/enroll/enroll-network-jwt.ts).
 * @see edge-api client.yml / management.yml listNetworkJWTs
 */
import { Type } from '@sinclair/typebox'
import type { NetworkJwts } from '../../../flows/enroll/enroll-network-jwt.ts'
import { NetworkJwt } from '../../../../schemas/enroll.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

const ROUTES = { list: '/network-jwts' } as const

export function networkJwtRoutes(deps: { jwts: NetworkJwts }): RouteDef[] {
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['client', 'management'], access: 'public', tag: 'Enrollment',
      summary: 'The network enrollment JWT: what a new client needs to learn this controller', response: Type.Array(NetworkJwt),
      handle: async () => ok(await deps.jwts.list()),
    }),
  ]
}
