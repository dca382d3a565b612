/**
 * The route table of both edge APIs and the fabric API: each routes module with what it needs of the actors, flows
 * and the control plane's presence view. Order matters only for the version routes, which list the table itself.
 */
import type { Clock } from '../lib/clock.ts'
import { policiesNamingSigner } from '../domain/identity/identity-auth-policy.ts'
import type { RouteDef } from '../http/http-route.ts'
import type { RouterPresenceReads } from '../domain/router/router-presence.ts'
import { versionRoutes, type VersionInfo } from '../http/routes/shared/version-routes.ts'
import { authenticateRoutes } from '../http/routes/shared/authenticate-routes.ts'
import { currentIdentityRoutes } from '../http/routes/shared/current-identity-routes.ts'
import { mfaRoutes } from '../http/routes/shared/current-identity-mfa-routes.ts'
import { externalJwtSignerRoutes } from '../http/routes/shared/external-jwt-signer-routes.ts'
import { controllerRoutes } from '../http/routes/shared/controller-routes.ts'
import { identityRoutes } from '../http/routes/management/identity-routes.ts'
import { identityDisableRoutes } from '../http/routes/management/identity-disable-routes.ts'
import { identityTraceRoutes } from '../http/routes/management/identity-trace-routes.ts'
import { authPolicyRoutes } from '../http/routes/management/auth-policy-routes.ts'
import { revocationRoutes } from '../http/routes/management/revocation-routes.ts'
import { authenticatorRoutes } from '../http/routes/management/authenticator-routes.ts'
import { apiSessionRoutes } from '../http/routes/management/api-session-routes.ts'
import { summaryRoutes } from '../http/routes/management/summary-routes.ts'
import { edgeplaneStatusRoutes } from '../http/routes/management/edgeplane-status-routes.ts'
import { enrollmentRoutes } from '../http/routes/management/enrollment-routes.ts'
import { identityPolicyRoutes } from '../http/routes/management/identity-policy-routes.ts'
import { configTypeRoutes } from '../http/routes/management/config-type-routes.ts'
import { configRoutes } from '../http/routes/management/config-routes.ts'
import { serviceRoutes } from '../http/routes/management/service-routes.ts'
import { edgeRouterRoutes } from '../http/routes/management/edge-router-routes.ts'
import { routerRoutes } from '../http/routes/management/router-routes.ts'
import { terminatorRoutes } from '../http/routes/management/terminator-routes.ts'
import { servicePolicyRoutes } from '../http/routes/management/service-policy-routes.ts'
import { edgeRouterPolicyRoutes } from '../http/routes/management/edge-router-policy-routes.ts'
import { serviceEdgeRouterPolicyRoutes } from '../http/routes/management/service-edge-router-policy-routes.ts'
import { insightRoutes } from '../http/routes/management/insight-routes.ts'
import { roleAttributeRoutes } from '../http/routes/management/role-attribute-routes.ts'
import { caRoutes } from '../http/routes/management/ca-routes.ts'
import { networkJwtRoutes } from '../http/routes/shared/network-jwt-routes.ts'
import { createNetworkJwts } from '../flows/enroll/enroll-network-jwt.ts'
import { controllerSettingRoutes } from '../http/routes/management/controller-setting-routes.ts'
import { protocolRoutes } from '../http/routes/client/protocol-routes.ts'
import { postureCheckRoutes } from '../http/routes/management/posture-check-routes.ts'
import { identityPostureRoutes } from '../http/routes/management/identity-posture-routes.ts'
import { databaseRoutes } from '../http/routes/management/database-routes.ts'
import { clusterRoutes } from '../http/routes/management/cluster-routes.ts'
import { enrollRoutes } from '../http/routes/client/enroll-routes.ts'
import { clientServiceRoutes } from '../http/routes/client/client-service-routes.ts'
import { sessionRoutes } from '../http/routes/client/session-routes.ts'
import { apiSessionCertificateRoutes } from '../http/routes/client/api-session-certificate-routes.ts'
import { postureResponseRoutes } from '../http/routes/client/posture-response-routes.ts'
import { fabricRoutes } from '../http/routes/fabric/fabric-routes.ts'
import type { CircuitControl, LinkControl } from '../domain/fabric/fabric-types.ts'
import { createEnrollByToken } from '../flows/enroll/enroll-by-token.ts'
import { createEnrollKeys } from '../flows/enroll/enroll-keys.ts'
import type { createControllerMetrics } from '../http/http-metrics.ts'
import type { Actors } from './boot-actors.ts'
import type { AuthParts } from './boot-auth.ts'
import type { Addresses } from './boot-options.ts'
import type { OpsParts } from './boot-ops.ts'
import type { PolicyParts } from './boot-policy.ts'

