/**
 * startServer: the only wiring point. Opens the store, bootstraps the PKI and the default admin, starts the actors,
 * mounts the HTTP app on the TLS listener. main.ts and the test harness both call it.
 */
import { hostname as osHostname } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { systemClock, type Clock } from './lib/clock.ts'
import { DEFAULTS, defaultAdvertise, formatHostPort, type HostPort } from './config/config.ts'
import { newCuid } from './lib/ids.ts'
import { openStore } from './store/store-env.ts'
import { copyStore, readStoreCopy } from './store/store-copy.ts'
import { EventBus } from './actors/runtime/event-bus.ts'
import type { ActorSystemDeps, MailboxView } from './actors/runtime/actor-runtime.ts'
import { startIdentityActor, startRevocationPruning, type IdentityActor } from './actors/identity/identity-actor.ts'
import { startSessionRegistryActor } from './actors/session-registry/session-registry-actor.ts'
import { startPolicyGraphActor } from './actors/policy-graph/policy-graph-actor.ts'
import { startPolicyResolver } from './actors/policy-resolver/policy-resolver.ts'
import { createSessionTokens } from './flows/sessions/session-token.ts'
import { createAuthMethodRegistry } from './flows/authenticate/auth-method.ts'
import { createUpdbAuthMethod } from './flows/authenticate/auth-updb.ts'
import { createCertAuthMethod, trustAnchorsOf } from './flows/authenticate/auth-cert.ts'
import { createExtJwtAuthMethod, createExtJwtSecondary } from './flows/authenticate/auth-ext-jwt.ts'
import { createSignerKeys } from './flows/authenticate/auth-ext-jwt-keys.ts'
import { authPolicyOf } from './flows/authenticate/auth-api-session.ts'
import { isAdminIdentity, type Identity } from './domain/identity/identity-types.ts'
import { policiesNamingSigner } from './domain/identity/identity-auth-policy.ts'
import { createCertExtension } from './flows/authenticate/auth-cert-extend.ts'
import { createSessionCertificates, sessionCertificateHolder } from './flows/sessions/session-certificate.ts'
import { apiSessionCertificateRoutes } from './http/routes/client/api-session-certificate-routes.ts'
import { reconcileRouterIdentities } from './flows/routers/router-identity.ts'
import { createEnrollmentMethodRegistry } from './flows/enroll/enroll-method.ts'
import { createEnrollByToken } from './flows/enroll/enroll-by-token.ts'
import { createOttEnrollMethod } from './flows/enroll/enroll-ott.ts'
import { createUpdbEnrollMethod } from './flows/enroll/enroll-updb.ts'
import { createErottEnrollMethod } from './flows/enroll/enroll-erott.ts'
import { createOttCaEnrollMethod } from './flows/enroll/enroll-ottca.ts'
import { createCaAutoEnrollMethod } from './flows/enroll/enroll-ca.ts'
import { createTokenEnrollMethod } from './flows/enroll/enroll-token.ts'
import { createEnrollKeys } from './flows/enroll/enroll-keys.ts'
import { cascadeCaDeletes, forgetDeletedCas } from './flows/ca/ca-delete-cascade.ts'
import { enrollRoutes } from './http/routes/client/enroll-routes.ts'
import { enrollmentRoutes } from './http/routes/management/enrollment-routes.ts'
import { sessionsWithoutAccess } from './domain/session/service-session-types.ts'
import { clientServiceRoutes } from './http/routes/client/client-service-routes.ts'
import { sessionRoutes } from './http/routes/client/session-routes.ts'
import { identityPolicyRoutes } from './http/routes/management/identity-policy-routes.ts'
import { insightRoutes } from './http/routes/management/insight-routes.ts'
import type { PolicyGraphLookups } from './actors/policy-graph/policy-graph-policies.ts'
import { roleAttributeRoutes } from './http/routes/management/role-attribute-routes.ts'
import { configTypeRoutes } from './http/routes/management/config-type-routes.ts'
import { configRoutes } from './http/routes/management/config-routes.ts'
import { serviceRoutes } from './http/routes/management/service-routes.ts'
import { edgeRouterRoutes } from './http/routes/management/edge-router-routes.ts'
import { routerRoutes } from './http/routes/management/router-routes.ts'
import { terminatorRoutes } from './http/routes/management/terminator-routes.ts'
import { servicePolicyRoutes } from './http/routes/management/service-policy-routes.ts'
import { edgeRouterPolicyRoutes } from './http/routes/management/edge-router-policy-routes.ts'
import { serviceEdgeRouterPolicyRoutes } from './http/routes/management/service-edge-router-policy-routes.ts'
import { caRoutes } from './http/routes/management/ca-routes.ts'
import { authPolicyRoutes } from './http/routes/management/auth-policy-routes.ts'
import { identityDisableRoutes } from './http/routes/management/identity-disable-routes.ts'
import { endSessionsOfDisabledIdentities } from './flows/identity/identity-disable.ts'
import { postureCheckRoutes } from './http/routes/management/posture-check-routes.ts'
import { identityPostureRoutes } from './http/routes/management/identity-posture-routes.ts'
import { postureResponseRoutes } from './http/routes/client/posture-response-routes.ts'
import { startPostureDataRegistry } from './actors/posture-data/posture-data-registry.ts'
import { startIdentityTraceRegistry } from './actors/identity-trace/identity-trace-registry.ts'
import { identityTraceRoutes } from './http/routes/management/identity-trace-routes.ts'
import { createPostureEvaluator } from './flows/posture/posture-evaluate.ts'
import type { IdentityEvent } from './actors/identity/identity-messages.ts'
import { hashPassword, prepareDummyHash } from './auth/auth-password.ts'
import { startCaActor } from './actors/ca/ca-actor.ts'
import { startControllersActor, type ControllersEvent } from './actors/controllers/controllers-actor.ts'
import { CONSOLE } from './console/console-assets.ts'
import { consoleRoutes } from './http/console/console-routes.ts'
import { openClusterNode, prepareClusterStore, type ClusterNode, type ClusterSettings } from './cluster/cluster-node.ts'
import { peerSecretOf, SNAPSHOT_PATH, snapshotRoute } from './cluster/cluster-snapshot.ts'
import type { LogTarget } from './cluster/cluster-log.ts'
import type { PublicPki } from './actors/ca/ca-state.ts'
import { buildCertsOnlyPkcs7 } from './pki/pki-pkcs7.ts'
import { createSessionResolver } from './http/http-auth.ts'
import { buildApp } from './http/http-app.ts'
import { startListener } from './http/http-listener.ts'
import type { ConnectionLimits } from './http/http-connections.ts'
import { installLastResort } from './lib/last-resort.ts'
import type { RouteDef } from './http/http-route.ts'
import { versionRoutes, type VersionInfo } from './http/routes/shared/version-routes.ts'
import { createOidcApp, issuerHostCheck, type OidcRoute } from './http/oidc/oidc-app.ts'
import { oidcSettingsOf, type OidcSettings } from './flows/oidc/oidc-types.ts'
import { createOidcTokens, type TokenKeys } from './flows/oidc/oidc-tokens.ts'
import { createTokenKeys } from './flows/oidc/oidc-keys.ts'
import { createOidcGrants } from './flows/oidc/oidc-grants.ts'
import { createBearerCheck } from './flows/oidc/oidc-bearer.ts'
import { oidcTokenRoutes } from './http/oidc/oidc-token-routes.ts'
import { createAuthRequestStore } from './flows/oidc/oidc-auth-requests.ts'
import { createOidcLogin } from './flows/oidc/oidc-login.ts'
import { oidcLoginRoutes } from './http/oidc/oidc-login-routes.ts'
import { authenticateRoutes } from './http/routes/shared/authenticate-routes.ts'
import { currentIdentityRoutes } from './http/routes/shared/current-identity-routes.ts'
import { identityRoutes } from './http/routes/management/identity-routes.ts'
import { revocationRoutes } from './http/routes/management/revocation-routes.ts'
import { authenticatorRoutes } from './http/routes/management/authenticator-routes.ts'
import { apiSessionRoutes } from './http/routes/management/api-session-routes.ts'
import { summaryRoutes } from './http/routes/management/summary-routes.ts'
import { edgeplaneStatusRoutes } from './http/routes/management/edgeplane-status-routes.ts'
import { externalJwtSignerRoutes } from './http/routes/shared/external-jwt-signer-routes.ts'
import { mfaRoutes } from './http/routes/shared/current-identity-mfa-routes.ts'
import { createMfaFlows } from './flows/authenticate/auth-mfa.ts'
import { VERSION, BUILD_DATE, REVISION } from './version.ts'
import { statSync, accessSync, constants as fsConstants } from 'node:fs'
import { createLogger, noteLogger, type LogLevel } from './lib/logger.ts'
import { MetricsRegistry, METRICS_CONTENT_TYPE } from './lib/metrics.ts'
import { createClusterMetrics, createConnectionMetrics, createControllerMetrics, createHttpMetrics } from './http/http-metrics.ts'
import { createWriteQueue, WRITE_QUEUE_DEFAULTS, type WriteQueueSettings } from './http/http-write-queue.ts'
import { certificateVerdict, createHealthChecks } from './http/http-health.ts'
import { createAuthGate, type AuthGate } from './flows/authenticate/auth-gate.ts'
import { AUTH_WINDOW_DEFAULTS, type AuthWindowSettings } from './flows/authenticate/auth-rate-window.ts'
import { LOGIN_THROTTLE_DEFAULTS, type LoginThrottleSettings } from './flows/authenticate/auth-throttle.ts'
import { databaseRoutes } from './http/routes/management/database-routes.ts'
import { controllerRoutes } from './http/routes/shared/controller-routes.ts'
import { controllerSettingRoutes } from './http/routes/management/controller-setting-routes.ts'
import { seedControllerSettings, withControllerSettings } from './flows/oidc/oidc-controller-settings.ts'
import { networkJwtRoutes } from './http/routes/shared/network-jwt-routes.ts'
import { createNetworkJwts } from './flows/enroll/enroll-network-jwt.ts'
import { protocolRoutes } from './http/routes/client/protocol-routes.ts'
import { clusterRoutes } from './http/routes/management/cluster-routes.ts'
import { clusterVerdict, type ClusterView } from './http/http-cluster.ts'
import { clusterReadView } from './cluster/cluster-view.ts'
import { createDatabaseSnapshots } from './flows/integrity/database-snapshot.ts'
import { startControlPlane, type ControlPlane } from './control/control-module.ts'
import type { ControlLimits } from './control/control-listener.ts'
import type { HeartbeatOptions } from './control/channel/control-heartbeat.ts'
import { createIntegrityRunner } from './flows/integrity/integrity-run.ts'

