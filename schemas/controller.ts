/**
 * Controller (cluster node) wire shapes: the list items of `GET /controllers` on both APIs, and edgeplane's own
 * `GET /cluster` (Management API, admins) that `edgeplane cluster status` reads.
 * @see edge-api client.yml / management.yml definitions controllerDetail, apiAddressList
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity } from './common.ts'

export const ApiAddress = Type.Object({ url: Type.String(), version: Type.String() })

export const ControllerDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  certPem: Type.String(),
  fingerprint: Type.String(),
  isOnline: Type.Boolean(),
  isPreferredLeader: Type.Boolean(),
  lastJoinedAt: Type.String({ format: 'date-time' }),
  /** Client API: `edge-client` and `edge-oidc` only. */
  apiAddresses: Type.Record(Type.String(), Type.Array(ApiAddress)),
  /** Management API only; the real controller's router control address (edgeplane has none: null). */
  ctrlAddress: Type.Optional(Type.Union([Type.String(), Type.Null()])),
})

const EndpointStatus = Type.Object({
  endpoint: Type.String(),
  ok: Type.Boolean(),
  memberId: Type.Optional(Type.String()),
  leader: Type.Optional(Type.String()),
  revision: Type.Optional(Type.Number()),
  raftTerm: Type.Optional(Type.Number()),
  raftIndex: Type.Optional(Type.Number()),
  version: Type.Optional(Type.String()),
  dbSize: Type.Optional(Type.Number()),
  alarms: Type.Optional(Type.Array(Type.String())),
  error: Type.Optional(Type.String()),
})

export const ClusterNodeStatus = Type.Object({
  name: Type.String(),
  /** Its applied revision: from its liveness key when online, else the last it registered (null: unknown). */
  revision: Type.Union([Type.Number(), Type.Null()]),
  lagRevisions: Type.Union([Type.Number(), Type.Null()]),
  isOnline: Type.Boolean(),
  apiUrl: Type.Union([Type.String(), Type.Null()]),
})

export const ClusterStatus = Type.Object({
  nodeName: Type.String(),
  clusterId: Type.String(),
  /** The log's state on this node: starting, live, stale, stopped. */
  state: Type.String(),
  staleDetail: Type.Optional(Type.String()),
  appliedRevision: Type.Number(),
  lagRevisions: Type.Number(),
  etcd: Type.Object({
    reachable: Type.Boolean(),
    error: Type.String(),
    endpoints: Type.Array(EndpointStatus),
  }),
  nodes: Type.Array(ClusterNodeStatus),
  digest: Type.Object({ revision: Type.Number(), digest: Type.String(), records: Type.Number() }),
})
