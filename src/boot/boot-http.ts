/**
 * The HTTP side: the app over the route table (with the root routes: the console, the CA bundle, health checks,
 * the cluster snapshot, /metrics), the OIDC app, the separate metrics address, and the TLS listener that also hands
 * `ziti-ctrl` sockets to the control plane. buildHttp makes the app; openListener starts listening with it.
 */
import { accessSync, constants as fsConstants, statSync } from 'node:fs'
import type { Clock } from '../lib/clock.ts'
import { newCuid } from '../lib/ids.ts'
import type { Logger } from '../lib/logger.ts'
import { METRICS_CONTENT_TYPE, type MetricsRegistry } from '../lib/metrics.ts'
import { formatHostPort, type HostPort } from '../config/config.ts'
import type { Store } from '../store/store-env.ts'
import type { MailboxView } from '../actors/runtime/actor-runtime.ts'
import { buildCertsOnlyPkcs7 } from '../pki/pki-pkcs7.ts'
import { createAuthRequestStore } from '../flows/oidc/oidc-auth-requests.ts'
import { createOidcLogin } from '../flows/oidc/oidc-login.ts'
import { createOidcGrants } from '../flows/oidc/oidc-grants.ts'
import { createOidcApp, issuerHostCheck, type OidcRoute } from '../http/oidc/oidc-app.ts'
import { oidcLoginRoutes } from '../http/oidc/oidc-login-routes.ts'
import { oidcTokenRoutes } from '../http/oidc/oidc-token-routes.ts'
import { buildApp } from '../http/http-app.ts'
import { startListener } from '../http/http-listener.ts'
import { createHealthChecks } from '../http/http-health.ts'
import { clusterVerdict } from '../http/http-cluster.ts'
import { createConnectionMetrics, type HttpMetrics } from '../http/http-metrics.ts'
import type { WriteQueue } from '../http/http-write-queue.ts'
import type { RouteDef } from '../http/http-route.ts'
import { consoleRoutes } from '../http/console/console-routes.ts'
import { FABRIC_SPEC_PATH, fabricSpecAnswer } from '../http/routes/fabric/fabric-routes.ts'
import { CONSOLE } from '../console/console-assets.ts'
import { peerSecretOf, SNAPSHOT_PATH, snapshotRoute } from '../cluster/cluster-snapshot.ts'
import type { ControlPlane } from '../control/control-module.ts'
import { VERSION } from '../version.ts'
import type { Actors } from './boot-actors.ts'
import type { AuthParts } from './boot-auth.ts'
import type { TlsCredentials } from './boot-control.ts'
import type { Addresses, ServerOptions } from './boot-options.ts'
import type { OpsParts } from './boot-ops.ts'
import { MAX_BODY_BYTES } from './boot-options.ts'

export interface HttpParts {
  app: ReturnType<typeof buildApp>
  /** The separate plain-HTTP metrics address, when one was set. */
  metricsServer?: ReturnType<typeof Bun.serve>
  /** Sign-ins in progress on this node (memory only); stopped with the server. */
  oidcAuthRequests: ReturnType<typeof createAuthRequestStore>
}

