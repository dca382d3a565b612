/**
 * A feature of the control plane (the router data model, API sessions, terminators, …): the handlers it adds to a
 * router's channel, its part of synchronizing an edge router after the ClientHello, and what it does when a router
 * leaves. control-module.ts runs the features it is given; each lives in its own folder and is wired in
 * src/boot/boot-control.ts, so adding one touches neither the module nor the other features.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { MetricsRegistry } from '../lib/metrics.ts'
import type { ControlHandler } from './channel/control-channel.ts'
import type { ConnectedRouter, RouterRegistry } from './control-routers.ts'

/** What every feature is given by the control plane it runs in. */
export interface FeatureContext {
  registry: RouterRegistry
  clock: Clock
  logger: Logger
  metrics: MetricsRegistry
}

export interface ControlFeature {
  /** For logs and errors. */
  readonly name: string
  /** Handlers of a router's channel by content type (a content type may be taken by one feature only). */
  handlers?(router: ConnectedRouter): Iterable<readonly [number, ControlHandler]>
  /**
   * Its part of synchronizing an edge router once its ClientHello is in (SYNC_IN_PROGRESS → SYNC_DONE), run in the
   * order the features were given; a rejection makes the router's status SYNC_ERROR.
   */
  synchronize?(router: ConnectedRouter): Promise<void>
  /** The router's channel closed (after the registry let it go). */
  disconnected?(router: ConnectedRouter, reason: string): void
  /** The control plane stops: timers and subscriptions end (channels are closed after). */
  stop?(): void | Promise<void>
}

/** Makes the features once the registry exists. */
export type FeatureFactory = (ctx: FeatureContext) => readonly ControlFeature[]
