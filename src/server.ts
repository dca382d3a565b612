/**
 * startServer: the only wiring point, as a list of stages in dependency order (each in src/boot/, taking what it
 * needs and giving what it provides): the store, the actors, the cascades and repairs between them, the derived
 * policy index, sign-in and enrollment, operations, the control plane, the routes, the HTTP app and the listener.
 * main.ts and the test harness both call it.
 */
import { systemClock } from './lib/clock.ts'
import { defaultAdvertise, formatHostPort } from './config/config.ts'
import { createLogger, noteLogger } from './lib/logger.ts'
import { installLastResort } from './lib/last-resort.ts'
import { prepareDummyHash } from './auth/auth-password.ts'
import { seedControllerSettings } from './flows/oidc/oidc-controller-settings.ts'
import type { VersionInfo } from './http/routes/shared/version-routes.ts'
import { VERSION, BUILD_DATE, REVISION } from './version.ts'
import { startPhases } from './boot/boot-phases.ts'
import { bootStore } from './boot/boot-store.ts'
import { bootActors } from './boot/boot-actors.ts'
import { ensureDefaultAdmin, repairInterruptedWrites, wireCascades } from './boot/boot-repairs.ts'
import { bootPolicy } from './boot/boot-policy.ts'
import { bootAuth } from './boot/boot-auth.ts'
import { bootOps } from './boot/boot-ops.ts'
import { bootControl } from './boot/boot-control.ts'
import { bootRoutes } from './boot/boot-routes.ts'
import { buildHttp, metricsUrlOf, openListener } from './boot/boot-http.ts'
import type { Addresses, RunningServer, ServerOptions } from './boot/boot-options.ts'

