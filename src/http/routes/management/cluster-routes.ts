/**
 * Management API, edgeplane's own: `GET /cluster` (admins), the state of this cluster node and of the cluster as it
 * sees it (http-cluster.ts `clusterStatus`); what `edgeplane cluster status` and the cluster tests read. Not in the
 * official spec (an EDGEPLANE_EXTENSIONS operation). A single node answers 404 saying it is not a cluster node.
 */
import type { ControllersActor } from '../../../actors/controllers/controllers-actor.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { ClusterStatus } from '../../../../schemas/controller.ts'
import { clusterStatus, type ClusterView } from '../../http-cluster.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'

export function clusterRoutes(deps: { controllers: ControllersActor; cluster?: ClusterView }): RouteDef[] {
  return [
    route({
      method: 'GET', path: '/cluster', apis: ['management'], access: 'admin', tag: 'Cluster', response: ClusterStatus,
      summary: 'This cluster node: its log, etcd, every node with its applied revision and lag, and the digest of its state (edgeplane)',
      handle: async () => {
        if (!deps.cluster) throw ApiError.notFound('this controller runs as a single node, not as a node of a cluster (edgeplane run --cluster-endpoints)')
        return ok(await clusterStatus(deps.cluster, deps.controllers.snapshot().byId.values()))
      },
    }),
  ]
}
