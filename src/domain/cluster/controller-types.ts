/**
 * The nodes of a cluster (`GET /controllers`): replicated records, one per node that joined, written by the node itself
 * when it starts (`controller.join`) and removed by `edgeplane cluster remove`. Whether a node is online is not stored:
 * it is what the log's liveness view says now (cluster/cluster-log.ts).
 * @see edge-api client.yml controllerDetail
 */

/** One API address of a node: `apiAddresses` maps an API binding (`edge-client`, `edge-management`, `edge-oidc`) to these. */
export interface ControllerApiAddress {
  url: string
  version: string
}

export interface ControllerNode {
  /** The node's name (`--node-name`): the real controller's Raft node id. */
  id: string
  name: string
  /** The node's server certificate (its own key, issued from the shared intermediate): tokens it signs carry its kid. */
  certPem: string
  /** SHA-1 of the certificate's DER, lowercase hex: the kid of the JWTs the node signs. */
  fingerprint: string
  apiAddresses: Record<string, ControllerApiAddress[]>
  /** Where routers reach the node's control plane (`tls:host:port`); null in records of nodes that joined before it had one. */
  ctrlAddress: string | null
  lastJoinedAt: number
  createdAt: number
  updatedAt: number
  tags: Record<string, unknown>
}