export function buildHttp(
  opts: ServerOptions,
  store: Store,
  actors: Actors,
  auth: AuthParts,
  ops: OpsParts,
  ctx: {
    routes: RouteDef[]
    clock: Clock
    startedAt: number
    log: (line: string) => void
    registry: MetricsRegistry
    httpMetrics: HttpMetrics
    writeQueue: WriteQueue
    mailboxes: MailboxView[]
    addresses: Addresses
  },
): HttpParts {
  const { identities, graph, ca, clusterNode } = actors
  const { clock, log, registry, addresses } = ctx
  const { resolver, oidcSettings } = auth
  // built on the first request (pkijs: tens of ms a start need not spend); the CAs do not change while running
  let caCertsBody: ReturnType<typeof buildCertsOnlyPkcs7> | undefined
  const cacerts = () =>
    new Response((caCertsBody ??= buildCertsOnlyPkcs7(auth.ownCas)), { status: 200, headers: { 'content-type': 'application/pkcs7-mime', 'content-transfer-encoding': 'base64' } })
  const healthChecks = createHealthChecks({
    lmdb: () => {
      const schemaVersion = store.db('meta').get('schemaVersion')
      if (typeof schemaVersion !== 'number') return { healthy: false, details: 'the schema version cannot be read' }
      accessSync(opts.dataDir, fsConstants.W_OK)
      return { healthy: true, details: `open at schema version ${schemaVersion}, ${statSync(store.path).size} bytes` }
    },
    mailboxes: ctx.mailboxes,
    serverCertificate: () => ca.snapshot().pki.server.view,
    now: () => clock.now(),
    stuckAfterMs: opts.healthStuckAfterMs,
    cluster: ops.clusterView ? () => clusterVerdict(ops.clusterView!) : undefined,
  })
  // OIDC sign-in: the login half (authorize, login/*, callback) and the token half (token, keys, revoke, end_session)
  const oidcRoutes: OidcRoute[] = []
  // the sign-ins in progress on this node (memory only) and their codes; the token half redeems them
  const oidcAuthRequests = createAuthRequestStore({ clock })
  oidcRoutes.push(
    ...oidcLoginRoutes({
      authorize: { requests: oidcAuthRequests, redirectUris: () => oidcSettings.redirectUris, configTypes: () => graph.snapshot().configTypes },
      login: createOidcLogin({
        requests: oidcAuthRequests,
        authMethods: auth.authMethods,
        gate: auth.authGate,
        identities,
        clock,
        extJwtSecondary: auth.extJwtSecondary,
        mfa: auth.mfaFlows,
        signers: () => ca.snapshot(),
        configTypes: () => graph.snapshot().configTypes,
      }),
      now: () => clock.now(),
    }),
  )
  oidcRoutes.push(
    ...oidcTokenRoutes({
      grants: createOidcGrants({
        tokens: auth.oidcTokens,
        authRequests: oidcAuthRequests,
        identities,
        clock,
        sessionCerts: { issue: (identityId, csrPem) => auth.sessionCertificates.issueUnstored(identityId, csrPem) },
      }),
      keys: auth.tokenKeys,
      alg: () => ca.snapshot().jwtVerifiers.server.alg,
      settings: oidcSettings,
    }),
  )
  const issuerNames = () => {
    const { dnsNames, ipAddresses } = ca.snapshot().pki.server.view
    return [...dnsNames, ...ipAddresses, ...(opts.advertise ? [opts.advertise.host] : [])]
  }
  const issuerPorts = () => [addresses.listenPort, ...(opts.advertise ? [opts.advertise.port] : [])]
  const oidcApp = oidcSettings.enabled ? createOidcApp({ routes: oidcRoutes, isIssuerHost: issuerHostCheck(issuerNames, issuerPorts) }) : undefined
  const metricsAnswer = () => new Response(registry.render(), { status: 200, headers: { 'content-type': METRICS_CONTENT_TYPE } })
  const app = buildApp(ctx.routes, {
    resolver,
    version: VERSION,
    instanceId: newCuid(ctx.startedAt),
    clock,
    log,
    metrics: ctx.httpMetrics,
    writeQueue: ctx.writeQueue,
    oidc: oidcApp,
    serverTiming: opts.serverTiming === true,
    rootRoutes: {
      // the web console: a page and its assets built into the binary (console/console-build.ts)
      ...(opts.console !== false ? consoleRoutes(CONSOLE) : {}),
      '/.well-known/est/cacerts': cacerts,
      '/edge/client/v1/.well-known/est/cacerts': cacerts,
      '/edge/management/v1/.well-known/est/cacerts': cacerts,
      '/health-checks': healthChecks,
      // the fabric API's spec document, where go-swagger serves the real controller's (no session)
      [FABRIC_SPEC_PATH]: fabricSpecAnswer(() => ctx.routes, VERSION),
      // members fetch each other's state with a proof of membership, no session (cluster/cluster-snapshot.ts)
      ...(clusterNode ? { [SNAPSHOT_PATH]: snapshotRoute({ store, secret: peerSecretOf(opts.dataDir), now: () => clock.now(), note: log }) } : {}),
      // on the listener the metrics are for admins (they show the load and the counts of everything)
      '/metrics': async (req) => {
        await resolver.require(req, 'admin')
        return metricsAnswer()
      },
    },
  })
  // a separate address for a Prometheus scraper: plain HTTP, no session (an operator binds it where only the scraper reaches)
  const metricsServer = opts.metricsListen
    ? Bun.serve({
        hostname: opts.metricsListen.host,
        port: opts.metricsListen.port,
        fetch: (req) => (new URL(req.url).pathname === '/metrics' ? metricsAnswer() : new Response('not found\n', { status: 404 })),
      })
    : undefined
  return { app, metricsServer, oidcAuthRequests }
}

/** Opens the TLS listener of both APIs (and, by ALPN, of the control plane); answers it once it listens. */
export async function openListener(
  opts: ServerOptions,
  http: HttpParts,
  ctx: { host: string; tls: TlsCredentials; control: ControlPlane; registry: MetricsRegistry; logger: Logger; log: (line: string) => void },
): Promise<Awaited<ReturnType<typeof startListener>>> {
  let listenerRef: { openConnections(): number } | undefined
  const listener = await startListener({
    host: ctx.host,
    port: opts.port ?? 1280,
    tls: ctx.tls,
    maxBodyBytes: MAX_BODY_BYTES,
    controlSocket: (socket) => ctx.control.acceptSocket(socket),
    limits: opts.connectionLimits,
    // the gauge reads the listener once it exists
    observe: createConnectionMetrics(ctx.registry, () => listenerRef?.openConnections() ?? 0),
    handle: (call) => http.app.handle(call),
    log: ctx.log,
    logRequest: (r) => ctx.logger.request(r),
  })
  listenerRef = listener
  return listener
}

/** The metrics address as a URL, when one was set. */
export function metricsUrlOf(listen: HostPort | undefined, server: HttpParts['metricsServer']): string | undefined {
  return listen && server ? `http://${formatHostPort({ host: listen.host, port: server.port! })}` : undefined
}
