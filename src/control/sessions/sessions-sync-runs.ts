/**
 * The full states of API sessions sent to each router (the sync after its ClientHello, and the resyncs it asks for),
 * as state of its own apart from what a full state holds:
 * - one at a time per router: a new one supersedes the one under way, which stops before its next message (the
 *   router drops a sync once one with a greater id begins; each run gets a new id from `SyncIds`);
 * - a router's requests (RequestClientReSync) are paced: one starts at once when the router's last full state began
 *   `minGapMs` ago or more, else once that much time has passed; the requests meanwhile make that one run, not more
 *   (a router flooding requests gets at most one full state per `minGapMs`);
 * - a router forgotten (its channel closed) or a stop ends its runs and timers.
 */
import type { SyncIds } from './sessions-sync.ts'

export interface SyncRunDeps<R> {
  /** Sends a full state to `router` under `syncId`; `isCurrent()` turns false once the run is superseded or ended. */
  run(router: R, syncId: string, isCurrent: () => boolean): Promise<void>
  ids: SyncIds
  /** A monotonic clock in ms (performance.now). */
  monotonicMs(): number
  minGapMs: number
  /** A run that failed, or a paced one that could not start (logged by the caller). */
  failed(router: R, err: unknown): void
}

interface RouterRuns {
  generation: number
  startedAt: number
  timer: ReturnType<typeof setTimeout> | undefined
}

export class SessionSyncRuns<R extends object> {
  private readonly byRouter = new Map<R, RouterRuns>()
  private generation = 0
  private stopped = false

  constructor(private readonly deps: SyncRunDeps<R>) {}

  /** A full state for `router` now (its sync), superseding one under way; resolves when the run ends. */
  start(router: R): Promise<void> {
    if (this.stopped) return Promise.resolve()
    const generation = ++this.generation
    const entry = this.byRouter.get(router) ?? { generation, startedAt: 0, timer: undefined }
    if (entry.timer) clearTimeout(entry.timer)
    Object.assign(entry, { generation, startedAt: this.deps.monotonicMs(), timer: undefined })
    this.byRouter.set(router, entry)
    return this.deps.run(router, this.deps.ids.next(), () => !this.stopped && this.byRouter.get(router)?.generation === generation)
  }

  /** The router asked for a resync: a full state now, or once the pace allows (see the header). */
  ask(router: R): void {
    if (this.stopped) return
    const entry = this.byRouter.get(router)
    if (entry?.timer) return
    const waitMs = entry ? entry.startedAt + this.deps.minGapMs - this.deps.monotonicMs() : 0
    if (waitMs <= 0) {
      this.start(router).catch((e) => this.deps.failed(router, e))
      return
    }
    entry!.timer = setTimeout(() => {
      entry!.timer = undefined
      if (this.byRouter.get(router) === entry) this.start(router).catch((e) => this.deps.failed(router, e))
    }, waitMs)
    entry!.timer.unref?.()
  }

  /** Whether a paced request waits for its time (tests, diagnostics). */
  isWaiting(router: R): boolean {
    return this.byRouter.get(router)?.timer !== undefined
  }

  /** The router left: its run stops before its next message, its waiting request is dropped. */
  forget(router: R): void {
    const entry = this.byRouter.get(router)
    if (entry?.timer) clearTimeout(entry.timer)
    this.byRouter.delete(router)
  }

  stop(): void {
    this.stopped = true
    for (const router of [...this.byRouter.keys()]) this.forget(router)
  }
}
