/**
 * Management API extension: facts about the running controller that the official spec has no place for (its start
 * time and uptime), read by `edgeplane status --url`. Admin only.
 */
import { Type } from '@sinclair/typebox'
import type { Clock } from '../../../lib/clock.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

export interface EdgeplaneStatusDeps {
  clock: Clock
  /** Epoch ms the controller started at. */
  startedAt: number
  version: string
  revision: string
}

const EdgeplaneStatus = Type.Object({
  version: Type.String(),
  revision: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  uptimeSeconds: Type.Integer({ minimum: 0 }),
})

export function edgeplaneStatusRoutes(deps: EdgeplaneStatusDeps): RouteDef[] {
  return [
    route({
      method: 'GET', path: '/edgeplane-status', apis: ['management'], access: 'admin', tag: 'Informational',
      summary: 'Version, start time and uptime of this controller (edgeplane extension)',
      response: EdgeplaneStatus,
      handle: () =>
        ok({
          version: deps.version,
          revision: deps.revision,
          startedAt: new Date(deps.startedAt).toISOString(),
          uptimeSeconds: Math.max(0, Math.floor((deps.clock.now() - deps.startedAt) / 1000)),
        }),
    }),
  ]
}
