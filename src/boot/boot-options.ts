/**
 * What startServer takes (ServerOptions) and gives (RunningServer); server.ts re-exports both. Types only, and the
 * body limit the listener and the tests share.
 */
import type { Clock } from '../lib/clock.ts'
import type { HostPort } from '../config/config.ts'
import type { LogLevel } from '../lib/logger.ts'
import type { AuthWindowSettings } from '../flows/authenticate/auth-rate-window.ts'
import type { LoginThrottleSettings } from '../flows/authenticate/auth-throttle.ts'
import type { AuthGate } from '../flows/authenticate/auth-gate.ts'
import type { OidcSettings } from '../flows/oidc/oidc-types.ts'
import type { WriteQueueSettings } from '../http/http-write-queue.ts'
import type { ConnectionLimits } from '../http/http-connections.ts'
import type { RouteDef } from '../http/http-route.ts'
import type { ClusterNode, ClusterSettings } from '../cluster/cluster-node.ts'
import type { ControlPlane } from '../control/control-module.ts'
import type { ControlLimits } from '../control/control-listener.ts'
import type { HeartbeatOptions } from '../control/channel/control-heartbeat.ts'
import type { PublicPki } from '../actors/ca/ca-state.ts'
import type { RdmFeatureOptions } from '../control/rdm/rdm-feature.ts'

/** Request bodies larger than this are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024
export interface ServerOptions {
  dataDir: string
  host?: string
  port?: number
  adminUsername?: string
  adminPassword?: string
  sans?: string[]
  hostname?: string
  sessionTimeoutMs?: number
  /** The address clients reach the controller at; default: the listen address, `localhost` for a wildcard bind. */
  advertise?: HostPort
  /** How long a new enrollment stays redeemable (default 180 minutes). */
  enrollmentDurationMs?: number
  /** The issuer of TOTP provisioning URLs (default openziti.io). */
  totpIssuer?: string
  clock?: Clock
  /**
   * Where the log goes, one JSON object per line (start-up notes, the generated admin password among them, and one
   * line per answered request). Defaults to stderr.
   */
  log?: (line: string) => void
  /** The least level logged (default info). */
  logLevel?: LogLevel
  /** The adaptive window of API-session creation (the real controller's edge.authRateLimiter). */
  authWindow?: Partial<AuthWindowSettings>
  /** The throttle of failed logins per source address and per username. */
  loginThrottle?: Partial<LoginThrottleSettings>
  /** OIDC sign-in (`/oidc`, bearer tokens); unset members: the defaults (on, 30 m access and id tokens, 24 h refresh). */
  oidc?: Partial<OidcSettings>
  /** Serve the web console at `/console/` (default true). */
  console?: boolean
  /** Send `server-timing: app;dur=<ms>` on every answer (default false: http/http-app.ts AppDeps). */
  serverTiming?: boolean
  /** The bounded queue of write requests (the real controller's command rate limiter). */
  writeQueue?: Partial<WriteQueueSettings>
  /** A separate plain-HTTP address serving /metrics without a session; absent = /metrics on the listener, admins only. */
  metricsListen?: HostPort
  /** Issue a new server certificate from the intermediate at start (same CA, key and file names; new validity, SANs). */
  renewServerCert?: boolean
  /** How long an actor's oldest queued message may wait before the health check calls it stuck (default 10 s). */
  healthStuckAfterMs?: number
  /** Prove that actor messages are plain data (tests). */
  cloneMessages?: boolean
  /** Intervals of the session sweeper and the activity flush (tests shorten them). */
  sessionSweepEveryMs?: number
  activityFlushEveryMs?: number
  /** Interval of the policy enforcer that removes service sessions whose access was lost. */
  enforceEveryMs?: number
  /** The least time between two fetches of a signer's JWKS endpoint for an unknown kid (default 5 s; tests: 0). */
  jwksCooldownMs?: number
  /** Where database snapshots go (`POST /database/snapshot`, the integrity fix); default: the data directory. */
  snapshotDir?: string
  /** Limits of the listener's connections and requests (unset members: CONNECTION_LIMIT_DEFAULTS). */
  connectionLimits?: Partial<ConnectionLimits>
  /**
   * Log an exception or rejection that nothing caught and keep running (`edgeplane run`; lib/last-resort.ts), instead
   * of the runtime's default of ending the process. Off in tests, whose runner has its own.
   */
  catchStrayErrors?: boolean
  /** Run as a node of a cluster on etcd (`cluster/cluster-node.ts`); absent = a single node, no etcd. */
  cluster?: ClusterSettings
  /**
   * A separate TLS address for routers' control channels (ALPN `ziti-ctrl`); routers may use the API port either way.
   * Enrollment JWTs name this port when it is set, the API port otherwise.
   */
  ctrlListen?: HostPort
  /** Deadlines and limits of router control connections (tests shorten them). */
  controlLimits?: Partial<ControlLimits>
  /** Heartbeats of router control channels (tests shorten them). */
  controlHeartbeat?: Partial<HeartbeatOptions>
  /** How young a router's connection must be for a new one of the same router to be refused (default 1 minute). */
  routerChurnLimitMs?: number
  /** The router data model's timers and log bounds (tests shorten and shrink them). */
  routerDataModel?: RdmFeatureOptions & { logCapacity?: number; logBytes?: number; lockSweepEveryMs?: number }
  /** Circuit timings (tests shorten them): how long routes are awaited, how long an offline router keeps its circuits. */
  circuits?: { routeTimeoutMs?: number; offlineGraceMs?: number }
  /** How often terminators are validated with their routers when nothing else wakes the loop (default 30 s; tests). */
  terminatorValidateEveryMs?: number
  /** How long a router may be away before the terminators it made for its SDKs go (single node; default 60 s; tests). */
  terminatorOfflineRemoveMs?: number
}

export interface RunningServer {
  /** https://host:port of the listener (localhost for a wildcard bind). */
  url: string
  /** https://host:port clients are told to use (enrollment JWTs, `/version`). */
  advertisedUrl: string
  port: number
  /** The controller PKI without its keys (the CA actor holds them). */
  pki: PublicPki
  clock: Clock
  /** The route table the app serves (tests sweep it). */
  routes: readonly RouteDef[]
  /** The generated admin password when none was given on a new data directory. */
  generatedAdminPassword?: string
  /** http://host:port of the separate metrics address, when one was set. */
  metricsUrl?: string
  /** The authentication gate (its window is read by tests and metrics). */
  authGate: AuthGate
  /** Runs one expiry sweep of API sessions now (the timer does it every few seconds). */
  sweepSessions(): Promise<void>
  /** Removes service sessions whose access was lost, now (the timer does it every few seconds). */
  enforcePolicies(): Promise<void>
  /** Prunes expired revocations now (the timer does it every minute). */
  pruneRevocations(): Promise<void>
  /** The cluster node, when running as one. */
  cluster?: ClusterNode
  /** The routers' control plane: its registry of connected routers, and its own port when `ctrlListen` was set. */
  control: ControlPlane
  /** The control-plane endpoint routers are told (`tls:host:port`, in enrollment JWTs). */
  ctrlEndpoint: string
  stop(): Promise<void>
}

/**
 * The addresses known only once the listener is up: the stages before it read them through this object, at request
 * time (startServer fills it in right after the listener opens).
 */
export interface Addresses {
  /** https://host:port clients are told to use. */
  baseUrl: string
  /** `tls:host:port` routers dial: the advertised host, at the control port or else the API port. */
  ctrlEndpoint: string
  /** The API listener's port. */
  listenPort: number
}
