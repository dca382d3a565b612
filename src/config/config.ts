/**
 * The controller's settings: flags, then environment variables, then an optional YAML file, then defaults.
 * The YAML file is checked against a TypeBox schema; a bad file is a clear startup error, not a silent ignore.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { readFileSync } from 'node:fs'
import { hostname as osHostname } from 'node:os'
import { resolve } from 'node:path'
import { parseDurationMs } from '../lib/duration.ts'
import { LOG_LEVELS, type LogLevel } from '../lib/logger.ts'
import { clusterPrefixProblem, nodeNameProblem, normalizeClusterPrefix, parseClusterEndpoints } from '../lib/cluster-names.ts'

/** The YAML config file: every key optional. */
export const ConfigFileSchema = Type.Object(
  {
    data: Type.Optional(Type.String({ minLength: 1 })),
    listen: Type.Optional(Type.String({ minLength: 1 })),
    adminUsername: Type.Optional(Type.String({ minLength: 4, maxLength: 100 })),
    adminPassword: Type.Optional(Type.String({ minLength: 5, maxLength: 100 })),
    sans: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    sessionTimeout: Type.Optional(Type.String({ minLength: 1 })),
    hostname: Type.Optional(Type.String({ minLength: 1 })),
    advertise: Type.Optional(Type.String({ minLength: 1 })),
    enrollmentDuration: Type.Optional(Type.String({ minLength: 1 })),
    totpIssuer: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    logLevel: Type.Optional(Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)))),
    metricsListen: Type.Optional(Type.String({ minLength: 1 })),
    ctrlListen: Type.Optional(Type.String({ minLength: 1 })),
    /** The real controller's edge.authRateLimiter: the adaptive window of API-session creation. */
    authRateLimiter: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          minSize: Type.Optional(Type.Integer({ minimum: 5, maximum: 1000 })),
          maxSize: Type.Optional(Type.Integer({ minimum: 5, maximum: 1000 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** The real controller's commandRateLimiter: the bounded queue of write requests. */
    commandRateLimiter: Type.Optional(
      Type.Object(
        { enabled: Type.Optional(Type.Boolean()), queueSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })) },
        { additionalProperties: false },
      ),
    ),
    /** The failed-login throttle: per username (or certificate), per address's distinct usernames, known pairs exempt. */
    loginThrottle: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          freeFailures: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
          baseDelay: Type.Optional(Type.String({ minLength: 1 })),
          maxDelay: Type.Optional(Type.String({ minLength: 1 })),
          forgetAfter: Type.Optional(Type.String({ minLength: 1 })),
          knownSource: Type.Optional(Type.String({ minLength: 1 })),
          distinctUsernames: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
          distinctWindow: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    snapshotDir: Type.Optional(Type.String({ minLength: 1 })),
    /** OIDC sign-in (README, "OIDC sign-in"): on by default. */
    oidc: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          accessTokenDuration: Type.Optional(Type.String({ minLength: 1 })),
          idTokenDuration: Type.Optional(Type.String({ minLength: 1 })),
          refreshTokenDuration: Type.Optional(Type.String({ minLength: 1 })),
          redirectURIs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1 })),
          postLogoutURIs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1 })),
          advertiseCsrCapability: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    /** Limits of the listener's connections and requests (README, "Connection limits"). */
    connectionLimits: Type.Optional(
      Type.Object(
        {
          handshakeTimeout: Type.Optional(Type.String({ minLength: 1 })),
          headersTimeout: Type.Optional(Type.String({ minLength: 1 })),
          requestTimeout: Type.Optional(Type.String({ minLength: 1 })),
          keepAliveTimeout: Type.Optional(Type.String({ minLength: 1 })),
          writeTimeout: Type.Optional(Type.String({ minLength: 1 })),
          maxHeaderBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1024 * 1024 })),
          maxHeaders: Type.Optional(Type.Integer({ minimum: 10, maximum: 10_000 })),
          maxConnections: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
          maxConnectionsPerAddress: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** The web console at /console/ (README, "Web console"): on by default. */
    console: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
    /** `server-timing: app;dur=<ms>` on every answer (docs/operators/settings.md): off by default. */
    serverTiming: Type.Optional(Type.Boolean()),
    /** A node of a cluster on etcd (README, "Running a cluster"): all three, or endpoints and nodeName, or none. */
    cluster: Type.Optional(
      Type.Object(
        {
          endpoints: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
          nodeName: Type.Optional(Type.String({ minLength: 1 })),
          prefix: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type ConfigFile = Static<typeof ConfigFileSchema>

/** Resolved settings of a `run`. */
export interface Config {
  dataDir: string
  listenHost: string
  listenPort: number
  adminUsername: string
  adminPassword?: string
  sans: string[]
  sessionTimeoutMs: number
  hostname: string
  /** The address clients reach the controller at (enrollment JWTs, `/version`); unset = the listen address. */
  advertise?: HostPort
  /** How long a new enrollment stays redeemable. */
  enrollmentDurationMs: number
  /** The issuer of TOTP provisioning URLs: what authenticator apps show above the code. */
  totpIssuer: string
  logLevel: LogLevel
  /** A separate plain-HTTP address for /metrics (no session); unset = /metrics on the listener, admins only. */
  metricsListen?: HostPort
  /** A separate TLS address for routers' control channels (ALPN ziti-ctrl); unset = routers use the API port. */
  ctrlListen?: HostPort
  /** The auth window's bounds (unset members: the defaults 5 and 250, enabled). */
  authRateLimiter: { enabled?: boolean; minSize?: number; maxSize?: number }
  /** The write queue (unset members: 100, enabled). */
  commandRateLimiter: { enabled?: boolean; queueSize?: number }
  /** The failed-login throttle, durations in ms (unset members: the defaults). */
  loginThrottle: {
    enabled?: boolean
    freeFailures?: number
    baseDelayMs?: number
    maxDelayMs?: number
    forgetAfterMs?: number
    knownSourceMs?: number
    distinctUsernames?: number
    distinctWindowMs?: number
  }
  /** Where database snapshots go (`POST /database/snapshot`, the integrity fix); unset = the data directory. */
  snapshotDir?: string
  /** OIDC sign-in, durations in ms (unset members: the defaults; minimums applied by the server). */
  oidc: {
    enabled?: boolean
    accessTokenMs?: number
    idTokenMs?: number
    refreshTokenMs?: number
    redirectUris?: string[]
    postLogoutUris?: string[]
    advertiseCsrCapability?: boolean
  }
  /** The listener's connection limits, durations in ms (unset members: the defaults). */
  connectionLimits: {
    handshakeTimeoutMs?: number
    headersTimeoutMs?: number
    requestTimeoutMs?: number
    keepAliveTimeoutMs?: number
    writeTimeoutMs?: number
    maxHeaderBytes?: number
    maxHeaders?: number
    maxConnections?: number
    maxConnectionsPerAddress?: number
  }
  /** A node of a cluster on etcd; unset = a single node (no etcd). */
  cluster?: ClusterConfig
  /** Serve the web console at /console/ (default true). */
  console: boolean
  /** Send `server-timing: app;dur=<ms>` on every answer (default false). */
  serverTiming: boolean
}

/** The cluster settings of a node (src/cluster/cluster-node.ts ClusterSettings). */
export interface ClusterConfig {
  /** etcd client URLs, without a trailing `/`. */
  endpoints: string[]
  nodeName: string
  /** The key prefix in etcd, without a trailing `/`; unset = the default (/edgeplane). */
  prefix?: string
}

export interface HostPort {
  host: string
  port: number
}

export const DEFAULTS = {
  data: './data',
  listen: '127.0.0.1:1280',
  adminUsername: 'admin',
  sessionTimeoutMs: 30 * 60_000,
  enrollmentDurationMs: 180 * 60_000,
  /** The real controller's `edge.totp.hostname` default. */
  totpIssuer: 'openziti.io',
  logLevel: 'info',
} as const

/**
 * Minimum session timeout. A shorter value stops the start with a message (the real controller silently falls back to
 * its default, so an operator's typo went unnoticed).
 */
const MIN_SESSION_TIMEOUT_MS = 60_000
/** Minimum enrollment duration; a shorter value stops the start with a message, as for the session timeout. */
const MIN_ENROLLMENT_DURATION_MS = 5 * 60_000
/** Minimum of the connection timeouts: shorter ones would close ordinary clients on a slow link. */
const MIN_CONNECTION_TIMEOUT_MS = 1_000

/** Settings named on the command line (undefined = not given). */
export interface ConfigFlags {
  config?: string
  data?: string
  listen?: string
  adminUsername?: string
  adminPassword?: string
  sans?: string[]
  sessionTimeout?: string
  advertise?: string
  enrollmentDuration?: string
  totpIssuer?: string
  logLevel?: string
  metricsListen?: string
  ctrlListen?: string
  snapshotDir?: string
  /** etcd client URLs, comma separated (repeatable flag: the texts are joined). */
  clusterEndpoints?: string[]
  nodeName?: string
  /** `--no-console`: true turns the web console off. */
  noConsole?: boolean
  /** `--server-timing`: true sends the server-timing header. */
  serverTiming?: boolean
}

export class ConfigError extends Error {}

export function parseListen(text: string, what = 'listen'): HostPort {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim())
  if (!m) throw new ConfigError(`${what} address '${text}' is not host:port`)
  const port = Number(m[3])
  if (port > 65535) throw new ConfigError(`${what} port ${port} is out of range`)
  return { host: m[1] ?? m[2], port }
}

/** The address to advertise for a listener bound to `listen`: the same, with `localhost` for a wildcard bind. */
export function defaultAdvertise(listen: HostPort): HostPort {
  const wildcard = listen.host === '0.0.0.0' || listen.host === '::' || listen.host === '[::]'
  return { host: wildcard ? 'localhost' : listen.host, port: listen.port }
}

/** `host:port`, with IPv6 hosts in brackets (as in a URL). */
export function formatHostPort({ host, port }: HostPort): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

/** A duration setting: `text` parsed (e.g. 30m), `dflt` when absent or below `minMs`, as the real controller does. */
function durationSetting(what: string, text: string | undefined, dflt: number, minMs: number): number {
  if (text === undefined) return dflt
  const ms = parseDurationMs(text)
  if (ms === undefined) throw new ConfigError(`${what} '${text}' is not a duration such as 30m`)
  if (ms < minMs) throw new ConfigError(`${what} '${text}' is shorter than its minimum ${formatMinutes(minMs)}`)
  return ms
}

function formatMinutes(ms: number): string {
  return `${ms / 60_000}m`
}

function readConfigFile(path: string): ConfigFile {
  let raw: unknown
  try {
    // loaded only when there is a file to read (most starts have none; the YAML library takes ~50 ms to load)
    const { parse: parseYaml } = require('yaml') as typeof import('yaml')
    raw = parseYaml(readFileSync(path, 'utf8')) ?? {}
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`)
  }
  if (!Value.Check(ConfigFileSchema, raw)) {
    const err = [...Value.Errors(ConfigFileSchema, raw)][0]
    throw new ConfigError(`config file ${path}: ${err.path || '/'}: ${err.message}`)
  }
  return raw
}

/** Merges flags, environment and file into a Config. */
export function resolveConfig(flags: ConfigFlags, env: Record<string, string | undefined>): Config {
  const file = flags.config ? readConfigFile(flags.config) : {}
  const data = flags.data ?? env.EDGEPLANE_DATA ?? file.data ?? DEFAULTS.data
  const listen = parseListen(flags.listen ?? env.EDGEPLANE_LISTEN ?? file.listen ?? DEFAULTS.listen)
  const adminUsername = flags.adminUsername ?? env.EDGEPLANE_ADMIN_USERNAME ?? file.adminUsername ?? DEFAULTS.adminUsername
  const adminPassword = flags.adminPassword ?? env.EDGEPLANE_ADMIN_PASSWORD ?? file.adminPassword
  if (adminUsername.length < 4 || adminUsername.length > 100) throw new ConfigError('admin username must be 4 to 100 characters')
  if (adminPassword !== undefined && (adminPassword.length < 5 || adminPassword.length > 100)) {
    throw new ConfigError('admin password must be 5 to 100 characters')
  }
  const envSans = env.EDGEPLANE_SANS ? env.EDGEPLANE_SANS.split(',').map((s) => s.trim()).filter(Boolean) : undefined
  const sans = flags.sans && flags.sans.length > 0 ? flags.sans : (envSans ?? file.sans ?? [])
  const sessionTimeoutMs = durationSetting(
    'session timeout',
    flags.sessionTimeout ?? env.EDGEPLANE_SESSION_TIMEOUT ?? file.sessionTimeout,
    DEFAULTS.sessionTimeoutMs,
    MIN_SESSION_TIMEOUT_MS,
  )
  const enrollmentDurationMs = durationSetting(
    'enrollment duration',
    flags.enrollmentDuration ?? env.EDGEPLANE_ENROLLMENT_DURATION ?? file.enrollmentDuration,
    DEFAULTS.enrollmentDurationMs,
    MIN_ENROLLMENT_DURATION_MS,
  )
  const advertiseText = flags.advertise ?? env.EDGEPLANE_ADVERTISE ?? file.advertise
  const totpIssuer = flags.totpIssuer ?? env.EDGEPLANE_TOTP_ISSUER ?? file.totpIssuer ?? DEFAULTS.totpIssuer
  if (totpIssuer.trim() === '' || totpIssuer.length > 255) throw new ConfigError('TOTP issuer must be 1 to 255 characters')
  const logLevel = flags.logLevel ?? env.EDGEPLANE_LOG_LEVEL ?? file.logLevel ?? DEFAULTS.logLevel
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError(`log level '${logLevel}' is not one of ${LOG_LEVELS.join(', ')}`)
  const metricsListen = flags.metricsListen ?? env.EDGEPLANE_METRICS_LISTEN ?? file.metricsListen
  const ctrlListen = flags.ctrlListen ?? env.EDGEPLANE_CTRL_LISTEN ?? file.ctrlListen
  const window = file.authRateLimiter ?? {}
  if (window.minSize !== undefined && window.maxSize !== undefined && window.minSize > window.maxSize) {
    throw new ConfigError(`authRateLimiter.minSize ${window.minSize} is larger than maxSize ${window.maxSize}`)
  }
  const throttle = file.loginThrottle ?? {}
  const throttleMs = (key: 'baseDelay' | 'maxDelay' | 'forgetAfter' | 'knownSource' | 'distinctWindow') => {
    const text = throttle[key]
    return text === undefined ? undefined : durationSetting(`loginThrottle.${key}`, text, 0, 0)
  }
  const snapshotDir = flags.snapshotDir ?? env.EDGEPLANE_SNAPSHOT_DIR ?? file.snapshotDir
  const oidc = file.oidc ?? {}
  const oidcMs = (key: 'accessTokenDuration' | 'idTokenDuration' | 'refreshTokenDuration') => {
    const text = oidc[key]
    return text === undefined ? undefined : durationSetting(`oidc.${key}`, text, 0, 60_000)
  }
  const oidcEnv = env.EDGEPLANE_OIDC
  if (oidcEnv !== undefined && oidcEnv !== 'on' && oidcEnv !== 'off') throw new ConfigError(`EDGEPLANE_OIDC '${oidcEnv}' is not on or off`)
  const cluster = clusterSetting(flags, env, file)
  const consoleEnv = env.EDGEPLANE_CONSOLE
  if (consoleEnv !== undefined && consoleEnv !== 'on' && consoleEnv !== 'off') throw new ConfigError(`EDGEPLANE_CONSOLE '${consoleEnv}' is not on or off`)
  const consoleOn = flags.noConsole ? false : consoleEnv !== undefined ? consoleEnv === 'on' : (file.console?.enabled ?? true)
  const timingEnv = env.EDGEPLANE_SERVER_TIMING
  if (timingEnv !== undefined && timingEnv !== 'on' && timingEnv !== 'off') throw new ConfigError(`EDGEPLANE_SERVER_TIMING '${timingEnv}' is not on or off`)
  const serverTiming = flags.serverTiming ? true : timingEnv !== undefined ? timingEnv === 'on' : (file.serverTiming ?? false)
  const limits = file.connectionLimits ?? {}
  const limitMs = (key: 'handshakeTimeout' | 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'writeTimeout') => {
    const text = limits[key]
    return text === undefined ? undefined : durationSetting(`connectionLimits.${key}`, text, 0, MIN_CONNECTION_TIMEOUT_MS)
  }
  return {
    dataDir: resolve(data),
    listenHost: listen.host,
    listenPort: listen.port,
    adminUsername,
    adminPassword,
    sans,
    sessionTimeoutMs,
    hostname: file.hostname ?? osHostname(),
    advertise: advertiseText !== undefined ? parseListen(advertiseText, 'advertise') : undefined,
    enrollmentDurationMs,
    totpIssuer,
    logLevel: logLevel as LogLevel,
    metricsListen: metricsListen !== undefined ? parseListen(metricsListen, 'metrics listen') : undefined,
    ctrlListen: ctrlListen !== undefined ? parseListen(ctrlListen, 'ctrl listen') : undefined,
    authRateLimiter: window,
    commandRateLimiter: file.commandRateLimiter ?? {},
    loginThrottle: {
      enabled: throttle.enabled,
      freeFailures: throttle.freeFailures,
      baseDelayMs: throttleMs('baseDelay'),
      maxDelayMs: throttleMs('maxDelay'),
      forgetAfterMs: throttleMs('forgetAfter'),
      knownSourceMs: throttleMs('knownSource'),
      distinctUsernames: throttle.distinctUsernames,
      distinctWindowMs: throttleMs('distinctWindow'),
    },
    snapshotDir: snapshotDir ? resolve(snapshotDir) : undefined,
    oidc: {
      enabled: oidcEnv !== undefined ? oidcEnv === 'on' : oidc.enabled,
      accessTokenMs: oidcMs('accessTokenDuration'),
      idTokenMs: oidcMs('idTokenDuration'),
      refreshTokenMs: oidcMs('refreshTokenDuration'),
      redirectUris: oidc.redirectURIs,
      postLogoutUris: oidc.postLogoutURIs,
      advertiseCsrCapability: oidc.advertiseCsrCapability,
    },
    connectionLimits: {
      handshakeTimeoutMs: limitMs('handshakeTimeout'),
      headersTimeoutMs: limitMs('headersTimeout'),
      requestTimeoutMs: limitMs('requestTimeout'),
      keepAliveTimeoutMs: limitMs('keepAliveTimeout'),
      writeTimeoutMs: limitMs('writeTimeout'),
      maxHeaderBytes: limits.maxHeaderBytes,
      maxHeaders: limits.maxHeaders,
      maxConnections: limits.maxConnections,
      maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
    },
    cluster,
    console: consoleOn,
    serverTiming,
  }
}

/**
 * The etcd endpoints and key prefix, each from its flag, then its environment variable, then the config file (what
 * `edgeplane cluster` needs: no node name), and the data directory as `run` resolves it (`cluster remove` seals its
 * command with the sealing key of a member's data directory). Undefined endpoints when none is set anywhere.
 */
export function resolveClusterAccess(
  flags: { clusterEndpoints?: string[]; prefix?: string; config?: string; data?: string },
  env: Record<string, string | undefined>,
  file: ConfigFile = flags.config ? readConfigFile(flags.config) : {},
): { endpoints?: string[]; prefix?: string; dataDir: string } {
  const endpointsInput = flags.clusterEndpoints?.length ? flags.clusterEndpoints : env.EDGEPLANE_CLUSTER_ENDPOINTS?.trim() ? env.EDGEPLANE_CLUSTER_ENDPOINTS : file.cluster?.endpoints
  let endpoints: string[] | undefined
  if (endpointsInput !== undefined) {
    const parsed = parseClusterEndpoints(endpointsInput)
    if ('problem' in parsed) throw new ConfigError(parsed.problem)
    endpoints = parsed.endpoints
  }
  const prefix = flags.prefix ?? (env.EDGEPLANE_CLUSTER_PREFIX?.trim() || undefined) ?? file.cluster?.prefix
  if (prefix !== undefined) {
    const problem = clusterPrefixProblem(prefix)
    if (problem) throw new ConfigError(problem)
  }
  const dataDir = resolve(flags.data ?? env.EDGEPLANE_DATA ?? file.data ?? DEFAULTS.data)
  return { endpoints, prefix: prefix === undefined ? undefined : normalizeClusterPrefix(prefix), dataDir }
}

/** The cluster settings of `run`: endpoints and node name both set (a cluster node) or neither (a single node). */
function clusterSetting(flags: ConfigFlags, env: Record<string, string | undefined>, file: ConfigFile): ClusterConfig | undefined {
  const { endpoints, prefix } = resolveClusterAccess({ clusterEndpoints: flags.clusterEndpoints }, env, file)
  const nodeName = flags.nodeName ?? (env.EDGEPLANE_NODE_NAME?.trim() || undefined) ?? file.cluster?.nodeName
  if (endpoints === undefined && nodeName === undefined) {
    if (prefix !== undefined) {
      throw new ConfigError('a cluster prefix is set, but no cluster endpoints and node name: set both to run as a cluster node (--cluster-endpoints, --node-name), or remove the prefix')
    }
    return undefined
  }
  if (endpoints === undefined) {
    throw new ConfigError(
      `node name '${nodeName}' is set, but no cluster endpoints: a cluster node needs both (--cluster-endpoints URL[,URL...], EDGEPLANE_CLUSTER_ENDPOINTS or cluster.endpoints)`,
    )
  }
  if (nodeName === undefined) {
    throw new ConfigError('cluster endpoints are set, but no node name: a cluster node needs both (--node-name NAME, EDGEPLANE_NODE_NAME or cluster.nodeName)')
  }
  const problem = nodeNameProblem(nodeName)
  if (problem) throw new ConfigError(problem)
  return prefix === undefined ? { endpoints, nodeName } : { endpoints, nodeName, prefix }
}
