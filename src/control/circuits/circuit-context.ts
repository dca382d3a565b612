/**
 * What the circuit handlers share: the builder, the registry, the reads they check a request against (routers,
 * services, the policy index), the session checks, the per-router request slots, and tearing a circuit down
 * (Unroute to every router of its path, then forgetting it). One instance per node (circuits-feature.ts).
 */
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { CircuitFailureView } from '../../domain/fabric/fabric-types.ts'
import type { PolicyReads } from '../../domain/policy/policy-reads.ts'
import type { RouterSessionCheck } from '../../flows/routers/router-session-check.ts'
import type { OidcTokens } from '../../flows/oidc/oidc-tokens.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { RouterRegistry } from '../control-routers.ts'
import type { CircuitBuilder, CircuitFailure } from './circuit-builder.ts'
import type { CircuitRegistry, CircuitRemovalCause } from './circuit-registry.ts'
import { circuitSenders } from './circuit-senders.ts'
import type { DynamicCosts } from './circuit-strategies.ts'

export interface CircuitContext {
  builder: CircuitBuilder
  circuits: CircuitRegistry
  routers: RouterRegistry
  graph(): PolicyGraphReads
  identities(): IdentityReads
  policy: Pick<PolicyReads, 'routersFor' | 'permissionsOf'>
  /** Legacy sessions: the API session and the Dial session behind a CreateCircuitV2. */
  checkSession: RouterSessionCheck
  /** OIDC access tokens (CreateCircuitV3); absent when OIDC is off. */
  accessTokens?: Pick<OidcTokens, 'verify'>
  costs: DynamicCosts
  now(): number
  log(level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, msg: string): void
  /** A circuit was built (metrics: its setup time in ms) or refused (its cause, and what admins see of it). */
  observed(outcome: { ok: true; setupMs: number } | ({ ok: false; failure: CircuitFailure | 'REFUSED' } & Omit<CircuitFailureView, 'at' | 'cause'>)): void
  /** Takes one of a router's request slots; false when all are in use (the request is answered busy). */
  takeSlot(routerId: string): boolean
  releaseSlot(routerId: string): void
}

/**
 * Tears a circuit down: Unroute to every connected router of its path (`now`: drop the forwards at once, else let
 * the xgress close first), the strategy told, the circuit forgotten. False when this node holds no such circuit.
 */
export function teardown(ctx: CircuitContext, circuitId: string, now: boolean, cause: CircuitRemovalCause, skipRouterId?: string): boolean {
  const c = ctx.circuits.get(circuitId)
  if (!c) return false
  for (const r of c.path.nodes) {
    if (r === skipRouterId) continue
    const ch = ctx.routers.get(r)?.channel
    if (ch) circuitSenders(ch).unroute(c.id, now)
  }
  ctx.circuits.remove(c.id, cause)
  ctx.costs.released(c.strategy, c.terminatorId)
  return true
}
