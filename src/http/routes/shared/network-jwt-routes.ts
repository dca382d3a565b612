/**
 * Both APIs, without a session: `GET /network-jwts`, the JWTs a client may use to trust the network (one, `default`;
 * flow enroll-network-jwt.ts). The answer is the list envelope without pagination, as the real controller sends it.
 * @see edge-api client.yml and management.yml GET /network-jwts (listNetworkJWTs), definitions networkJWTList
 */
import { Type } from '@sinclair/typebox'
import type { CaActor } from '../../../actors/ca/ca-actor.ts'
import { createNetworkJwt, NETWORK_JWT_NAME } from '../../../flows/enroll/enroll-network-jwt.ts'
import { NetworkJwt } from '../../../../schemas/enroll.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

const ROUTES = { list: '/network-jwts' } as const

/** `issuer`: `https://host:port` of the controller, without a trailing slash. */
export function networkJwtRoutes(deps: { ca: CaActor; issuer: () => string }): RouteDef[] {
  const networkJwt = createNetworkJwt(deps.ca, deps.issuer)
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['client', 'management'], access: 'public', tag: 'Enrollment',
      summary: 'List the JWTs a client may use to trust the network', response: Type.Array(NetworkJwt),
      handle: async () => ok([{ name: NETWORK_JWT_NAME, token: await networkJwt() }]),
    }),
  ]
}
