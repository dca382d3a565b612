/**
 * Why an identity can or cannot reach a service (per Dial and Bind) or use an edge router: the policies that name the
 * other side, how each judges the identity, the posture checks gating them on the identity's API sessions, the edge
 * router side, and the smallest verified fixes (domain/policy/policy-explain.ts). Reads only.
 * Rules:
 * - answered from the policy index (the policies selecting the service or router, the identity's and the service's
 *   edge router policies, the routers in common) and the graph's records: never a scan of identities
 * - a service policy's posture checks are evaluated for each API session of the identity (at most MAX_SESSIONS),
 *   for the policies that grant the identity the service (the others grant nothing to gate)
 * - edge router fixes are proposed when the identity may Dial or Bind the service but no edge router is common: the
 *   edge router policies that would give the identity a router the service may use, judged as service policies are
 */
import type { Identity } from '../../domain/identity/identity-types.ts'
import { judgeRoles, smallestFixes, type Fix, type PolicySide, type RoleVerdict } from '../../domain/policy/policy-explain.ts'
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import { intersectSorted } from '../../domain/policy/policy-index-class.ts'
import type { Permission, PolicyReads } from '../../domain/policy/policy-reads.ts'
import type { EdgeRouterPolicy, Router, Service, ServiceEdgeRouterPolicy, ServicePolicy } from '../../domain/policy/policy-types.ts'
import type { PostureCheck } from '../../domain/posture/posture-types.ts'
import type { SessionReads } from '../../domain/session/session-reads.ts'
import type { PostureEvaluator } from '../posture/posture-evaluate.ts'

/** API sessions of one identity whose posture is shown. */
export const MAX_SESSIONS = 20

export interface ExplainDeps {
  graph: () => PolicyGraphReads
  sessions: () => SessionReads
  reads: PolicyReads
  posture: PostureEvaluator
  now: () => number
}

export interface PostureGate {
  check: PostureCheck
  /** Per API session of the identity: whether the check passes (empty when the policy grants nothing). */
  sessions: { apiSessionId: string; isPassing: boolean }[]
}

export interface PolicyJudgement<P> {
  policy: P
  verdict: RoleVerdict
}

export interface ServicePolicyJudgement extends PolicyJudgement<ServicePolicy> {
  postureChecks: PostureGate[]
}

export interface PermissionExplanation {
  type: Permission
  allowed: boolean
  policies: ServicePolicyJudgement[]
  fixes: Fix[]
}

export interface ServiceAccessExplanation {
  identity: Identity
  service: Service
  permissions: PermissionExplanation[]
  identityEdgeRouterPolicies: EdgeRouterPolicy[]
  serviceEdgeRouterPolicies: ServiceEdgeRouterPolicy[]
  identityRouterCount: number
  serviceRouterCount: number
  commonRouters: Router[]
  routerFixes: Fix[]
}

export interface RouterAccessExplanation {
  identity: Identity
  router: Router
  allowed: boolean
  policies: PolicyJudgement<EdgeRouterPolicy>[]
  fixes: Fix[]
  /** Services the identity may Dial or Bind and reach over this router. */
  serviceCount: number
}

const identitySide = (p: { id: string; semantic: ServicePolicy['semantic']; identityRoles: readonly string[] }): PolicySide => ({ id: p.id, semantic: p.semantic, roles: p.identityRoles })

function present<T>(ids: readonly string[], get: (id: string) => T | undefined): T[] {
  const out: T[] = []
  for (const id of ids) {
    const v = get(id)
    if (v) out.push(v)
  }
  return out
}

export function explainServiceAccess(deps: ExplainDeps, identity: Identity, service: Service): ServiceAccessExplanation {
  const g = deps.graph()
  const r = deps.reads
  const attrs = identity.roleAttributes ?? []
  const naming = present(r.policiesOf('service', service.id, 'service-policy'), (id) => g.servicePolicies.get(id))
  const permissions = r.permissionsOf(identity.id, service.id)
  const sessions = deps.sessions().sessionsOf(identity.id).slice(0, MAX_SESSIONS)
  const now = deps.now()
  const explain = (type: Permission): PermissionExplanation => {
    const ofType = naming.filter((p) => p.type === type)
    // posture per granting policy and session, as the client's service list evaluates it
    const outcomes = new Map<string, Map<string, { apiSessionId: string; isPassing: boolean }[]>>()
    if (permissions.includes(type)) {
      for (const s of sessions) {
        for (const entry of deps.posture.policies({ id: s.id, identityId: identity.id, isMfaComplete: s.isMfaComplete, mfaCompletedAt: s.mfaCompletedAt }, service.id, type, now)) {
          let perCheck = outcomes.get(entry.policyId)
          if (!perCheck) outcomes.set(entry.policyId, (perCheck = new Map()))
          for (const c of entry.checks) {
            const l = perCheck.get(c.check.id) ?? []
            l.push({ apiSessionId: s.id, isPassing: c.result.isPassing })
            perCheck.set(c.check.id, l)
          }
        }
      }
    }
    const policies = ofType.map((p) => ({
      policy: p,
      verdict: judgeRoles(identitySide(p), identity.id, attrs),
      postureChecks: present(r.membersOf(p.id, 'posture-check'), (id) => g.postureChecks.get(id)).map((check) => ({
        check,
        sessions: outcomes.get(p.id)?.get(check.id) ?? [],
      })),
    }))
    return { type, allowed: permissions.includes(type), policies, fixes: smallestFixes(ofType.map(identitySide), identity.id, attrs) }
  }
  const common = r.routersFor(identity.id, service.id)
  const serviceRouters = r.routersOfService(service.id)
  let routerFixes: Fix[] = []
  if (permissions.length > 0 && common.length === 0 && serviceRouters.length > 0) {
    // the edge router policies that would give the identity a router the service may use
    const useful = [...g.edgeRouterPolicies.all()].filter((p) => intersectSorted(r.membersOf(p.id, 'router'), serviceRouters).length > 0)
    routerFixes = smallestFixes(useful.map(identitySide), identity.id, attrs)
  }
  return {
    identity,
    service,
    permissions: [explain('Dial'), explain('Bind')],
    identityEdgeRouterPolicies: present(r.policiesOf('identity', identity.id, 'edge-router-policy'), (id) => g.edgeRouterPolicies.get(id)),
    serviceEdgeRouterPolicies: present(r.policiesOf('service', service.id, 'service-edge-router-policy'), (id) => g.serviceEdgeRouterPolicies.get(id)),
    identityRouterCount: r.routersOfIdentity(identity.id).length,
    serviceRouterCount: serviceRouters.length,
    commonRouters: present(common, (id) => g.edgeRouters.get(id)),
    routerFixes,
  }
}

export function explainRouterAccess(deps: ExplainDeps, identity: Identity, router: Router): RouterAccessExplanation {
  const g = deps.graph()
  const r = deps.reads
  const attrs = identity.roleAttributes ?? []
  const naming = present(r.policiesOf('router', router.id, 'edge-router-policy'), (id) => g.edgeRouterPolicies.get(id))
  const allowed = r.routersOfIdentity(identity.id).includes(router.id)
  const overRouter = allowed ? intersectSorted(r.servicesOfIdentity(identity.id), r.servicesOfRouter(router.id)).length : 0
  return {
    identity,
    router,
    allowed,
    policies: naming.map((p) => ({ policy: p, verdict: judgeRoles(identitySide(p), identity.id, attrs) })),
    fixes: smallestFixes(naming.map(identitySide), identity.id, attrs),
    serviceCount: overRouter,
  }
}
