/**
 * What the terminators feature's handlers share: the graph (reads and writes), the policy index, the session check,
 * the bounded write queue, and the per-router bound on requests in progress. Writes go through `write`: admitted by
 * the write queue (the real controller's command rate limiter) or answered busy, and a cluster without a leader is
 * busy too (the router asks again), any other failure an error the router may retry.
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Logger } from '../../lib/logger.ts'
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { PolicyGraphMsg, PolicyGraphReplies } from '../../actors/policy-graph/policy-graph-messages.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { RouterSessionCheck } from '../../flows/routers/router-session-check.ts'
import type { ConnectedRouter, RouterRegistry } from '../control-routers.ts'

/** The bounded queue of model writes, shared with the APIs (http/http-write-queue.ts). */
export interface WriteGate {
  tryEnter(): boolean
  leave(): void
}

/** The graph as the handlers use it: its reads, and the terminator messages. */
export interface TerminatorGraph {
  snapshot(): PolicyGraphReads
  ask<T extends PolicyGraphMsg>(msg: T): Promise<PolicyGraphReplies[T['type']]>
}

export interface TerminatorContext {
  registry: RouterRegistry
  graph: TerminatorGraph
  /** Edge routers usable for an identity and a service (the policy index). */
  policy: { routersFor(identityId: string, serviceId: string): readonly string[] }
  checkSession: RouterSessionCheck
  /** This node's id: a created terminator's `sourceCtrl`. */
  controllerId: string
  logger: Logger
  /** A write admitted by the write queue, or why not. */
  write<T>(fn: () => Promise<T>): Promise<WriteOutcome<T>>
  /** Takes one of the router connection's request slots; false when all are in use (the request is answered busy). */
  takeSlot(router: ConnectedRouter): boolean
  giveSlot(router: ConnectedRouter): void
  /** Counts a health event an SDK reported. */
  healthChecked(passed: boolean): void
}

export type WriteOutcome<T> = { ok: true; value: T } | { ok: false; busy: boolean; message: string }

/**
 * Requests one router connection may have in progress at once; more are answered busy (FailedBusy, the busy Result,
 * an edge error with the TooBusy hint; a health event is dropped), so a flood cannot pile up. What a request in
 * progress holds is bounded (its tokens by the session check, its terminator by TERMINATOR_LIMITS).
 */
export const ROUTER_REQUEST_SLOTS = 256

/** A write through the write queue: busy when it is full or the cluster has no leader. */
export async function gatedWrite<T>(gate: WriteGate, fn: () => Promise<T>): Promise<WriteOutcome<T>> {
  if (!gate.tryEnter()) return { ok: false, busy: true, message: 'too many updates are waiting; try again later' }
  try {
    return { ok: true, value: await fn() }
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, busy: e.code === 'CLUSTER_NO_LEADER', message: e.message }
    return { ok: false, busy: false, message: e instanceof Error ? e.message : String(e) }
  } finally {
    gate.leave()
  }
}

/** The change context of a router's request: the identity it was made for, or the router itself. */
export function controlChange(author: string): ChangeContext {
  return { author, source: 'control' }
}

/**
 * Whether the router is still known and this is its current connection; a router deleted meanwhile has its channel
 * closed (as the real controller does when it cannot find the router of a request).
 */
export function isCurrent(ctx: Pick<TerminatorContext, 'registry' | 'graph' | 'logger'>, router: ConnectedRouter): boolean {
  if (ctx.registry.get(router.id) !== router) return false
  if (ctx.graph.snapshot().routers.has(router.id)) return true
  ctx.logger.warn({ routerId: router.id }, 'a terminator request came from a router that is no longer known; closing its channel')
  router.channel.close('the router is no longer known')
  return false
}
