/**
 * Client API: posture responses (one, 201; many, 200). The answer lists the services whose posture outcome for the
 * caller's API session changed (flows/posture/posture-respond.ts).
 * @see edge-api client.yml /posture-response, /posture-response-bulk, postureResponseEnvelope
 */
import type { PostureRespondDeps } from '../../../flows/posture/posture-respond.ts'
import { submitPostureResponses } from '../../../flows/posture/posture-respond.ts'
import type { Clock } from '../../../lib/clock.ts'
import { PostureResponseAnswer, PostureResponseBulk, PostureResponseCreate } from '../../../../schemas/posture.ts'
import { json } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

const ROUTES = { one: '/posture-response', bulk: '/posture-response-bulk' } as const

export function postureResponseRoutes(deps: PostureRespondDeps & { clock: Clock }): RouteDef[] {
  const common = { method: 'POST' as const, apis: ['client'] as const, access: 'session' as const, tag: 'Posture Checks', response: PostureResponseAnswer }
  return [
    route({
      ...common, path: ROUTES.one, summary: 'Report one posture response', body: PostureResponseCreate, successStatus: 201,
      handle: (ctx) => json(201, { data: { services: submitPostureResponses(deps, ctx.auth.session, [ctx.body], false, deps.clock.now()) }, meta: {} }),
    }),
    route({
      ...common, path: ROUTES.bulk, summary: 'Report several posture responses', body: PostureResponseBulk,
      handle: (ctx) => json(200, { data: { services: submitPostureResponses(deps, ctx.auth.session, ctx.body, true, deps.clock.now()) }, meta: {} }),
    }),
  ]
}
