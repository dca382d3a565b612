#!/usr/bin/env bun
/**
 * The edgeplane command line: `run` (the controller), `version`, `validate-router-config`, `backup`, `restore`,
 * `status`, `explain`, `preview`, `--help`.
 * Settings: flags, then environment variables, then `--config FILE`, then defaults.
 */
import { parseArgs } from 'node:util'
import { ConfigError, resolveConfig, type ConfigFlags } from './config/config.ts'
import { startServer } from './server.ts'
import { VERSION, REVISION, BUILD_DATE } from './version.ts'
import { OPERATE_HELP } from './operate/operate-help.ts'
import { INSIGHT_HELP } from './cli/cli-insight.ts'
import { CLUSTER_HELP } from './cluster/cluster-help.ts'

const HELP = `edgeplane ${VERSION}: controller for a zero-trust overlay network

Usage:
  edgeplane run [flags]                       start the controller in the foreground
  edgeplane version                           print version, revision and build date
  edgeplane validate-router-config FILE...    check router configuration files ('-' reads stdin)
  edgeplane backup | restore | status ...     operations (below)
  edgeplane cluster status | remove NAME      a cluster on etcd: its nodes and etcd's health; retire a node (below)
  edgeplane explain --identity NAME --service NAME|--edge-router NAME
                                              why an identity can or cannot reach a service or router (running controller)
  edgeplane preview --file change.json        what a policy or role attribute change would do, without applying it
  edgeplane --help                            this text

Flags of 'run' (flag, then environment variable, then config file key, then default):
  --config FILE           YAML file with any of the keys below                 EDGEPLANE_CONFIG
  --data DIR              data directory (LMDB, PKI)       key: data           EDGEPLANE_DATA             default ./data
  --listen HOST:PORT      HTTPS listen address             key: listen         EDGEPLANE_LISTEN           default 127.0.0.1:1280
  --admin-username NAME   first admin's username           key: adminUsername  EDGEPLANE_ADMIN_USERNAME   default admin
  --admin-password PASS   first admin's password           key: adminPassword  EDGEPLANE_ADMIN_PASSWORD   default: generated, printed once on stderr
  --san NAME              extra server certificate name (repeatable)  key: sans  EDGEPLANE_SANS (comma separated)
  --session-timeout DUR   API session activity timeout     key: sessionTimeout EDGEPLANE_SESSION_TIMEOUT  default 30m (minimum 1m)
  --advertise HOST:PORT   address clients reach the controller at (enrollment JWTs, /version, server certificate)
                                                           key: advertise      EDGEPLANE_ADVERTISE        default: the listen address (localhost for 0.0.0.0 or ::)
  --enrollment-duration DUR  how long an enrollment token is valid  key: enrollmentDuration  EDGEPLANE_ENROLLMENT_DURATION  default 180m (minimum 5m)
  --totp-issuer NAME      issuer shown by authenticator apps for MFA  key: totpIssuer  EDGEPLANE_TOTP_ISSUER  default openziti.io
  --log-level LEVEL       debug, info, warn or error (JSON lines on stderr)  key: logLevel  EDGEPLANE_LOG_LEVEL  default info
  --metrics-listen HOST:PORT  separate plain-HTTP address for /metrics, no session  key: metricsListen  EDGEPLANE_METRICS_LISTEN
                                                           default: /metrics on the listener, admins only
  --ctrl-listen HOST:PORT  separate TLS address for routers' control channels (ALPN ziti-ctrl)  key: ctrlListen  EDGEPLANE_CTRL_LISTEN
                                                           default: routers use the --listen port (it negotiates ziti-ctrl too)
  --renew-server-cert     issue a new server certificate from the intermediate CA before starting (same CA and key)
Config file only: authRateLimiter {enabled, minSize 5, maxSize 250}, commandRateLimiter {enabled, queueSize 100},
  loginThrottle {enabled, freeFailures 5, baseDelay 1s, maxDelay 1m, forgetAfter 15m, knownSource 720h,
  distinctUsernames 20, distinctWindow 15m},
  connectionLimits {handshakeTimeout 10s, headersTimeout 10s, requestTimeout 30s, keepAliveTimeout 65s,
  writeTimeout 30s, maxHeaderBytes 16384, maxHeaders 100, maxConnections 10000, maxConnectionsPerAddress 2000},
  oidc {enabled true (EDGEPLANE_OIDC=on|off), accessTokenDuration 30m, idTokenDuration 30m, refreshTokenDuration 24h,
  redirectURIs, postLogoutURIs, advertiseCsrCapability false} (see docs/operators/settings.md).
  --no-console            do not serve the web console at /console/  key: console.enabled  EDGEPLANE_CONSOLE=on|off  default on
  --server-timing         send server-timing: app;dur=<ms> (time spent in the app) on every answer, to every client,
                          anonymous logins too             key: serverTiming   EDGEPLANE_SERVER_TIMING=on|off  default off
  --snapshot-dir DIR      where database snapshots go      key: snapshotDir    EDGEPLANE_SNAPSHOT_DIR     default: the data directory
  --cluster-endpoints URL[,URL...]  etcd client URLs: run as a node of a cluster (with --node-name)
                                                           key: cluster.endpoints  EDGEPLANE_CLUSTER_ENDPOINTS  default: none (a single node)
  --node-name NAME        this node's name in the cluster (letters, digits, . _ -)  key: cluster.nodeName  EDGEPLANE_NODE_NAME
  (no flag)               key prefix in etcd               key: cluster.prefix EDGEPLANE_CLUSTER_PREFIX   default /edgeplane
The admin settings are used only when the data directory is new.

Flags of 'validate-router-config':
  --format text|json      output format (default text)
  --print-effective       print the configuration with defaults filled in and variables substituted
  --strict                treat warnings as errors
Exit codes: 0 valid, 1 errors found, 2 usage error or unreadable file.

${OPERATE_HELP}Exit codes of the operations: 0 done (status: healthy), 1 refused, failed or warnings, 2 usage error.

${CLUSTER_HELP}${INSIGHT_HELP}`

