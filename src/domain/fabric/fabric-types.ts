/**
 * The fabric as this node knows it, in memory: the links routers report (control/links/) and the circuits this node
 * built (control/circuits/). Types and read interfaces only: the control plane owns the state, the fabric API
 * (http/) and the console read it through these, and nothing here is stored (as in the real controller, links and
 * circuits live in memory).
 * @see ziti controller/specs/swagger.yml (fabric API) linkDetail, circuitDetail, path; router-control-plane.md §5
 */

/** A link's state: usable (Connected), failed, or the loser of a duplicate pair. */
export type LinkMode = 'Connected' | 'Failed' | 'Duplicate'

/** One connection of a link (a link may run over several), as its routers last reported them. */
export interface LinkConnection {
  /** What the connection carries (`payload`, `ack`, …, as the router names it). */
  readonly type: string
  readonly localAddr: string
  readonly remoteAddr: string
}

/** A link between two routers, as its dialing router reported it (RouterLinks), with what the controller made of it. */
export interface LinkView {
  /** The id the dialing router generated. */
  readonly id: string
  /** The router that dialed (and reported) the link. */
  readonly srcRouterId: string
  readonly dstRouterId: string
  /** The link protocol (`tls`, …) and the address the dialer reached. */
  readonly protocol: string
  readonly dialAddress: string
  readonly iteration: number
  readonly mode: LinkMode
  /** Taken out of path selection by an admin (the fabric API's PATCH `down`). */
  readonly down: boolean
  /** 1 unless an admin set it. */
  readonly staticCost: number
  /** Latencies in nanoseconds, as the routers' metrics report them (65 s each until they do). */
  readonly srcLatencyNs: number
  readonly dstLatencyNs: number
  /** What path selection pays for the link: the static cost plus both latencies in milliseconds. */
  readonly cost: number
  /** Its connections (RouterLinks' or LinkStateUpdate's latest state; empty when none was reported). */
  readonly connections: readonly LinkConnection[]
  /** When this node learned of it (epoch ms). */
  readonly createdAt: number
}

export interface LinkReads {
  all(): Iterable<LinkView>
  get(id: string): LinkView | undefined
}

/** The path of a circuit: its routers in order, the links between them, and the ids of its two ends' xgress. */
export interface CircuitPath {
  readonly nodes: readonly string[]
  readonly links: readonly string[]
  readonly ingressId: string
  readonly egressId: string
}

/** A circuit this node built and holds (memory only: another node's circuits are that node's). */
export interface CircuitView {
  readonly id: string
  /** The circuit's client: the Dial session's id for a legacy dial, the identity's for an OIDC one (as the real). */
  readonly clientId: string
  /** The API session and service session of the dial, when it came from an edge router. */
  readonly apiSessionId?: string
  readonly sessionId?: string
  readonly serviceId: string
  readonly terminatorId: string
  readonly path: CircuitPath
  /** The circuit's tags (serviceId, clientId, hostId, as the real controller's). */
  readonly tags: Readonly<Record<string, string>>
  readonly createdAt: number
  readonly updatedAt: number
}

export interface CircuitReads {
  all(): Iterable<CircuitView>
  get(id: string): CircuitView | undefined
}

/** What an admin may do to circuits (the fabric API's DELETE /circuits/{id}): false when this node holds no such one. */
export interface CircuitControl extends CircuitReads {
  /** Tears the circuit down (Unroute to its routers; `immediate`: drop the forwards at once). */
  remove(id: string, immediate: boolean): boolean
}

/** What an admin may do to a link (the fabric API's PATCH and DELETE /links/{id}). */
export interface LinkControl extends LinkReads {
  /** Answers the link after the change, or undefined when this node knows no such link. */
  update(id: string, change: { down?: boolean; staticCost?: number }): LinkView | undefined
  /**
   * Forgets the link and tells both its routers (a LinkFault, so they close it); false when this node knows no such
   * link (then nothing is sent).
   */
  remove(id: string): boolean
}

/** A circuit request this node refused or could not build (kept for admins: the latest first, a bounded number). */
export interface CircuitFailureView {
  readonly at: number
  /** The router that asked. */
  readonly routerId: string
  readonly serviceId?: string
  readonly identityId?: string
  readonly circuitId?: string
  /** The real controller's failure cause (NO_TERMINATORS, ROUTER_RESPONSE_TIMEOUT, …), or REFUSED for a request
   * refused before building (its session, policy or encryption). */
  readonly cause: string
  readonly message: string
}
