/**
 * Choosing the terminator of a circuit: the costs of the candidates, biased by precedence, and the service's
 * terminator strategy. Pure but for the dynamic costs the strategies keep per terminator (memory, per node). Rules
 * kept here, as the real controller's xt packages:
 * - A candidate's cost = its static cost + its dynamic cost + its path's cost, biased by precedence into bands:
 *   required [0, 2^32/4), default [2^32/4, 2^32/2), failed [2^32/2, 3·2^32/4); candidates sort by biased cost.
 * - Only the candidates of the best precedence (the first band present) are chosen among.
 * - smartrouting: the cheapest. random: any of them, evenly. weighted: at random, a candidate's weight falling as
 *   its unbiased cost grows (weight = 1 - cost / total). sticky: the terminator named by the dialer's stickiness
 *   token (peer data 1114) when it is among them, else the cheapest; the chosen terminator's id goes back as the token.
 * - ha, for an active/passive pair (one terminator required, the other default): the cheapest, and after 3 failed
 *   dials of the service in a row (a success resets the count) the terminator that failed counts as failed until its
 *   record changes (its cost or precedence, by an admin or its host). The real controller had it until 2021 (fabric
 *   xt_ha); its current one no longer registers it.
 * - Dynamic cost (every strategy but random and ha): 2 per circuit the terminator carries, plus 20 per failed dial
 *   less 2 per later success; every minute failures are credited back exponentially (2^(minutes since the last
 *   failure / 5)).
 * @see ziti controller/xt/costs.go, xt_smartrouting, xt_weighted, xt_random, xt_sticky, xt_common/cost_visitor.go
 */
import type { Precedence } from '../../domain/policy/policy-types.ts'

/** The strategies a service may name (`terminatorStrategy`): the real controller's four, and its former `ha`. */
export const TERMINATOR_STRATEGIES = ['smartrouting', 'weighted', 'random', 'sticky', 'ha'] as const
export type TerminatorStrategy = (typeof TERMINATOR_STRATEGIES)[number]

export const isTerminatorStrategy = (s: string): s is TerminatorStrategy => (TERMINATOR_STRATEGIES as readonly string[]).includes(s)

/** The peer data key of the sticky strategy's token (ctrl_msg.XtStickinessToken). */
export const STICKINESS_TOKEN_KEY = 1114

const BAND = 2 ** 32 / 4
const BANDS: Record<Precedence, { min: number; max: number }> = {
  required: { min: 0, max: BAND - 1 },
  default: { min: BAND, max: 2 * BAND - 1 },
  failed: { min: 2 * BAND, max: 3 * BAND - 1 },
}

/** A cost within its precedence's band (saturating at the band's top). */
export function biasedCost(precedence: Precedence, cost: number): number {
  const b = BANDS[precedence]
  return cost > b.max - b.min ? b.max : b.min + cost
}

export interface Candidate {
  readonly terminatorId: string
  readonly precedence: Precedence
  /** Static + dynamic + path cost. */
  readonly unbiasedCost: number
}

export interface Choice<C extends Candidate> {
  readonly candidate: C
  /** Peer data the strategy adds to the dialer's answer (the sticky token). */
  readonly peerData?: ReadonlyMap<number, Uint8Array>
}

/**
 * The candidate the strategy picks; `candidates` in any order (sorted here by biased cost, then id). Undefined for
 * none.
 */
export function chooseTerminator<C extends Candidate>(
  strategy: TerminatorStrategy,
  candidates: readonly C[],
  opts: { random: () => number; stickinessToken?: string },
): Choice<C> | undefined {
  if (candidates.length === 0) return undefined
  const sorted = [...candidates].sort((a, b) => biasedCost(a.precedence, a.unbiasedCost) - biasedCost(b.precedence, b.unbiasedCost) || (a.terminatorId < b.terminatorId ? -1 : 1))
  // the candidates of the best precedence present
  const best = sorted.filter((c) => c.precedence === sorted[0]!.precedence)
  switch (strategy) {
    case 'smartrouting':
    case 'ha':
      return { candidate: best[0]! }
    case 'random':
      return { candidate: best[Math.min(best.length - 1, Math.floor(opts.random() * best.length))]! }
    case 'weighted': {
      if (best.length === 1) return { candidate: best[0]! }
      const costs = best.map((c) => (c.unbiasedCost === 0 ? 1 : c.unbiasedCost))
      const total = costs.reduce((a, b) => a + b, 0)
      const weights = costs.map((c) => 1 - c / total)
      const weightSum = weights.reduce((a, b) => a + b, 0)
      const x = opts.random()
      let cumulative = 0
      for (let i = 0; i < best.length; i++) {
        cumulative += weights[i]! / weightSum
        if (x < cumulative) return { candidate: best[i]! }
      }
      return { candidate: best[0]! }
    }
    case 'sticky': {
      const held = opts.stickinessToken ? best.find((c) => c.terminatorId === opts.stickinessToken) : undefined
      const candidate = held ?? best[0]!
      return { candidate, peerData: new Map([[STICKINESS_TOKEN_KEY, new TextEncoder().encode(candidate.terminatorId)]]) }
    }
  }
}

