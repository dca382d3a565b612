/**
 * The aggregates' actors, in the order they need each other: the CA (which owns the PKI), the cluster node (its log
 * is attached before any actor can write), identities, the session registry, the policy graph and the controllers;
 * a cluster node then catches up with the log. Also the start-up notes about the server certificate.
 */
import { hostname as osHostname } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../lib/clock.ts'
import { defaultAdvertise } from '../config/config.ts'
import { startCaActor, type CaActor } from '../actors/ca/ca-actor.ts'
import type { PublicPki } from '../actors/ca/ca-state.ts'
import { startIdentityActor, startRevocationPruning, type IdentityActor } from '../actors/identity/identity-actor.ts'
import { startSessionRegistryActor } from '../actors/session-registry/session-registry-actor.ts'
import { startPolicyGraphActor, type PolicyGraphActor } from '../actors/policy-graph/policy-graph-actor.ts'
import type { PolicyGraphLookups } from '../actors/policy-graph/policy-graph-policies.ts'
import { startControllersActor, type ControllersActor } from '../actors/controllers/controllers-actor.ts'
import { openClusterNode, type ClusterNode } from '../cluster/cluster-node.ts'
import type { LogTarget } from '../cluster/cluster-log.ts'
import { oidcSettingsOf } from '../flows/oidc/oidc-types.ts'
import { createClusterMetrics } from '../http/http-metrics.ts'
import { certificateVerdict } from '../http/http-health.ts'
import type { ServerOptions } from './boot-options.ts'
import type { StoreParts } from './boot-store.ts'
import type { StartPhases } from './boot-phases.ts'

export interface Actors {
  ca: CaActor
  pki: PublicPki
  clusterNode?: ClusterNode
  identities: IdentityActor
  stopRevocationPruning: () => void
  sessionRegistry: ReturnType<typeof startSessionRegistryActor>
  sessions: ReturnType<typeof startSessionRegistryActor>['actor']
  graph: PolicyGraphActor
  graphLookups: PolicyGraphLookups
  controllers: ControllersActor
}

export async function bootActors(
  opts: ServerOptions,
  parts: StoreParts,
  ctx: { clock: Clock; log: (line: string) => void; host: string; timeoutMs: number; phases: StartPhases },
): Promise<Actors> {
  const { store, deps, registry, mailboxes } = parts
  const { clock, log, phases } = ctx
  // the advertised host goes into the server certificate of a new PKI (its port is known once the listener is up)
  const advertiseHost = (opts.advertise ?? defaultAdvertise({ host: ctx.host, port: 0 })).host
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
  noteServerCertificate(pki, opts, clock, log)
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
    timeoutMs: ctx.timeoutMs,
    sweepEveryMs: opts.sessionSweepEveryMs ?? 5_000,
    flushEveryMs: opts.activityFlushEveryMs ?? 10_000,
    clustered: clusterNode !== undefined,
  })
  const sessions = sessionRegistry.actor
  const { withoutToken, unreadableTokens } = sessionRegistry.loaded
  if (withoutToken > 0) {
    log(
      `note: ${withoutToken} API sessions have no token kept for the edge routers (stored before edgeplane kept them${unreadableTokens > 0 ? `, or ${unreadableTokens} whose sealed token did not open` : ''}): ` +
        'they work on the REST APIs, are not pushed to edge routers, and end with their timeout or logout',
    )
  }
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
  return { ca, pki, clusterNode, identities, stopRevocationPruning, sessionRegistry, sessions, graph, graphLookups, controllers }
}

/** Start-up notes about the server certificate: renewed, expiring or expired, or not covering a name asked for. */
function noteServerCertificate(pki: PublicPki, opts: ServerOptions, clock: Clock, log: (line: string) => void): void {
  if (opts.renewServerCert) log(`note: the server certificate was renewed from the intermediate CA; valid until ${new Date(pki.server.view.notAfter).toISOString()}`)
  const serverCertNow = certificateVerdict(pki.server.view, clock.now())
  if (!serverCertNow.healthy || serverCertNow.details.startsWith('warning')) {
    log(`warning: the server certificate ${join(pki.dir, 'server.cert.pem')}: ${serverCertNow.details.replace(/^warning: /, '')} (edgeplane run --renew-server-cert)`)
  }
  if (pki.sansMissing.length > 0) {
    log(`note: the server certificate in ${pki.dir} does not cover ${pki.sansMissing.join(', ')}; it is kept as is`)
  }
}
