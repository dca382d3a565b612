/**
 * Building a circuit, as the real controller's CreateCircuit does it:
 * 1. Its id: the one the dialer's router chose (CreateCircuitV3), else a new UUID; reserved while it is built.
 * 2. The candidates: the service's terminators (of the instance asked for, `identity@service` addressing), each on a
 *    connected router with a path from the dialer's router (circuit-path.ts); none → NO_TERMINATORS,
 *    NO_ONLINE_TERMINATORS or NO_PATH.
 * 3. The terminator: the service's strategy over static + dynamic + path costs, biased by precedence
 *    (circuit-strategies.ts).
 * 4. The path object: fresh ingress and egress ids, the nodes, the cheapest usable link between each two.
 * 5. One Route per router (circuit-routes.ts), the last with the egress and the dialer's peer data, sent to all at once;
 *    every router's RouteResult awaited up to the route timeout (10 s). A failure or a timeout is an attempt lost: up
 *    to two attempts in all, then the routers that had succeeded get Unroute{now}; after a success, the routers used
 *    only by failed attempts do. A router's error code 1 (invalid terminator) deletes an edge terminator, 2
 *    (misconfigured) marks it failed.
 * 6. Built: the circuit is kept (circuit-registry.ts) and its peer data is the terminator's static peer data with the
 *    egress's route-time peer data over it, less the four path-address headers, plus what the strategy adds.
 * A route result for a circuit not being built is answered with Unroute{now} by the feature (it is none of ours).
 * @see ziti controller/network/network.go CreateCircuit, selectPath; routesender.go; router-control-plane.md §5.1-5.2
 */
import { newUuid } from '../../lib/ids.ts'
import type { Precedence, Service, Terminator } from '../../domain/policy/policy-types.ts'
import type { CircuitPath } from '../../domain/fabric/fabric-types.ts'
import { shortestPath, type PathLink, type PathRouter } from './circuit-path.ts'
import { routeMessages, type RouteInit } from './circuit-routes.ts'
import { chooseTerminator, isTerminatorStrategy, type DynamicCosts } from './circuit-strategies.ts'
import type { Circuit, CircuitRegistry } from './circuit-registry.ts'

/** Why a circuit was not built (the real controller's failure causes, for metrics and the console). */
export const CIRCUIT_FAILURES = [
  'INVALID_SERVICE',
  'ID_GENERATION_ERR',
  'NO_TERMINATORS',
  'NO_ONLINE_TERMINATORS',
  'NO_PATH',
  'PATH_MISSING_LINK',
  'INVALID_STRATEGY',
  'STRATEGY_ERR',
  'ROUTER_RESPONSE_TIMEOUT',
  'ROUTER_ERR_GENERIC',
  'ROUTER_ERR_INVALID_TERMINATOR',
  'ROUTER_ERR_MISCONFIGURED_TERMINATOR',
  'ROUTER_ERR_DIAL_TIMED_OUT',
  'ROUTER_ERR_CONN_REFUSED',
  'ROUTER_ERR_REJECTED_BY_APPLICATION',
  'ROUTER_ERR_DNS_RESOLUTION_FAILED',
  'ROUTER_ERR_PORT_NOT_ALLOWED',
  'ROUTER_ERR_INVALID_LINK_DESTINATION',
  'ROUTER_ERR_RESOURCES_NOT_AVAILABLE',
] as const
export type CircuitFailure = (typeof CIRCUIT_FAILURES)[number]

/** A router's error codes in a RouteResult (header 1104) and what each means for the circuit. */
const ROUTER_ERRORS: Record<number, CircuitFailure> = {
  0: 'ROUTER_ERR_GENERIC',
  1: 'ROUTER_ERR_INVALID_TERMINATOR',
  2: 'ROUTER_ERR_MISCONFIGURED_TERMINATOR',
  3: 'ROUTER_ERR_DIAL_TIMED_OUT',
  4: 'ROUTER_ERR_CONN_REFUSED',
  5: 'ROUTER_ERR_REJECTED_BY_APPLICATION',
  6: 'ROUTER_ERR_DNS_RESOLUTION_FAILED',
  7: 'ROUTER_ERR_PORT_NOT_ALLOWED',
  8: 'ROUTER_ERR_INVALID_LINK_DESTINATION',
  9: 'ROUTER_ERR_RESOURCES_NOT_AVAILABLE',
}

