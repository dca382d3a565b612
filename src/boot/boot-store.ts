/**
 * The first stage of startServer: the LMDB store (a cluster member behind etcd's compaction point first takes a live
 * member's state), the event bus, the metrics registry with the controller's own series, the write queue, and the
 * dependencies every actor is started with. Opens nothing else.
 */
import { statSync } from 'node:fs'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { MetricsRegistry } from '../lib/metrics.ts'
import { openStore, type Store } from '../store/store-env.ts'
import { EventBus } from '../actors/runtime/event-bus.ts'
import type { ActorSystemDeps, MailboxView } from '../actors/runtime/actor-runtime.ts'
import { prepareClusterStore } from '../cluster/cluster-node.ts'
import { createControllerMetrics, createHttpMetrics, type HttpMetrics } from '../http/http-metrics.ts'
import { createWriteQueue, WRITE_QUEUE_DEFAULTS, type WriteQueue } from '../http/http-write-queue.ts'
import type { ServerOptions } from './boot-options.ts'

/** What the later stages read of the running controller for its gauges (called at scrape time, once all exist). */
export interface StoreGauges {
  apiSessions(): number
  services(): number
  authWindow(): { size: number; inFlight: number }
}

export interface StoreParts {
  store: Store
  bus: EventBus
  registry: MetricsRegistry
  httpMetrics: HttpMetrics
  writeQueue: WriteQueue
  /** The actors' mailboxes, for the metrics and the health check; each stage pushes the actors it starts. */
  mailboxes: MailboxView[]
  controllerMetrics: ReturnType<typeof createControllerMetrics>
  deps: ActorSystemDeps
}

export async function bootStore(
  opts: ServerOptions,
  ctx: { clock: Clock; logger: Logger; log: (line: string) => void; startedAt: number; gauges: StoreGauges },
): Promise<StoreParts> {
  const { clock, logger, log, startedAt } = ctx
  let store = await openStore(opts.dataDir, { warn: log, now: startedAt })
  if (opts.cluster) {
    // a member behind etcd's compaction point gets a live member's state first (cluster/cluster-snapshot.ts)
    store = await prepareClusterStore({
      settings: opts.cluster,
      dataDir: opts.dataDir,
      store,
      reopen: () => openStore(opts.dataDir, { warn: log, now: startedAt }),
      note: log,
      now: () => clock.now(),
    })
  }
  const opened = store
  const bus = new EventBus()
  const registry = new MetricsRegistry()
  const httpMetrics = createHttpMetrics(registry)
  const writeQueue = createWriteQueue({ ...WRITE_QUEUE_DEFAULTS, ...opts.writeQueue })
  // the actors are known only once started: the controller series read them through this list
  const mailboxes: MailboxView[] = []
  const controllerMetrics = createControllerMetrics(registry, {
    mailboxes,
    lmdbSizeBytes: () => statSync(opened.path).size,
    apiSessions: () => ctx.gauges.apiSessions(),
    services: () => ctx.gauges.services(),
    writeQueueDepth: () => writeQueue.depth,
    authWindow: () => ctx.gauges.authWindow(),
  })
  const deps: ActorSystemDeps = {
    store,
    clock,
    bus,
    cloneMessages: opts.cloneMessages,
    observer: controllerMetrics.observer,
    failStop: (err) => {
      logger.error({ err: String(err) }, 'fatal: a commit to LMDB failed; stopping so the next start reloads from disk')
      process.exit(70)
    },
  }
  return { store, bus, registry, httpMetrics, writeQueue, mailboxes, controllerMetrics, deps }
}