/** What the ha strategy's mark needs of a terminator: its record (immutable; a change of it is a new object). */
export interface MarkableTerminator {
  readonly id: string
  readonly precedence: Precedence
}

interface TerminatorCost {
  circuits: number
  failureCost: number
  lastFailureAt: number
}

/** Failed dials in a row of an ha service that mark its terminator failed. */
export const HA_FAILURES_TO_FAIL = 3

/** The strategies whose choice follows the dynamic costs (circuits carried, dials failed). */
const usesCosts = (strategy: string) => strategy !== 'random' && strategy !== 'ha'

const CIRCUIT_COST = 2
const FAILURE_COST = 20
const SUCCESS_CREDIT = 2
const MAX_U32 = 2 ** 32 - 1
const MAX_U16 = 65_535

/**
 * What the strategies remember of terminators (memory, per node): the dynamic costs (circuits carried, dials failed)
 * of the strategies that use them, and the ha strategy's failures in a row per service and the terminators it marked
 * failed (the terminator's record as it was then: a changed record, a new object in the graph, ends the mark).
 */
export class DynamicCosts {
  private readonly costs = new Map<string, TerminatorCost>()
  private readonly haFailures = new Map<string, number>()
  private readonly haFailed = new Map<string, MarkableTerminator>()

  /** A terminator's precedence as the strategies see it: failed while the ha strategy holds it failed. */
  precedenceOf(t: MarkableTerminator): Precedence {
    const marked = this.haFailed.get(t.id)
    if (marked === undefined) return t.precedence
    if (marked === t) return 'failed'
    this.haFailed.delete(t.id)
    return t.precedence
  }

  /** A circuit was built over the terminator. */
  succeeded(strategy: string, serviceId: string, terminatorId: string): void {
    if (strategy === 'ha') this.haFailures.delete(serviceId)
    if (usesCosts(strategy)) this.dialSucceeded(terminatorId)
  }

  /** A dial over the terminator failed (its router refused or did not answer the route). */
  failed(strategy: string, serviceId: string, t: MarkableTerminator, now: number): void {
    if (strategy === 'ha') {
      const n = (this.haFailures.get(serviceId) ?? 0) + 1
      this.haFailures.set(serviceId, n)
      if (n >= HA_FAILURES_TO_FAIL) this.haFailed.set(t.id, t)
    }
    if (usesCosts(strategy)) this.dialFailed(t.id, now)
  }

  /** A circuit over the terminator is gone. */
  released(strategy: string, terminatorId: string): void {
    if (usesCosts(strategy)) this.circuitRemoved(terminatorId)
  }

  /** A terminator's dynamic cost (at most 65535, as the real one reports it). */
  costOf(terminatorId: string): number {
    const c = this.costs.get(terminatorId)
    if (!c) return 0
    return Math.min(MAX_U16, Math.min(MAX_U32, c.circuits * CIRCUIT_COST + c.failureCost))
  }

  circuitsOf(terminatorId: string): number {
    return this.costs.get(terminatorId)?.circuits ?? 0
  }

  dialSucceeded(terminatorId: string): void {
    const c = this.entry(terminatorId)
    c.failureCost = Math.max(0, c.failureCost - SUCCESS_CREDIT)
    c.circuits++
  }

  dialFailed(terminatorId: string, now: number): void {
    const c = this.entry(terminatorId)
    c.failureCost = Math.min(MAX_U32, c.failureCost + FAILURE_COST)
    c.lastFailureAt = now
  }

  circuitRemoved(terminatorId: string): void {
    const c = this.costs.get(terminatorId)
    if (c && c.circuits > 0) c.circuits--
  }

  /** The terminator is gone: it has no cost or mark any more. */
  forget(terminatorId: string): void {
    this.costs.delete(terminatorId)
    this.haFailed.delete(terminatorId)
  }

  /** The minute's credit: each failure cost falls by 2^(minutes since its last failure / 5). */
  creditAll(now: number): void {
    for (const [id, c] of this.costs) {
      if (c.failureCost > 0) {
        const credit = Math.min(MAX_U32, Math.floor(2 ** ((now - c.lastFailureAt) / 300_000)))
        c.failureCost = Math.max(0, c.failureCost - credit)
      }
      if (c.failureCost === 0 && c.circuits === 0) this.costs.delete(id)
    }
  }

  private entry(terminatorId: string): TerminatorCost {
    let c = this.costs.get(terminatorId)
    if (!c) this.costs.set(terminatorId, (c = { circuits: 0, failureCost: 0, lastFailureAt: 0 }))
    return c
  }
}