/** The peer data headers of the path's addresses: kept by the controller, not handed to the dialer. */
const PATH_ADDRESS_KEYS = [1110, 1111, 1112, 1113]

/** What a router said of one Route. */
export interface RouteStatus {
  readonly routerId: string
  readonly circuitId: string
  readonly attempt: number
  readonly success: boolean
  readonly error?: string
  readonly errorCode?: number
  readonly peerData: ReadonlyMap<number, Uint8Array>
}

export interface BuildParams {
  /** The id the dialer's router chose (CreateCircuitV3), if any. */
  readonly circuitId?: string
  readonly serviceId: string
  /** The terminator instance asked for (`identity@service`); '' for any. */
  readonly instanceId: string
  /** The dialer's (ingress) router. */
  readonly sourceRouterId: string
  /** The circuit's client: the Dial session for a legacy dial, the identity for an OIDC one (as the real controller). */
  readonly clientId: string
  /** The dialing identity (the circuit's `clientId` tag). */
  readonly identityId: string
  readonly apiSessionId?: string
  readonly sessionId?: string
  readonly peerData: ReadonlyMap<number, Uint8Array>
}

export type BuildOutcome =
  | { ok: true; circuit: Circuit; peerData: Map<number, Uint8Array> }
  | { ok: false; failure: CircuitFailure; message: string; circuitId?: string }

export interface CircuitBuilderDeps {
  registry: CircuitRegistry
  /** The service (undefined when it is gone). */
  service(id: string): Service | undefined
  terminatorsOf(serviceId: string): readonly Terminator[]
  /** The connected routers as path selection sees them. */
  connectedRouters(): ReadonlyMap<string, PathRouter>
  /** The usable links between connected routers. */
  usableLinks(): readonly PathLink[]
  /** Sends a Route to a router; false when it is not connected (nothing sent). */
  sendRoute(routerId: string, route: RouteInit): boolean
  /** Sends Unroute to a router (when it is connected). */
  sendUnroute(routerId: string, circuitId: string, now: boolean): void
  costs: DynamicCosts
  /** A router said a terminator of the edge (or tunnel) binding does not exist there: delete it. */
  invalidTerminator(t: Terminator): void
  /** A router said a terminator is misconfigured: mark it failed. */
  misconfiguredTerminator(t: Terminator): void
  now(): number
  random(): number
  routeTimeoutMs: number
  /** Attempts in all (the real controller's CreateCircuitRetries, 2). */
  attempts: number
}

interface PendingRoute {
  attempt: number
  statuses: (s: RouteStatus) => void
}

export class CircuitBuilder {
  private readonly pending = new Map<string, PendingRoute>()

  constructor(private readonly d: CircuitBuilderDeps) {}

  /** Hands a router's RouteResult to the circuit being built; false when none is (the router gets an Unroute). */
  routeResult(s: RouteStatus): boolean {
    const p = this.pending.get(s.circuitId)
    if (!p) return false
    p.statuses(s)
    return true
  }