async function run(argv: string[]): Promise<number> {
  let values: Record<string, string | string[] | boolean | undefined>
  try {
    values = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        data: { type: 'string' },
        listen: { type: 'string' },
        'admin-username': { type: 'string' },
        'admin-password': { type: 'string' },
        san: { type: 'string', multiple: true },
        'session-timeout': { type: 'string' },
        advertise: { type: 'string' },
        'enrollment-duration': { type: 'string' },
        'totp-issuer': { type: 'string' },
        'log-level': { type: 'string' },
        'metrics-listen': { type: 'string' },
        'ctrl-listen': { type: 'string' },
        'renew-server-cert': { type: 'boolean' },
        'snapshot-dir': { type: 'string' },
        'cluster-endpoints': { type: 'string', multiple: true },
        'node-name': { type: 'string' },
        'no-console': { type: 'boolean' },
        'server-timing': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (e) {
    process.stderr.write(`edgeplane run: ${(e as Error).message}\n\n${HELP}`)
    return 2
  }
  if (values.help) {
    process.stdout.write(HELP)
    return 0
  }
  const flags: ConfigFlags = {
    config: (values.config as string | undefined) ?? process.env.EDGEPLANE_CONFIG,
    data: values.data as string | undefined,
    listen: values.listen as string | undefined,
    adminUsername: values['admin-username'] as string | undefined,
    adminPassword: values['admin-password'] as string | undefined,
    sans: values.san as string[] | undefined,
    sessionTimeout: values['session-timeout'] as string | undefined,
    advertise: values.advertise as string | undefined,
    enrollmentDuration: values['enrollment-duration'] as string | undefined,
    totpIssuer: values['totp-issuer'] as string | undefined,
    logLevel: values['log-level'] as string | undefined,
    metricsListen: values['metrics-listen'] as string | undefined,
    ctrlListen: values['ctrl-listen'] as string | undefined,
    snapshotDir: values['snapshot-dir'] as string | undefined,
    clusterEndpoints: values['cluster-endpoints'] as string[] | undefined,
    nodeName: values['node-name'] as string | undefined,
    noConsole: values['no-console'] === true,
    serverTiming: values['server-timing'] === true,
  }
  let config
  try {
    config = resolveConfig(flags, process.env)
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`edgeplane run: ${e.message}\n`)
      return 2
    }
    throw e
  }
  let server
  try {
    server = await startServer({
      dataDir: config.dataDir,
      host: config.listenHost,
      port: config.listenPort,
      adminUsername: config.adminUsername,
      adminPassword: config.adminPassword,
      sans: config.sans,
      hostname: config.hostname,
      sessionTimeoutMs: config.sessionTimeoutMs,
      advertise: config.advertise,
      enrollmentDurationMs: config.enrollmentDurationMs,
      totpIssuer: config.totpIssuer,
      logLevel: config.logLevel,
      metricsListen: config.metricsListen,
      ctrlListen: config.ctrlListen,
      authWindow: definedOnly(config.authRateLimiter),
      writeQueue: definedOnly(config.commandRateLimiter),
      loginThrottle: definedOnly(config.loginThrottle),
      renewServerCert: values['renew-server-cert'] === true,
      snapshotDir: config.snapshotDir,
      connectionLimits: definedOnly(config.connectionLimits),
      oidc: definedOnly(config.oidc),
      cluster: config.cluster,
      console: config.console,
      serverTiming: config.serverTiming,
      // an error nothing caught is logged and the controller goes on (src/lib/last-resort.ts)
      catchStrayErrors: true,
    })
  } catch (e) {
    // a start that cannot go on (etcd unreachable, a data directory of no member, a compacted log, a bad PKI): its
    // message, not a stack (the stack too at log level debug); exit at once, since what the failed start had opened
    // (LMDB, timers) is not closed
    process.stderr.write(`edgeplane run: cannot start: ${e instanceof Error ? e.message : String(e)}\n`)
    if (config.logLevel === 'debug' && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`)
    process.exit(1)
  }
  // handlers first, then the announcement: a supervisor may signal as soon as it reads the line
  const stopped = new Promise<void>((resolve) => {
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      process.stderr.write(`${signal}: stopping\n`)
      server.stop().then(resolve, (e) => {
        console.error('error while stopping:', e)
        resolve()
      })
    }
    process.on('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGINT', () => stop('SIGINT'))
  })
  process.stdout.write(`edgeplane ${VERSION} listening on ${server.url} (data: ${config.dataDir})\n`)
  await stopped
  // the listener, timers and LMDB are closed; exit now rather than wait on anything a library left behind
  process.exit(0)
}

/** The members of `o` that are set (so that unset ones keep the server's defaults when spread over them). */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv
  switch (cmd) {
    case 'run':
      return run(rest)
    case 'version':
    case '--version':
      process.stdout.write(`edgeplane ${VERSION} (revision ${REVISION}, built ${BUILD_DATE}, bun ${Bun.version})\n`)
      return 0
    case 'validate-router-config': {
      // loaded on demand: `run` never pays for the validator
      const { runValidateRouterConfig } = await import('./router-config/router-config-command.ts')
      return runValidateRouterConfig(rest, {
        stdout: (s: string) => process.stdout.write(s),
        stderr: (s: string) => process.stderr.write(s),
        readStdin: () => Bun.stdin.text(),
      })
    }
    case 'backup':
    case 'restore':
    case 'status': {
      const { runOperateCommand } = await import('./operate/operate-command.ts')
      return runOperateCommand(cmd, rest, {
        stdout: (s: string) => process.stdout.write(s),
        stderr: (s: string) => process.stderr.write(s),
        env: process.env,
      })
    }
    case 'cluster': {
      const { runClusterCommand } = await import('./cluster/cluster-command.ts')
      return runClusterCommand(rest, {
        stdout: (s: string) => process.stdout.write(s),
        stderr: (s: string) => process.stderr.write(s),
        env: process.env,
      })
    }
    case 'explain':
    case 'preview': {
      const { runExplain, runPreview } = await import('./cli/cli-insight.ts')
      const io = {
        stdout: (s: string) => process.stdout.write(s),
        stderr: (s: string) => process.stderr.write(s),
        readStdin: () => Bun.stdin.text(),
        env: process.env,
        isTty: process.stdout.isTTY === true,
      }
      return cmd === 'explain' ? runExplain(rest, io) : runPreview(rest, io)
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(HELP)
      return cmd === undefined ? 2 : 0
    default:
      process.stderr.write(`edgeplane: unknown command '${cmd}'\n\n${HELP}`)
      return 2
  }
}

main(process.argv.slice(2)).then(
  // exitCode, not exit(): a large report piped to another program must be written out in full first
  (code) => {
    process.exitCode = code
  },
  (e) => {
    console.error('edgeplane: fatal:', e)
    process.exit(1)
  },
)
