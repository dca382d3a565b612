/**
 * Management API: database snapshots and the data integrity check and fix (flows/integrity). Admin only, as the real
 * controller. Times not yet known (no run yet, a run in progress) render as Go's zero time, as the real controller's
 * zero `time.Time` does. The integrity check, fix and results are the fabric API's too (the same operations there);
 * its snapshots are fabric-ops-routes.ts.
 */
import { Empty } from '../../../../schemas/common.ts'
import { DataIntegrityCheckDetails } from '../../../../schemas/database.ts'
import type { DatabaseSnapshots } from '../../../flows/integrity/database-snapshot.ts'
import type { IntegrityRunner } from '../../../flows/integrity/integrity-run.ts'
import { json, okEmpty } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

const ZERO_TIME = '0001-01-01T00:00:00.000Z'
const at = (ms: number | null) => (ms === null ? ZERO_TIME : new Date(ms).toISOString())

export function databaseRoutes(deps: { snapshots: DatabaseSnapshots; integrity: IntegrityRunner }): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Database' }
  const integrity = { ...common, apis: ['management', 'fabric'] as const }
  const start = (fix: boolean) => () => {
    deps.integrity.start(fix)
    return json(202, { data: {}, meta: {} })
  }
  return [
    route({
      ...common, method: 'POST', path: '/database/snapshot', summary: 'Write a database snapshot (at most one per minute)', response: Empty,
      handle: async () => {
        await deps.snapshots.take()
        return okEmpty()
      },
    }),
    route({
      ...integrity, method: 'POST', path: '/database/check-data-integrity', summary: 'Start a data integrity check', response: Empty, successStatus: 202,
      handle: start(false),
    }),
    route({
      ...integrity, method: 'POST', path: '/database/fix-data-integrity', summary: 'Start a data integrity check that fixes what it can', response: Empty,
      successStatus: 202, handle: start(true),
    }),
    route({
      ...integrity, method: 'GET', path: '/database/data-integrity-results', summary: 'The results of the last data integrity run',
      response: DataIntegrityCheckDetails,
      handle: () => {
        const r = deps.integrity.results()
        return json(200, {
          data: {
            startTime: at(r.startTime),
            endTime: at(r.endTime),
            error: r.error ?? '',
            fixingErrors: r.fixingErrors,
            inProgress: r.inProgress,
            results: r.results,
            tooManyErrors: r.tooManyErrors,
          },
          meta: { pagination: { limit: -1, offset: 0, totalCount: r.results.length } },
        })
      },
    }),
  ]
}