export { MAX_BODY_BYTES, type RunningServer, type ServerOptions } from './boot/boot-options.ts'

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock
  const logger = createLogger({ level: opts.logLevel ?? 'info', write: opts.log })
  const log = noteLogger(logger)
  const removeLastResort = opts.catchStrayErrors ? installLastResort(process, (failure, msg) => logger.error({ ...failure }, msg)) : undefined
  const host = opts.host ?? '127.0.0.1'
  const timeoutMs = opts.sessionTimeoutMs ?? 30 * 60_000
  const startedAt = clock.now()
  const phases = startPhases()
  // known once the listener is up; the stages before it read them at request time
  const addresses: Addresses = { baseUrl: '', ctrlEndpoint: '', listenPort: 0 }

  const parts = await bootStore(opts, {
    clock, logger, log, startedAt,
    // the gauges read the later stages, at scrape time
    gauges: {
      apiSessions: () => actors.sessions.snapshot().byId.size,
      services: () => actors.graph.snapshot().services.size,
      authWindow: () => ({ size: auth.authGate.window.currentSize, inFlight: auth.authGate.window.inFlight }),
    },
  })
  const { store, bus, registry } = parts
  phases.end('store')
  const actors = await bootActors(opts, parts, { clock, log, host, timeoutMs, phases })
  const { identities, sessions, sessionRegistry, graph, ca, controllers, clusterNode, pki } = actors
  wireCascades(bus, actors)
  await repairInterruptedWrites(actors, clock.now(), log)
  // the OIDC redirect lists live in the controller settings; a new data directory or cluster takes the config's
  await seedControllerSettings({ controllers, configured: opts.oidc, nodeId: opts.cluster?.nodeName, log })
  phases.end('start-up repairs')
  const policy = bootPolicy(actors, { bus, clock, enforceEveryMs: opts.enforceEveryMs })
  phases.end('policy index')
  const generatedAdminPassword = await ensureDefaultAdmin(identities, opts, log)
  // not awaited: the first failed login awaits the same promise, so start-up need not
  void prepareDummyHash()
  const auth = bootAuth(opts, actors, { bus, clock, log, timeoutMs, addresses, loginOutcome: parts.controllerMetrics.login })
  const version: VersionInfo = {
    version: VERSION,
    revision: REVISION,
    buildDate: BUILD_DATE,
    runtimeVersion: `bun ${Bun.version}`,
    baseUrl: () => addresses.baseUrl,
    oidc: auth.oidcSettings.enabled,
    oidcCsrCapability: auth.oidcSettings.advertiseCsrCapability,
    clustered: clusterNode !== undefined,
  }
  const ops = bootOps(store, actors, policy, { clock, snapshotDir: opts.snapshotDir })
  const tls = await ca.ask({ type: 'ca.tlsCredentials' })
  const control = await bootControl(opts, actors, auth, policy, { bus, clock, logger, registry, tls, writeQueue: parts.writeQueue, timeoutMs })
  phases.end('control plane')
  const routes = bootRoutes(actors, policy, auth, ops, {
    clock, startedAt, timeoutMs, version, addresses, presence: control.registry, links: control.links, circuits: control.circuits, serviceListed: parts.controllerMetrics.serviceListed,
  })
  const http = buildHttp(opts, store, actors, auth, ops, {
    routes, clock, startedAt, log, registry, httpMetrics: parts.httpMetrics, writeQueue: parts.writeQueue, mailboxes: parts.mailboxes, addresses,
  })
  phases.end('routes')
  // every actor holds what it read: the LMDB pages of that one scan need not stay in this process's resident memory
  await store.releaseScannedPages()
  phases.end('store reopened')
  // every actor has read its state: the garbage of reading it (each record parsed, then compacted) goes now, in one
  // collection before the first request, rather than in pauses during the first thousands of requests
  Bun.gc(true)
  phases.end('gc')
  const listener = await openListener(opts, http, { host, tls, control, registry, logger, log })
  addresses.listenPort = listener.port
  // a wildcard bind is reached locally at localhost
  const listenUrl = `https://${formatHostPort(defaultAdvertise({ host, port: listener.port }))}`
  addresses.baseUrl = opts.advertise ? `https://${formatHostPort(opts.advertise)}` : listenUrl
  const advertised = opts.advertise ?? defaultAdvertise({ host, port: listener.port })
  addresses.ctrlEndpoint = `tls:${formatHostPort({ host: advertised.host, port: control.port ?? advertised.port })}`
  phases.end('listener')
  if (clusterNode) {
    await clusterNode.join({ certPem: pki.server.certPem, fingerprint: pki.server.view.fingerprintSha1, baseUrl: addresses.baseUrl, ctrlAddress: addresses.ctrlEndpoint })
    phases.end('cluster join')
  }
  logger.debug(phases.done(), 'start-up phases')

  let stopped = false
  return {
    url: listenUrl,
    advertisedUrl: addresses.baseUrl,
    port: listener.port,
    pki,
    clock,
    routes,
    generatedAdminPassword,
    metricsUrl: metricsUrlOf(opts.metricsListen, http.metricsServer),
    authGate: auth.authGate,
    async sweepSessions() {
      await sessions.ask({ type: 'apiSession.sweep' })
    },
    enforcePolicies: policy.enforcePolicies,
    async pruneRevocations() {
      await identities.ask({ type: 'revocation.prune' })
    },
    cluster: clusterNode,
    control,
    get ctrlEndpoint() {
      return addresses.ctrlEndpoint
    },
    async stop() {
      if (stopped) return
      stopped = true
      // the routers first: their sockets would keep the API listener's server from closing
      await control.stop()
      await listener.close()
      await http.metricsServer?.stop(true)
      await clusterNode?.stop()
      await ops.integrity.idle()
      http.oidcAuthRequests.stop()
      policy.stop()
      sessionRegistry.stopTimers()
      actors.stopRevocationPruning()
      await sessions.ask({ type: 'apiSession.flushActivity' })
      await Promise.all([identities.stop(), sessions.stop(), graph.stop(), ca.stop(), controllers.stop()])
      await store.close()
      logger.flush()
      removeLastResort?.()
    },
  }
}
