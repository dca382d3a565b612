/**
 * The series of /metrics. HTTP: answered requests counted and timed per route template, method and status. Each route
 * gets its recorder when the app is built; a recorder keeps the series of each status it has seen, so recording a
 * request is a map lookup by number and two additions.
 */
import { Counter, Gauge, Histogram, type CounterSeries, type HistogramSeries, type MetricsRegistry } from '../lib/metrics.ts'
import type { ActorObserver, MailboxView } from '../actors/runtime/actor-runtime.ts'

/** Records one answered request: its status and the time spent in the app, in ms. */
export type RequestRecorder = (status: number, ms: number) => void

export interface HttpMetrics {
  /** The recorder of one route (`template` is the full path with its API prefix, e.g. `/edge/client/v1/services/:id`). */
  route(method: string, template: string): RequestRecorder
  /** The recorder of requests no route matched (404, 405) and of the root routes. */
  readonly other: RequestRecorder
}

export function createHttpMetrics(registry: MetricsRegistry): HttpMetrics {
  const count = registry.register(new Counter('edgeplane_http_requests_total', 'HTTP requests answered', ['method', 'route', 'status']))
  const latency = registry.register(
    new Histogram('edgeplane_http_request_duration_seconds', 'Time spent answering HTTP requests', ['method', 'route', 'status']),
  )
  const recorder = (method: string, template: string): RequestRecorder => {
    const byStatus = new Map<number, { c: CounterSeries; h: HistogramSeries }>()
    return (status, ms) => {
      let s = byStatus.get(status)
      if (!s) {
        const code = String(status)
        byStatus.set(status, (s = { c: count.labels(method, template, code), h: latency.labels(method, template, code) }))
      }
      s.c.inc()
      s.h.observe(ms / 1000)
    }
  }
  // unmatched paths share one label: a client inventing paths cannot grow the series without bound
  return { route: recorder, other: recorder('any', 'other') }
}

/** Buckets of the client service list's size: from none to the 'large' scenario's tens of thousands. */
const SERVICE_LIST_BUCKETS = [0, 1, 5, 10, 50, 100, 500, 1000, 5000, 10_000, 50_000]

/** What the controller-wide series read at scrape time. */
export interface ControllerSources {
  mailboxes: readonly MailboxView[]
  /** Bytes the LMDB environment uses (its file). */
  lmdbSizeBytes(): number
  apiSessions(): number
  services(): number
  /** Admitted write requests in progress (the write queue). */
  writeQueueDepth(): number
  /** The auth window: its current size and the authentications in it. */
  authWindow(): { size: number; inFlight: number }
}

/** The actor, store, session and login series; answers the observer the actor runtime reports to. */
export function createControllerMetrics(
  registry: MetricsRegistry,
  sources: ControllerSources,
): { observer: ActorObserver; login: (method: string, outcome: string) => void; serviceListed: (count: number) => void } {
  const handler = registry.register(new Histogram('edgeplane_actor_handler_seconds', 'Time an actor spent handling one message', ['actor']))
  const commit = registry.register(new Histogram('edgeplane_lmdb_commit_seconds', 'Time from staging writes to their durable LMDB commit'))
  registry.register(
    new Gauge('edgeplane_actor_mailbox_depth', 'Messages queued in an actor mailbox (the one being handled included)', ['actor'], () =>
      sources.mailboxes.map((m) => [[m.name], m.mailboxDepth()] as const),
    ),
  )
  registry.register(new Gauge('edgeplane_lmdb_size_bytes', 'Size of the LMDB environment file', [], () => [[[], sources.lmdbSizeBytes()]]))
  registry.register(new Gauge('edgeplane_api_sessions', 'Live API sessions', [], () => [[[], sources.apiSessions()]]))
  registry.register(new Gauge('edgeplane_services', 'Services stored (the size of the full service list)', [], () => [[[], sources.services()]]))
  registry.register(new Gauge('edgeplane_write_queue_depth', 'Write requests admitted and not yet answered', [], () => [[[], sources.writeQueueDepth()]]))
  registry.register(
    new Gauge('edgeplane_auth_window', 'The adaptive authentication window: its size and the authentications in it', ['kind'], () => {
      const w = sources.authWindow()
      return [[['size'], w.size], [['in_flight'], w.inFlight]]
    }),
  )
  const listed = registry.register(
    new Histogram('edgeplane_client_service_list_size', 'Services a Client API service list could show its caller', [], SERVICE_LIST_BUCKETS),
  ).labels()
  const logins = registry.register(new Counter('edgeplane_logins_total', 'API-session creations by method and outcome', ['method', 'outcome']))
  const handlerSeries = new Map<string, HistogramSeries>()
  const commitSeries = commit.labels()
  const loginSeries = new Map<string, CounterSeries>()
  return {
    observer: {
      handled(actor, ms) {
        let s = handlerSeries.get(actor)
        if (!s) handlerSeries.set(actor, (s = handler.labels(actor)))
        s.observe(ms / 1000)
      },
      committed(ms) {
        commitSeries.observe(ms / 1000)
      },
    },
    serviceListed(count) {
      listed.observe(count)
    },
    login(method, outcome) {
      const key = `${method}\n${outcome}`
      let s = loginSeries.get(key)
      if (!s) loginSeries.set(key, (s = logins.labels(method, outcome)))
      s.inc()
    },
  }
}

