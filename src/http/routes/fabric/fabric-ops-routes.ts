/**
 * Fabric API: the operations beside the model. Database snapshots as the Management API takes them (at most one a
 * minute, in the data or snapshot directory; the path one is answered, a path asked for is refused); the integrity
 * check, fix and results are the Management API's own routes, served on both APIs (database-routes.ts).
 * Inspections are refused: they ask the controller's and routers' internals for values by application name, and
 * edgeplane answers none of them (the answer is the operation's own failure, `success: false` with the reason). The cluster operations are refused: on a single node with the real controller's
 * SERVER_NOT_RUNNING_IN_HA_MODE, on a cluster node because membership is the command log's (etcd), changed with
 * `edgeplane cluster add|remove` and read at GET /edge/management/v1/controllers, and there is no raft leader.
 * @see ziti controller/internal/routes/database_router.go, inspections_router.go, cluster_router.go
 */
import { decideSnapshotPath } from '../../../domain/fabric/fabric-decide.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { DatabaseSnapshots } from '../../../flows/integrity/database-snapshot.ts'
import { DatabaseSnapshotCreate, DatabaseSnapshotCreateDetails } from '../../../../schemas/fabric.ts'
import { Empty } from '../../../../schemas/common.ts'
import { json, ok, okEmpty } from '../../http-envelope.ts'
import { route, type HttpMethod, type RouteDef } from '../../http-route.ts'
import { FABRIC, refusedRoute } from './fabric-common.ts'

const INSPECT_WHY =
  "edgeplane answers no inspections: they read the real controller's and routers' internal values by application name (stack dumps, link and circuit tables); GET /metrics and /health-checks tell edgeplane's state"

const CLUSTER_WHY =
  "membership of an edgeplane cluster is its command log's (etcd), with no raft leader among the nodes: nodes join and leave with `edgeplane cluster add|remove`, and GET /edge/management/v1/controllers lists them"

export function fabricOpsRoutes(deps: { snapshots: DatabaseSnapshots; clustered: boolean }): RouteDef[] {
  const cluster = (method: HttpMethod, path: string, summary: string) =>
    refusedRoute({
      method, path, tag: 'Cluster', summary: `${summary} (refused)`,
      why: `a single node answers SERVER_NOT_RUNNING_IN_HA_MODE, as the real controller without raft; a cluster node refuses, since ${CLUSTER_WHY}`,
      handle: () => {
        if (!deps.clustered) throw new ApiError('SERVER_NOT_RUNNING_IN_HA_MODE')
        throw ApiError.withMessage('METHOD_NOT_ALLOWED', CLUSTER_WHY)
      },
    })
  return [
    route({
      ...FABRIC, method: 'POST', path: '/database', tag: 'Database', summary: 'Write a database snapshot (at most one per minute)', response: Empty,
      handle: async () => {
        await deps.snapshots.take()
        return okEmpty()
      },
    }),
    route({
      ...FABRIC, method: 'POST', path: '/database/snapshot', tag: 'Database', summary: 'Write a database snapshot and answer its path (at most one per minute)',
      body: DatabaseSnapshotCreate, response: DatabaseSnapshotCreateDetails,
      handle: async (ctx) => {
        decideSnapshotPath(ctx.body.path)
        return ok({ path: await deps.snapshots.take() })
      },
    }),
    // answered in the operation's own terms (success false, the reason among its errors), which the CLI prints
    refusedRoute({
      method: 'POST', path: '/inspections', tag: 'Inspect', summary: 'Inspect controller and router values (refused)', why: INSPECT_WHY,
      handle: () => json(200, { success: false, errors: [INSPECT_WHY] }),
    }),
    cluster('GET', '/cluster/list-members', 'List the members of the cluster'),
    cluster('POST', '/cluster/add-member', 'Add a member to the cluster'),
    cluster('POST', '/cluster/remove-member', 'Remove a member from the cluster'),
    cluster('POST', '/cluster/transfer-leadership', 'Transfer the leadership of the cluster'),
  ]
}