  async build(params: BuildParams): Promise<BuildOutcome> {
    const d = this.d
    const circuitId = params.circuitId || newUuid()
    if (!d.registry.reserve(circuitId)) return { ok: false, failure: 'ID_GENERATION_ERR', message: `circuit id ${circuitId} already in use` }
    let built = false
    const cleanups = new Set<string>()
    try {
      for (let attempt = 0; ; attempt++) {
        const service = d.service(params.serviceId)
        if (!service) return { ok: false, failure: 'INVALID_SERVICE', message: `service ${params.serviceId} not found`, circuitId }
        const selected = this.selectPath(params, service)
        if (!selected.ok) return { ...selected, circuitId }
        const { terminator, nodes, strategyPeerData } = selected
        const links = this.linksOf(nodes)
        if (!links) return { ok: false, failure: 'PATH_MISSING_LINK', message: `no link between the routers of the path ${nodes.join(' -> ')}`, circuitId }
        const path: CircuitPath = { nodes, links, ingressId: shortId(), egressId: shortId() }
        const serviceTag = params.instanceId ? `${params.instanceId}@${params.serviceId}` : params.serviceId
        const tags = { serviceId: serviceTag, clientId: params.identityId, hostId: terminator.hostId }
        const deadline = d.now() + d.routeTimeoutMs
        const routes = routeMessages({
          circuitId,
          attempt,
          path,
          terminator,
          peerData: params.peerData,
          timeoutNs: BigInt(d.routeTimeoutMs) * 1_000_000n,
          tags,
        })
        const result = await this.route(circuitId, attempt, path, routes, terminator, deadline)
        for (const r of result.cleanups) cleanups.add(r)
        if (!result.ok) {
          if (attempt + 1 < d.attempts) continue
          for (const r of cleanups) d.sendUnroute(r, circuitId, true)
          return { ok: false, failure: result.failure, message: `exceeded the maximum ${d.attempts} attempts creating circuit ${circuitId} (${result.message})`, circuitId }
        }
        // routers used only by failed attempts
        for (const r of cleanups) if (!nodes.includes(r)) d.sendUnroute(r, circuitId, true)
        const peerData = new Map<number, Uint8Array>()
        for (const [k, v] of Object.entries(terminator.peerData)) peerData.set(Number(k), new Uint8Array(Buffer.from(v, 'base64')))
        for (const [k, v] of result.peerData) peerData.set(k, v)
        for (const k of PATH_ADDRESS_KEYS) peerData.delete(k)
        for (const [k, v] of strategyPeerData ?? []) peerData.set(k, v)
        const now = d.now()
        const circuit: Circuit = {
          id: circuitId,
          clientId: params.clientId,
          ...(params.apiSessionId ? { apiSessionId: params.apiSessionId } : {}),
          ...(params.sessionId ? { sessionId: params.sessionId } : {}),
          serviceId: params.serviceId,
          terminatorId: terminator.id,
          terminatorRouterId: terminator.routerId,
          strategy: service.terminatorStrategy,
          path,
          tags,
          createdAt: now,
          updatedAt: now,
        }
        d.costs.succeeded(service.terminatorStrategy, service.id, terminator.id)
        d.registry.add(circuit)
        built = true
        return { ok: true, circuit, peerData }
      }
    } finally {
      if (!built) d.registry.release(circuitId)
    }
  }

  private selectPath(
    params: BuildParams,
    service: Service,
  ): { ok: true; terminator: Terminator; nodes: string[]; strategyPeerData?: ReadonlyMap<number, Uint8Array> } | { ok: false; failure: CircuitFailure; message: string } {
    const d = this.d
    const all = d.terminatorsOf(service.id)
    if (all.length === 0) return { ok: false, failure: 'NO_TERMINATORS', message: `service ${service.id} has no terminators` }
    const routers = d.connectedRouters()
    const links = d.usableLinks()
    const paths = new Map<string, { nodes: string[]; cost: number } | null>()
    let offline = false
    let noPath = false
    const candidates: { terminatorId: string; precedence: Precedence; unbiasedCost: number; terminator: Terminator }[] = []
    for (const t of all) {
      if ((t.identity ?? '') !== params.instanceId) continue
      if (!routers.has(t.routerId)) {
        offline = true
        continue
      }
      let p = paths.get(t.routerId)
      if (p === undefined) {
        const found = shortestPath(params.sourceRouterId, t.routerId, routers, links)
        p = found.ok ? { nodes: found.nodes, cost: found.cost } : null
        paths.set(t.routerId, p)
      }
      if (p === null) {
        noPath = true
        continue
      }
      candidates.push({ terminatorId: t.id, precedence: d.costs.precedenceOf(t), unbiasedCost: t.cost + d.costs.costOf(t.id) + p.cost, terminator: t })
    }
    if (candidates.length === 0) {
      if (noPath) return { ok: false, failure: 'NO_PATH', message: `no path from router ${params.sourceRouterId} to a terminator of service ${service.id}` }
      if (offline) return { ok: false, failure: 'NO_ONLINE_TERMINATORS', message: `service ${service.id} has no online terminators for instanceId ${params.instanceId}` }
      return { ok: false, failure: 'NO_TERMINATORS', message: `service ${service.id} has no terminators for instanceId ${params.instanceId}` }
    }
    if (!isTerminatorStrategy(service.terminatorStrategy)) {
      return { ok: false, failure: 'INVALID_STRATEGY', message: `no terminator strategy named ${service.terminatorStrategy}` }
    }
    const token = params.peerData.get(1114)
    const choice = chooseTerminator(service.terminatorStrategy, candidates, { random: d.random, stickinessToken: token ? new TextDecoder().decode(token) : undefined })
    if (!choice) return { ok: false, failure: 'STRATEGY_ERR', message: `strategy ${service.terminatorStrategy} did not select a terminator for service ${service.id}` }
    const path = paths.get(choice.candidate.terminator.routerId)!
    return { ok: true, terminator: choice.candidate.terminator, nodes: path!.nodes, strategyPeerData: choice.peerData }
  }