/** Request bodies larger than this are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024
/** Service sessions removed per message by the policy enforcer. */
const ENFORCE_SLICE = 5_000

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

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock
  const logger = createLogger({ level: opts.logLevel ?? 'info', write: opts.log })
  const log = noteLogger(logger)
  const removeLastResort = opts.catchStrayErrors ? installLastResort(process, (failure, msg) => logger.error({ ...failure }, msg)) : undefined
  const host = opts.host ?? '127.0.0.1'
  const timeoutMs = opts.sessionTimeoutMs ?? 30 * 60_000
  const startedAt = clock.now()
  const phases = startPhases()

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
  phases.end('store')
  const bus = new EventBus()
  const registry = new MetricsRegistry()
  const httpMetrics = createHttpMetrics(registry)
  const writeQueue = createWriteQueue({ ...WRITE_QUEUE_DEFAULTS, ...opts.writeQueue })
  // the actors are known only once started: the controller series read them through this list
  const mailboxes: MailboxView[] = []
  const controllerMetrics = createControllerMetrics(registry, {
    mailboxes,
    lmdbSizeBytes: () => statSync(store.path).size,
    apiSessions: () => sessions.snapshot().byId.size,
    services: () => graph.snapshot().services.size,
    writeQueueDepth: () => writeQueue.depth,
    authWindow: () => ({ size: authGate.window.currentSize, inFlight: authGate.window.inFlight }),
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
  // the advertised host goes into the server certificate of a new PKI (its port is known once the listener is up)
  const advertiseHost = (opts.advertise ?? defaultAdvertise({ host, port: 0 })).host
  const extraSans = [...(opts.sans ?? []), ...(opts.sans?.includes(advertiseHost) ? [] : [advertiseHost])]
  const ca = await startCaActor(
    join(opts.dataDir, 'pki'),
    { hostname: opts.hostname ?? osHostname(), extraSans, clock, renewServerCert: opts.renewServerCert, nodeName: opts.cluster?.nodeName },
    deps,
    // a signer's token enrollment names an auth policy of the identity actor (read when a signer is written, which is
    // after the identity actor has started: on a cluster node commands are applied only from catch-up on)
    { authPolicyOf: (id) => identities.snapshot().authPolicy(id) },
  )
  // a cluster node: the log is attached before any actor can write (its timers included); the actors are its targets
  const logTargets = new Map<string, LogTarget>([['ca', ca]])
  const clusterMetrics = opts.cluster ? createClusterMetrics(registry, { log: () => clusterNode?.log }) : undefined
  const clusterNode: ClusterNode | undefined = opts.cluster
    ? await openClusterNode({
        settings: opts.cluster, dataDir: opts.dataDir, store, deps, clock, targets: logTargets, note: log, onRemoteApplied: clusterMetrics?.remoteApplied,
      })
    : undefined
  const pki = ca.snapshot().pki
  phases.end('pki')
  if (opts.renewServerCert) log(`note: the server certificate was renewed from the intermediate CA; valid until ${new Date(pki.server.view.notAfter).toISOString()}`)
  const serverCertNow = certificateVerdict(pki.server.view, clock.now())
  if (!serverCertNow.healthy || serverCertNow.details.startsWith('warning')) {
    log(`warning: the server certificate ${join(pki.dir, 'server.cert.pem')}: ${serverCertNow.details.replace(/^warning: /, '')} (edgeplane run --renew-server-cert)`)
  }
  if (pki.sansMissing.length > 0) {
    log(`note: the server certificate in ${pki.dir} does not cover ${pki.sansMissing.join(', ')}; it is kept as is`)
  }
  // a tunneler-enabled edge router's name is reserved for its identity (see flows/routers/router-identity.ts)
  const routerNamed = (name: string) => {
    const r = graph.snapshot().routers.byName(name)
    return r?.isEdge && r.isTunnelerEnabled ? r.id : undefined
  }
  // auth policies may name only signers that exist (the CA actor owns them; a signer deleted after the check leaves a
  // dangling name that logins treat as no signer, and the integrity check reports)
  const knownSigner = (id: string): boolean => ca.snapshot().jwtSigners.has(id)
  // revocations of OIDC tokens outlive the longest refresh token
  const identities = startIdentityActor(store, deps, routerNamed, knownSigner, {
    refreshTokenMs: oidcSettingsOf(opts.oidc).refreshTokenMs,
    // an auth policy a signer enrolls identities into is not deleted under it
    signersEnrollingInto: (policyId) => ca.snapshot().jwtSigners.all().filter((s) => s.enrollAuthPolicyId === policyId).map((s) => s.id),
  })
  const stopRevocationPruning = startRevocationPruning(identities)
  const sessionRegistry = startSessionRegistryActor(store, deps, {
    timeoutMs,
    sweepEveryMs: opts.sessionSweepEveryMs ?? 5_000,
    flushEveryMs: opts.activityFlushEveryMs ?? 10_000,
    clustered: clusterNode !== undefined,
  })
  const sessions = sessionRegistry.actor
  phases.end('identities and sessions')
  const graphLookups: PolicyGraphLookups = {
    identityExists: (id) => identities.snapshot().identity(id) !== undefined,
    identityNameTaken: (name, exceptId) => {
      const id = identities.snapshot().identityIdByName(name)
      return id !== undefined && id !== exceptId
    },
  }
  const graph = await startPolicyGraphActor(store, deps, graphLookups)
  phases.end('policy graph')
  const controllers = startControllersActor(store, deps)
  mailboxes.push(identities, sessions, graph, ca, controllers)
  logTargets.set('identity', identities).set('session-registry', sessions).set('policy-graph', graph).set('controllers', controllers)
  if (clusterNode) {
    await clusterNode.catchUp()
    phases.end('cluster catch-up')
  }
  bus.subscribe<Extract<IdentityEvent, { type: 'identity.deleted' }>>('identity.deleted', (e) =>
    sessions.tell({ type: 'apiSession.deleteForIdentity', identityId: e.identity.id, change: { author: 'system', source: 'system' } }),
  )
  bus.subscribe<Extract<IdentityEvent, { type: 'identity.deleted' }>>('identity.deleted', (e) =>
    graph.tell({ type: 'identity.removed', identityId: e.identity.id, change: { author: 'system', source: 'system' } }),
  )
  // a deleted CA's cert authenticators and ottca enrollments go with it (flows/ca/ca-delete-cascade.ts)
  cascadeCaDeletes(bus, { identities })
  const forgotten = await forgetDeletedCas({ identities, caExists: (id) => ca.snapshot().cas.has(id) })
  if (forgotten.length > 0) log(`note: ${forgotten.length} deleted CAs still had authenticators or enrollments (an interrupted delete); removed`)
  const cutOff = await endSessionsOfDisabledIdentities({ identities, sessions }, clock.now())
  if (cutOff > 0) log(`note: ${cutOff} disabled identities still had API sessions (an interrupted disable); ended`)
  const reconciled = await reconcileRouterIdentities({ graph, identities }, { author: 'system', source: 'system' })
  if (reconciled.length > 0) log(`note: ${reconciled.length} router identities did not follow their routers (an interrupted write); repaired`)
  await seedControllerSettings({ controllers, configured: opts.oidc, nodeId: opts.cluster?.nodeName, log })
  phases.end('start-up repairs')
  const g0 = graph.snapshot()
  const policyResolver = startPolicyResolver(bus, clock, {
    identities: identities.snapshot().identities.values(),
    services: g0.services.values(),
    edgeRouters: g0.edgeRouters.values(),
    policies: g0.indexPolicies(),
    postureChecks: g0.postureChecks.values(),
  })
  const reads = policyResolver.reads
  phases.end('policy index')
  // posture data and refused requests: memory only, gone with their API session / identity
  const postureData = startPostureDataRegistry(bus)
  const posture = postureData.registry
  const postureEvaluator = createPostureEvaluator({ graph, reads, posture, bus })
  // data-flow traces of identities: memory only, as the real controller's trace manager; gone with the identity
  const identityTraces = startIdentityTraceRegistry(bus)
  // the policy enforcer: service sessions whose identity lost the permission they were made for are removed
  const enforcePolicies = async () => {
    const ids = sessionsWithoutAccess(sessions.snapshot().serviceSessions.values(), reads)
    // in slices: each is one commit (and, on a cluster node, one command, which etcd takes up to 1.5 MiB)
    for (let i = 0; i < ids.length; i += ENFORCE_SLICE) {
      await sessions.ask({ type: 'session.deleteMany', ids: ids.slice(i, i + ENFORCE_SLICE), change: { author: 'system', source: 'system' } })
    }
  }
  const enforcer = setInterval(() => void enforcePolicies().catch((e) => console.error('policy enforcer failed:', e)), opts.enforceEveryMs ?? 5_000)
  enforcer.unref?.()

  const generatedAdminPassword = await ensureDefaultAdmin(identities, opts, log)
  // not awaited: the first failed login awaits the same promise, so start-up need not
  void prepareDummyHash()

  const oidcSettings = withControllerSettings(oidcSettingsOf(opts.oidc), () => controllers.snapshot().effectiveSettings(opts.cluster?.nodeName))
  let baseUrl = ''
  // `tls:host:port` routers dial: the advertised host, at the control port or else the API port (known once listening)
  let ctrlEndpoint = ''
  const version: VersionInfo = {
    version: VERSION,
    revision: REVISION,
    buildDate: BUILD_DATE,
    runtimeVersion: `bun ${Bun.version}`,
    baseUrl: () => baseUrl,
    oidc: oidcSettings.enabled,
    oidcCsrCapability: oidcSettings.advertiseCsrCapability,
    clustered: clusterNode !== undefined,
  }
  const tokens = createSessionTokens(ca, () => baseUrl)
  // the controller's own CAs: what its client certificates chain to; trust anchors of certificate login and of an
  // admin's cert authenticators
  const ownCas = [pki.intermediate.certPem, pki.root.certPem]
  // the SPIFFE trust domain is stable for the life of the PKI: the root CA's fingerprint
  const trustDomain = pki.root.view.fingerprintSha1
  const extJwt = {
    identities,
    signers: () => ca.snapshot(),
    keys: createSignerKeys({ jwksCooldownMs: opts.jwksCooldownMs }),
    clock,
    policyOf: (identity: Identity) => authPolicyOf(identity, identities.snapshot()),
    log,
  }
  const extJwtSecondary = createExtJwtSecondary(extJwt)
  const authMethods = createAuthMethodRegistry([
    createUpdbAuthMethod({ identities, sessions }),
    createCertAuthMethod({
      identities,
      clock,
      trustAnchors: trustAnchorsOf(ownCas, () => ca.snapshot()),
      cas: () => ca.snapshot(),
      log,
      sessionCertificate: sessionCertificateHolder({ sessions, identities, clock, timeoutMs }),
    }),
    createExtJwtAuthMethod(extJwt),
  ])
  const enrollmentJwts = {
    ca,
    clock,
    advertisedUrl: () => baseUrl,
    // every node's control endpoint in a cluster (the controllers aggregate), else this node's
    ctrlEndpoints: () => {
      const nodes = clusterNode ? [...controllers.snapshot().byId.values()].flatMap((c) => (c.ctrlAddress ? [c.ctrlAddress] : [])) : []
      return nodes.length > 0 ? nodes : [ctrlEndpoint]
    },
    enrollmentDurationMs: opts.enrollmentDurationMs ?? DEFAULTS.enrollmentDurationMs,
  }
  const routerEnrollments = createErottEnrollMethod({ ...enrollmentJwts, graph, log })
  const enrollments = createEnrollmentMethodRegistry([
    createOttEnrollMethod({ ...enrollmentJwts, identities, trustDomain }),
    createUpdbEnrollMethod({ ...enrollmentJwts, identities }),
    routerEnrollments,
    createOttCaEnrollMethod({ ...enrollmentJwts, identities, cas: () => ca.snapshot(), log }),
    createCaAutoEnrollMethod({ identities, cas: () => ca.snapshot(), clock, log }),
    createTokenEnrollMethod({ identities, ca, signers: () => ca.snapshot(), keys: extJwt.keys, clock, trustDomain, advertisedUrl: () => baseUrl, log }),
  ])
  const certExtension = createCertExtension({ identities, ca, clock, ownCas, trustDomain })
  const sessionCertificates = createSessionCertificates({ sessions, ca, ownCas, trustDomain })
  // OIDC: tokens signed with the server certificate's key, checked against the signing certificates by kid: this
  // node's, and in a cluster every member's (replicated in the controllers aggregate)
  const tokenKeyring = createTokenKeys({
    own: () => ca.snapshot().jwtVerifiers.server,
    nodes: clusterNode ? () => controllers.snapshot().byId.values() : undefined,
    issuers: () => [ca.snapshot().pki.intermediate.certPem],
    now: () => clock.now(),
    log,
  })
  bus.subscribe<ControllersEvent>('controller.changed', () => tokenKeyring.invalidate())
  const tokenKeys: TokenKeys = tokenKeyring.keys
  const oidcTokens = createOidcTokens(
    {
      ca,
      identity: (id) => identities.snapshot().identity(id),
      authenticator: (id) => identities.snapshot().authenticators.get(id),
      clock,
      settings: oidcSettings,
    },
    tokenKeys,
  )
  const bearer = oidcSettings.enabled
    ? createBearerCheck({
        tokens: oidcTokens,
        keys: tokenKeys,
        now: () => clock.now(),
        isRevoked: (c, now) => identities.snapshot().isTokenRevoked({ jti: c.jti, sub: c.identityId, iat: c.iat, apiSessionId: c.apiSessionId }, now),
      })
    : undefined
  bus.subscribe<ControllersEvent>('controller.removed', () => {
    tokenKeyring.invalidate()
    bearer?.forgetVerified()
  })
  const resolver = createSessionResolver({ identities, sessions, clock, timeoutMs, extJwtSecondary, bearer })
  const authGate = createAuthGate({
    window: { ...AUTH_WINDOW_DEFAULTS, ...opts.authWindow },
    throttle: { ...LOGIN_THROTTLE_DEFAULTS, ...opts.loginThrottle },
    monotonicNow: () => performance.now(),
    clockNow: () => clock.now(),
    isAdminUsername: (username) => {
      const a = identities.snapshot().updbByUsername(username)
      const identity = a ? identities.snapshot().identity(a.identityId) : undefined
      return identity !== undefined && isAdminIdentity(identity)
    },
    outcome: controllerMetrics.login,
  })
  const copyTo = (destPath: string) => copyStore(store, destPath)
  const snapshots = createDatabaseSnapshots({ dbPath: store.path, copyStore: copyTo, clock, dir: opts.snapshotDir })
  const integrity = createIntegrityRunner({
    dbPath: store.path, copyStore: copyTo, readCopy: readStoreCopy, identities, sessions, graph, ca, policyIndex: policyResolver.index, snapshots, clock,
  })
  const mfaFlows = createMfaFlows({ identities, sessions, clock, issuer: opts.totpIssuer ?? DEFAULTS.totpIssuer })
  const clusterView: ClusterView | undefined = clusterNode ? clusterReadView(clusterNode) : undefined
  // the routers' control plane (control/control-module.ts): its own port if asked for, and the API port by ALPN
  const tlsCredentials = await ca.ask({ type: 'ca.tlsCredentials' })
  const control = await startControlPlane({
    routers: { get: (id) => graph.snapshot().routers.get(id) },
    bus,
    trustAnchors: () => ownCas,
    clock,
    logger,
    metrics: registry,
    // the real controller sends its identity's name; a cluster node is known to routers by its node name
    controllerId: opts.cluster?.nodeName ?? pki.server.view.subjectCn,
    version: { version: VERSION, revision: REVISION, buildDate: BUILD_DATE },
    listen: opts.ctrlListen ? { ...opts.ctrlListen, tls: tlsCredentials } : undefined,
    limits: opts.controlLimits,
    heartbeat: opts.controlHeartbeat,
    churnLimitMs: opts.routerChurnLimitMs,
  })
  phases.end('control plane')
  const presence = control.registry
  const routes: RouteDef[] = []
  const graphRouteDeps = { graph, identities, sessions, reads, clock, posture: postureEvaluator, presence }
  routes.push(
    ...versionRoutes(version, () => routes),
    ...authenticateRoutes({ identities, sessions, clock, timeoutMs, authMethods, extJwtSecondary, gate: authGate }),
    ...currentIdentityRoutes({ identities, sessions, clock, certExtension }),
    ...mfaRoutes({ mfa: mfaFlows, totpToken: (claims) => oidcTokens.totpToken(claims, baseUrl) }),
    ...identityRoutes({ identities, sessions, clock, startedAt, enrollments, caName: (id) => ca.snapshot().cas.get(id)?.name }),
    ...identityDisableRoutes({ identities, sessions }),
    ...identityTraceRoutes({ identities, traces: identityTraces.registry, clock }),
    ...authPolicyRoutes({ identities }),
    ...revocationRoutes({ identities }),
    ...authenticatorRoutes({ identities, clock, enrollments, ownCas, cas: () => ca.snapshot() }),
    ...apiSessionRoutes({ identities, sessions }),
    ...summaryRoutes({ identities, sessions, graph, ca }),
    ...edgeplaneStatusRoutes({ clock, startedAt, version: VERSION, revision: REVISION }),
    ...externalJwtSignerRoutes({ ca, policiesNaming: (signerId) => policiesNamingSigner(identities.snapshot().authPolicies.values(), signerId) }),
    ...enrollRoutes({
      enrollments,
      byToken: createEnrollByToken({ enrollments, identities: () => identities.snapshot(), routers: () => graph.snapshot() }),
      routerEnrollments,
      keys: createEnrollKeys({ ca, keys: tokenKeys, nodes: clusterNode ? () => controllers.snapshot().byId.values() : undefined }),
    }),
    ...enrollmentRoutes({ identities, enrollments, clock }),
    ...clientServiceRoutes({ graph, reads, tokens, clock, startedAt, posture: postureEvaluator, listed: controllerMetrics.serviceListed, presence }),
    ...sessionRoutes({
      graph, sessions, reads, tokens, clock, presence,
      posture: { evaluator: postureEvaluator, posture, policyName: (id) => graph.snapshot().servicePolicies.get(id)?.name ?? id },
    }),
    ...apiSessionCertificateRoutes({ sessions, sessionCertificates }),
    ...identityPolicyRoutes(graphRouteDeps),
    ...configTypeRoutes(graphRouteDeps),
    ...configRoutes(graphRouteDeps),
    ...serviceRoutes(graphRouteDeps),
    ...edgeRouterRoutes({ ...graphRouteDeps, routerEnrollments }),
    ...routerRoutes({ ...graphRouteDeps, routerEnrollments }),
    ...terminatorRoutes(graphRouteDeps),
    ...servicePolicyRoutes(graphRouteDeps),
    ...edgeRouterPolicyRoutes(graphRouteDeps),
    ...serviceEdgeRouterPolicyRoutes(graphRouteDeps),
    ...insightRoutes({ ...graphRouteDeps, lookups: graphLookups, preview: policyResolver.preview }),
    ...roleAttributeRoutes({ reads }),
    ...caRoutes({ ca, clock, issuer: () => baseUrl }),
    ...postureCheckRoutes({ ...graphRouteDeps, startedAt }),
    ...postureResponseRoutes({ graph, reads, posture, evaluator: postureEvaluator, clock }),
    ...identityPostureRoutes({ identities, sessions, posture }),
    ...databaseRoutes({ snapshots, integrity }),
    ...controllerRoutes({ controllers, cluster: clusterView }),
    ...clusterRoutes({ controllers, cluster: clusterView }),
    ...controllerSettingRoutes({ controllers }),
    ...networkJwtRoutes({ jwts: createNetworkJwts({ ca, advertisedUrl: () => baseUrl }) }),
    ...protocolRoutes({ advertisedUrl: () => baseUrl }),
  )
  // built on the first request (pkijs: tens of ms a start need not spend); the CAs do not change while running
  let caCertsBody: ReturnType<typeof buildCertsOnlyPkcs7> | undefined
  const cacerts = () =>
    new Response((caCertsBody ??= buildCertsOnlyPkcs7(ownCas)), { status: 200, headers: { 'content-type': 'application/pkcs7-mime', 'content-transfer-encoding': 'base64' } })
  const healthChecks = createHealthChecks({
    lmdb: () => {
      const schemaVersion = store.db('meta').get('schemaVersion')
      if (typeof schemaVersion !== 'number') return { healthy: false, details: 'the schema version cannot be read' }
      accessSync(opts.dataDir, fsConstants.W_OK)
      return { healthy: true, details: `open at schema version ${schemaVersion}, ${statSync(store.path).size} bytes` }
    },
    mailboxes,
    serverCertificate: () => ca.snapshot().pki.server.view,
    now: () => clock.now(),
    stuckAfterMs: opts.healthStuckAfterMs,
    cluster: clusterView ? () => clusterVerdict(clusterView) : undefined,
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
        authMethods,
        gate: authGate,
        identities,
        clock,
        extJwtSecondary,
        mfa: mfaFlows,
        signers: () => ca.snapshot(),
        configTypes: () => graph.snapshot().configTypes,
      }),
      now: () => clock.now(),
    }),
  )
  oidcRoutes.push(
    ...oidcTokenRoutes({
      grants: createOidcGrants({
        tokens: oidcTokens,
        authRequests: oidcAuthRequests,
        identities,
        clock,
        sessionCerts: { issue: (identityId, csrPem) => sessionCertificates.issueUnstored(identityId, csrPem) },
      }),
      keys: tokenKeys,
      alg: () => ca.snapshot().jwtVerifiers.server.alg,
      settings: oidcSettings,
    }),
  )
  let listenPort = 0
  const issuerNames = () => {
    const { dnsNames, ipAddresses } = ca.snapshot().pki.server.view
    return [...dnsNames, ...ipAddresses, ...(opts.advertise ? [opts.advertise.host] : [])]
  }
  const issuerPorts = () => [listenPort, ...(opts.advertise ? [opts.advertise.port] : [])]
  const oidcApp = oidcSettings.enabled ? createOidcApp({ routes: oidcRoutes, isIssuerHost: issuerHostCheck(issuerNames, issuerPorts) }) : undefined
  const metricsAnswer = () => new Response(registry.render(), { status: 200, headers: { 'content-type': METRICS_CONTENT_TYPE } })
  const app = buildApp(routes, {
    resolver,
    version: VERSION,
    instanceId: newCuid(startedAt),
    clock,
    log,
    metrics: httpMetrics,
    writeQueue,
    oidc: oidcApp,
    serverTiming: opts.serverTiming === true,
    rootRoutes: {
      // the web console: a page and its assets built into the binary (console/console-build.ts)
      ...(opts.console !== false ? consoleRoutes(CONSOLE) : {}),
      '/.well-known/est/cacerts': cacerts,
      '/edge/client/v1/.well-known/est/cacerts': cacerts,
      '/edge/management/v1/.well-known/est/cacerts': cacerts,
      '/health-checks': healthChecks,
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
  phases.end('routes')
  // every actor holds what it read: the LMDB pages of that one scan need not stay in this process's resident memory
  await store.releaseScannedPages()
  phases.end('store reopened')
  // every actor has read its state: the garbage of reading it (each record parsed, then compacted) goes now, in one
  // collection before the first request, rather than in pauses during the first thousands of requests
  Bun.gc(true)
  phases.end('gc')
  let listenerRef: { openConnections(): number } | undefined
  const listener = await startListener({
    host,
    port: opts.port ?? 1280,
    tls: tlsCredentials,
    maxBodyBytes: MAX_BODY_BYTES,
    controlSocket: (socket) => control.acceptSocket(socket),
    limits: opts.connectionLimits,
    // the gauge reads the listener once it exists
    observe: createConnectionMetrics(registry, () => listenerRef?.openConnections() ?? 0),
    handle: (call) => app.handle(call),
    log,
    logRequest: (r) => logger.request(r),
  })
  listenerRef = listener
  listenPort = listener.port
  // a wildcard bind is reached locally at localhost
  const listenUrl = `https://${formatHostPort(defaultAdvertise({ host, port: listener.port }))}`
  baseUrl = opts.advertise ? `https://${formatHostPort(opts.advertise)}` : listenUrl
  const advertised = opts.advertise ?? defaultAdvertise({ host, port: listener.port })
  ctrlEndpoint = `tls:${formatHostPort({ host: advertised.host, port: control.port ?? advertised.port })}`
  phases.end('listener')
  if (clusterNode) {
    await clusterNode.join({ certPem: pki.server.certPem, fingerprint: pki.server.view.fingerprintSha1, baseUrl, ctrlAddress: ctrlEndpoint })
    phases.end('cluster join')
  }
  logger.debug(phases.done(), 'start-up phases')

  let stopped = false
  return {
    url: listenUrl,
    advertisedUrl: baseUrl,
    port: listener.port,
    pki,
    clock,
    routes,
    generatedAdminPassword,
    metricsUrl: metricsServer ? `http://${formatHostPort({ host: opts.metricsListen!.host, port: metricsServer.port! })}` : undefined,
    authGate,
    async sweepSessions() {
      await sessions.ask({ type: 'apiSession.sweep' })
    },
    enforcePolicies,
    async pruneRevocations() {
      await identities.ask({ type: 'revocation.prune' })
    },
    cluster: clusterNode,
    control,
    get ctrlEndpoint() {
      return ctrlEndpoint
    },
    async stop() {
      if (stopped) return
      stopped = true
      // the routers first: their sockets would keep the API listener's server from closing
      await control.stop()
      await listener.close()
      await metricsServer?.stop(true)
      await clusterNode?.stop()
      await integrity.idle()
      clearInterval(enforcer)
      oidcAuthRequests.stop()
      policyResolver.stop()
      postureData.stop()
      identityTraces.stop()
      sessionRegistry.stopTimers()
      stopRevocationPruning()
      await sessions.ask({ type: 'apiSession.flushActivity' })
      await Promise.all([identities.stop(), sessions.stop(), graph.stop(), ca.stop(), controllers.stop()])
      await store.close()
      logger.flush()
      removeLastResort?.()
    },
  }
}

/**
 * Wall and CPU milliseconds of each start-up phase (logged at debug level): `modules` is the time from the process's
 * start to startServer (loading and compiling the code), each later phase the time since the previous one ended.
 */
function startPhases(): { end(name: string): void; done(): { ms: Record<string, number>; cpuMs: Record<string, number> } } {
  const cpuNow = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const ms: Record<string, number> = { modules: Math.round(performance.now()) }
  const cpuMs: Record<string, number> = { modules: Math.round(cpuNow()) }
  let last = performance.now()
  let lastCpu = cpuNow()
  return {
    end(name) {
      const [now, cpu] = [performance.now(), cpuNow()]
      ms[name] = Math.round(now - last)
      cpuMs[name] = Math.round(cpu - lastCpu)
      ;[last, lastCpu] = [now, cpu]
    },
    done: () => ({ ms, cpuMs }),
  }
}

/** Creates the default admin on a new data directory; returns the password when it had to be generated. */
async function ensureDefaultAdmin(identities: IdentityActor, opts: ServerOptions, log: (l: string) => void): Promise<string | undefined> {
  for (const i of identities.snapshot().identities.values()) if (i.isDefaultAdmin) return undefined
  const username = opts.adminUsername ?? 'admin'
  let password = opts.adminPassword
  let generated: string | undefined
  if (!password) {
    password = generated = randomBytes(18).toString('base64url')
    log(`generated password for the default admin '${username}' (shown once): ${generated}`)
  }
  await identities.ask({
    type: 'identity.create',
    input: { name: 'Default Admin', isAdmin: true, typeId: 'Default' },
    isDefaultAdmin: true,
    updb: { username, passwordHash: await hashPassword(password) },
    change: { author: 'system', source: 'system' },
  })
  return generated
}