/** What the listener reports of its connections (http-listener.ts). */
export interface ConnectionObserver {
  /** A new connection was refused at a limit (maxConnections or maxConnectionsPerAddress). */
  refused(): void
  /** A connection was closed past the deadline of `phase` (handshake, headers, body, write, idle). */
  timedOut(phase: string): void
}

/** The listener's series: open connections (read at scrape time), those refused at a limit, those timed out per phase. */
export function createConnectionMetrics(registry: MetricsRegistry, open: () => number): ConnectionObserver {
  registry.register(new Gauge('edgeplane_connections_open', 'Open connections of the listener, TLS handshakes included', [], () => [[[], open()]]))
  const refused = registry
    .register(new Counter('edgeplane_connections_refused_total', 'New connections closed at once: the limit in all or per source address was reached'))
    .labels()
  const timedOut = registry.register(
    new Counter('edgeplane_connections_timed_out_total', 'Connections closed past the deadline of their phase', ['phase']),
  )
  const byPhase = new Map<string, CounterSeries>()
  return {
    refused: () => refused.inc(),
    timedOut(phase) {
      let s = byPhase.get(phase)
      if (!s) byPhase.set(phase, (s = timedOut.labels(phase)))
      s.inc()
    },
  }
}

/** What the cluster series read at scrape time (a cluster node's log; undefined until it is open). */
export interface ClusterSources {
  log(): { revision: number; lagRevisions: number } | undefined
}

/**
 * A cluster node's series: its applied revision and how many revisions etcd has that it has not applied (gauges), and
 * the apply lag of the commands other nodes proposed (the time from the proposer's clock reading to this node's
 * apply). Answers what the log reports each such command to (`onRemoteApplied`, in ms).
 */
export function createClusterMetrics(registry: MetricsRegistry, sources: ClusterSources): { remoteApplied(lagMs: number): void } {
  const gauge = (pick: (l: { revision: number; lagRevisions: number }) => number) => () => {
    const l = sources.log()
    return l ? [[[], pick(l)] as const] : []
  }
  registry.register(new Gauge('edgeplane_cluster_applied_revision', 'The etcd revision of the last command this node applied', [], gauge((l) => l.revision)))
  registry.register(new Gauge('edgeplane_cluster_lag_revisions', 'Revisions of the log etcd has that this node has not applied yet', [], gauge((l) => l.lagRevisions)))
  const lag = registry
    .register(new Histogram('edgeplane_cluster_apply_lag_seconds', 'Time from the proposer\'s clock reading to this node\'s apply, of commands other nodes proposed'))
    .labels()
  return {
    // clocks of two machines: a skew can make it negative, which is no lag
    remoteApplied: (lagMs) => lag.observe(Math.max(0, lagMs) / 1000),
  }
}