  /** The cheapest usable link between each two routers of the path, or undefined when one is missing. */
  private linksOf(nodes: readonly string[]): string[] | undefined {
    if (nodes.length < 2) return []
    const links = this.d.usableLinks()
    const out: string[] = []
    for (let i = 0; i + 1 < nodes.length; i++) {
      const [a, b] = [nodes[i]!, nodes[i + 1]!]
      let best: PathLink | undefined
      for (const l of links) {
        if (!((l.a === a && l.b === b) || (l.a === b && l.b === a))) continue
        if (!best || l.cost < best.cost || (l.cost === best.cost && l.id < best.id)) best = l
      }
      if (!best) return undefined
      out.push(best.id)
    }
    return out
  }

  /** Sends the Routes of one attempt and waits for every router's result (or the first failure, or the deadline). */
  private route(
    circuitId: string,
    attempt: number,
    path: CircuitPath,
    routes: RouteInit[],
    terminator: Terminator,
    deadline: number,
  ): Promise<{ ok: true; peerData: ReadonlyMap<number, Uint8Array>; cleanups: string[] } | { ok: false; failure: CircuitFailure; message: string; cleanups: string[] }> {
    const d = this.d
    return new Promise((resolve) => {
      const present = new Map<string, boolean>(path.nodes.map((r) => [r, false]))
      let peerData: ReadonlyMap<number, Uint8Array> = new Map()
      let done = false
      const finish = (v: Parameters<typeof resolve>[0]) => {
        if (done) return
        done = true
        clearTimeout(timer)
        if (this.pending.get(circuitId)?.attempt === attempt) this.pending.delete(circuitId)
        resolve(v)
      }
      const cleanups = () => [...present].filter(([, ok]) => ok).map(([r]) => r)
      const dialFailed = () => {
        const svc = d.service(terminator.serviceId)
        if (svc) d.costs.failed(svc.terminatorStrategy, svc.id, terminator, d.now())
      }
      const timer = setTimeout(() => {
        dialFailed()
        finish({ ok: false, failure: 'ROUTER_RESPONSE_TIMEOUT', message: `timed out waiting for the routers of circuit ${circuitId}`, cleanups: [...path.nodes] })
      }, Math.max(0, deadline - d.now()))
      timer.unref?.()
      this.pending.set(circuitId, {
        attempt,
        statuses: (s) => {
          if (!present.has(s.routerId) || s.attempt !== attempt) return
          if (s.success) {
            present.set(s.routerId, true)
            if (s.routerId === terminator.routerId) peerData = s.peerData
            if ([...present.values()].every(Boolean)) finish({ ok: true, peerData, cleanups: [] })
            return
          }
          const failure = ROUTER_ERRORS[s.errorCode ?? 0] ?? 'ROUTER_ERR_GENERIC'
          if (s.errorCode === 1 && (terminator.binding === 'edge' || terminator.binding === 'tunnel')) d.invalidTerminator(terminator)
          else if (s.errorCode === 1 || s.errorCode === 2) d.misconfiguredTerminator(terminator)
          if (s.routerId === terminator.routerId) dialFailed()
          finish({ ok: false, failure, message: `error creating route for circuit ${circuitId} on router ${s.routerId} (${s.error ?? 'no reason given'})`, cleanups: cleanups() })
        },
      })
      for (let i = 0; i < path.nodes.length; i++) {
        if (!d.sendRoute(path.nodes[i]!, routes[i]!)) {
          finish({ ok: false, failure: 'ROUTER_ERR_GENERIC', message: `router ${path.nodes[i]} is not connected`, cleanups: cleanups() })
          return
        }
      }
    })
  }
}

/** An xgress id: a UUID, as the real controller's. */
function shortId(): string {
  return newUuid()
}