export function bootRoutes(
  actors: Actors,
  policy: PolicyParts,
  auth: AuthParts,
  ops: OpsParts,
  ctx: {
    clock: Clock
    startedAt: number
    timeoutMs: number
    version: VersionInfo
    addresses: Addresses
    presence: RouterPresenceReads
    serviceListed: ReturnType<typeof createControllerMetrics>['serviceListed']
    /** This node's links and circuits (the control plane) for the fabric API and the sessions' route paths. */
    links: LinkControl
    circuits: CircuitControl
  },
): RouteDef[] {
  const { identities, sessions, graph, ca, controllers, clusterNode, graphLookups } = actors
  const { reads, posture, postureEvaluator, identityTraces, policyResolver } = policy
  const { authMethods, extJwtSecondary, authGate, certExtension, mfaFlows, oidcTokens, enrollments, routerEnrollments, tokens, tokenKeys } = auth
  const { clock, startedAt, timeoutMs, presence } = ctx
  const { version: VERSION, revision: REVISION } = ctx.version
  const routes: RouteDef[] = []
  const graphRouteDeps = { graph, identities, sessions, reads, clock, posture: postureEvaluator, presence }
  routes.push(
    ...versionRoutes(ctx.version, () => routes),
    ...authenticateRoutes({ identities, sessions, clock, timeoutMs, authMethods, extJwtSecondary, gate: authGate }),
    ...currentIdentityRoutes({ identities, sessions, clock, certExtension }),
    ...mfaRoutes({ mfa: mfaFlows, totpToken: (claims) => oidcTokens.totpToken(claims, ctx.addresses.baseUrl) }),
    ...identityRoutes({ identities, sessions, clock, startedAt, enrollments, caName: (id) => ca.snapshot().cas.get(id)?.name }),
    ...identityDisableRoutes({ identities, sessions }),
    ...identityTraceRoutes({ identities, traces: identityTraces.registry, clock }),
    ...authPolicyRoutes({ identities }),
    ...revocationRoutes({ identities }),
    ...authenticatorRoutes({ identities, clock, enrollments, ownCas: auth.ownCas, cas: () => ca.snapshot() }),
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
    ...clientServiceRoutes({ graph, reads, tokens, clock, startedAt, posture: postureEvaluator, listed: ctx.serviceListed, presence }),
    ...sessionRoutes({
      graph, sessions, reads, tokens, clock, presence, circuits: ctx.circuits,
      posture: { evaluator: postureEvaluator, posture, policyName: (id) => graph.snapshot().servicePolicies.get(id)?.name ?? id },
    }),
    ...apiSessionCertificateRoutes({ sessions, sessionCertificates: auth.sessionCertificates }),
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
    ...caRoutes({ ca, clock, issuer: () => ctx.addresses.baseUrl }),
    ...postureCheckRoutes({ ...graphRouteDeps, startedAt }),
    ...postureResponseRoutes({ graph, reads, posture, evaluator: postureEvaluator, clock }),
    ...identityPostureRoutes({ identities, sessions, posture }),
    ...databaseRoutes({ snapshots: ops.snapshots, integrity: ops.integrity }),
    ...controllerRoutes({ controllers, cluster: ops.clusterView }),
    ...clusterRoutes({ controllers, cluster: ops.clusterView }),
    ...controllerSettingRoutes({ controllers }),
    ...networkJwtRoutes({ jwts: createNetworkJwts({ ca, advertisedUrl: () => ctx.addresses.baseUrl }) }),
    ...protocolRoutes({ advertisedUrl: () => ctx.addresses.baseUrl }),
    ...fabricRoutes({
      ...graphRouteDeps, links: ctx.links, circuits: ctx.circuits, snapshots: ops.snapshots, clustered: clusterNode !== undefined,
    }),
  )
  return routes
}
