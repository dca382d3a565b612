/**
 * Management API, edgeplane extensions: policy insight. Why an identity can or cannot reach a service or use an
 * edge router (flows/insight/insight-explain.ts), and what a write would do before it is applied
 * (flows/insight/insight-preview.ts). Routes parse, call the flow and render; nothing here writes.
 */
import type { PolicyGraphLookups } from '../../../actors/policy-graph/policy-graph-policies.ts'
import type { IndexChange, IndexPreview, PreviewUnit } from '../../../domain/policy/policy-preview.ts'
import type { Fix, RoleVerdict } from '../../../domain/policy/policy-explain.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { explainRouterAccess, explainServiceAccess, type ExplainDeps } from '../../../flows/insight/insight-explain.ts'
import { previewChange, type PreviewEntityType, type PreviewOutcome } from '../../../flows/insight/insight-preview.ts'
import {
  PolicyPreview,
  PolicyPreviewCreate,
  PolicyPreviewQuery,
  RouterAccessExplanation,
  ServiceAccessExplanation,
} from '../../../../schemas/insight.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { validatorOf } from '../../http-validate.ts'
import { toEntityRef } from '../../mappers/common-mapper.ts'
import { found, type GraphRouteDeps, type WriteBodies } from './crud-routes.ts'
import { EDGE_ROUTER_BODIES } from './edge-router-routes.ts'
import { EDGE_ROUTER_POLICY_BODIES } from './edge-router-policy-routes.ts'
import { IDENTITY_BODIES } from './identity-routes.ts'
import { SERVICE_EDGE_ROUTER_POLICY_BODIES } from './service-edge-router-policy-routes.ts'
import { SERVICE_POLICY_BODIES } from './service-policy-routes.ts'
import { SERVICE_BODIES } from './service-routes.ts'

export const INSIGHT_ROUTES = {
  serviceAccess: '/identities/:id/access/:serviceId',
  routerAccess: '/identities/:id/access/edge-routers/:edgeRouterId',
  previews: '/policy-previews',
} as const

export interface InsightRouteDeps extends GraphRouteDeps {
  lookups: PolicyGraphLookups
  preview(change: IndexChange): IndexPreview
}

const BODIES: Record<PreviewEntityType, WriteBodies> = {
  'service-policies': SERVICE_POLICY_BODIES,
  'edge-router-policies': EDGE_ROUTER_POLICY_BODIES,
  'service-edge-router-policies': SERVICE_EDGE_ROUTER_POLICY_BODIES,
  identities: IDENTITY_BODIES,
  services: SERVICE_BODIES,
  'edge-routers': EDGE_ROUTER_BODIES,
}

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000

function whole(field: string, text: string | undefined, dflt: number, max: number): number {
  if (text === undefined || text === '') return dflt
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0 || n > max) throw ApiError.invalidField(field, `${field} must be an integer from 0 to ${max}`, text)
  return n
}

const policyRef = (entity: string, p: { id: string; name: string }) => toEntityRef(entity, p.id, p.name)

function verdictJson(entity: string, p: { id: string; name: string; semantic: string; identityRoles: readonly string[] }, v: RoleVerdict) {
  return { policy: policyRef(entity, p), semantic: p.semantic, identityRoles: [...p.identityRoles], matches: v.matches, matchedBy: v.matchedBy, missingRoles: v.missingRoles }
}

/** A fix for a person: what to change, on which policies. */
function fixJson(f: Fix, entity: string, identity: { id: string; name: string }, target: string, policyName: (id: string) => string) {
  switch (f.action) {
    case 'add-attributes': {
      const names = f.policyIds.map(policyName)
      return {
        action: f.action, attributes: f.attributes, policies: f.policyIds.map((id) => toEntityRef(entity, id, policyName(id))),
        description: `give identity ${identity.name} role attribute${f.attributes.length > 1 ? 's' : ''} ${f.attributes.map((a) => `#${a}`).join(' ')} (selected by ${names.join(', ')})`,
      }
    }
    case 'name-in-policy':
      return {
        action: f.action, attributes: [], policies: [toEntityRef(entity, f.policyId, policyName(f.policyId))],
        description: `add @${identity.id} to the identityRoles of ${policyName(f.policyId)}`,
      }
    case 'create-policy':
      return { action: f.action, attributes: [], policies: [], description: `no ${entity.replace(/-/g, ' ').replace(/ies$/, 'y')} names ${target}: create one naming it and @${identity.id}` }
  }
}

/** Rows of one page: deltas expanded identity by service, whole deltas skipped by their size. */
function pageOf<T>(items: readonly T[], units: (t: T) => [PreviewUnit, PreviewUnit], offset: number, limit: number, row: (t: T, i: string, s: string) => unknown): unknown[] {
  const out: unknown[] = []
  let skip = offset
  for (const t of items) {
    if (out.length >= limit) break
    const [iu, su] = units(t)
    const n = iu.size * su.size
    if (skip >= n) {
      skip -= n
      continue
    }
    const ids = iu.ids()
    const svcs = su.ids()
    for (let k = skip; k < n && out.length < limit; k++) out.push(row(t, ids[Math.floor(k / su.size)]!, svcs[k % su.size]!))
    skip = 0
  }
  return out
}

type Counts = { dialGained: number; dialLost: number; bindGained: number; bindLost: number; routersLost: number }

function summaryOf(p: IndexPreview, serviceRef: (id: string) => unknown) {
  // counted per service unit first (its members fare alike), then handed to each member once
  const perUnit = new Map<PreviewUnit, Counts>()
  const counts = (u: PreviewUnit) => {
    let c = perUnit.get(u)
    if (!c) perUnit.set(u, (c = { dialGained: 0, dialLost: 0, bindGained: 0, bindLost: 0, routersLost: 0 }))
    return c
  }
  const flags = new Map<PreviewUnit, { gaining: boolean; losing: boolean; losingRouters: boolean }>()
  const flagsOf = (u: PreviewUnit) => {
    let f = flags.get(u)
    if (!f) flags.set(u, (f = { gaining: false, losing: false, losingRouters: false }))
    return f
  }
  for (const d of p.access) {
    const field = `${d.permission === 'Dial' ? 'dial' : 'bind'}${d.change === 'gained' ? 'Gained' : 'Lost'}` as keyof Counts
    counts(d.services)[field] += d.identities.size
    if (d.change === 'gained') flagsOf(d.identities).gaining = true
    else flagsOf(d.identities).losing = true
  }
  for (const l of p.routerLosses) {
    counts(l.services).routersLost += l.identities.size
    flagsOf(l.identities).losingRouters = true
  }
  const perAttr = new Map<string, { gaining: number; losing: number; losingRouters: number }>()
  for (const [u, f] of flags) {
    for (const a of u.attrs) {
      const c = perAttr.get(a) ?? { gaining: 0, losing: 0, losingRouters: 0 }
      if (f.gaining) c.gaining += u.size
      if (f.losing) c.losing += u.size
      if (f.losingRouters) c.losingRouters += u.size
      perAttr.set(a, c)
    }
  }
  const perService = new Map<string, Counts>()
  for (const [u, c] of perUnit) for (const sid of u.ids()) perService.set(sid, c)
  return {
    services: [...perService.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([sid, c]) => ({ service: serviceRef(sid), ...c })),
    identityRoleAttributes: [...perAttr.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([attribute, c]) => ({ attribute, ...c })),
  }
}

export function insightRoutes(deps: InsightRouteDeps): RouteDef[] {
  const common = { apis: ['management'] as const, access: 'admin' as const, tag: 'Policy Insight' }
  const routerRef = (r: { id: string; name: string }) => ({ ...toEntityRef('edge-routers', r.id, r.name), isOnline: deps.presence.presenceOf(r.id).isOnline })
  const explainDeps: ExplainDeps = {
    graph: () => deps.graph.snapshot(),
    sessions: () => deps.sessions.snapshot(),
    reads: deps.reads,
    posture: deps.posture,
    now: () => deps.clock.now(),
  }
  const identity = (id: string) => found(deps.identities.snapshot().identity(id))
  return [
    route({
      ...common, method: 'GET', path: INSIGHT_ROUTES.serviceAccess, response: ServiceAccessExplanation,
      summary: 'Explain why an identity can or cannot Dial and Bind a service, with the smallest fixes (edgeplane extension)',
      handle: (ctx) => {
        const i = identity(ctx.params.id)
        const s = found(deps.graph.snapshot().services.get(ctx.params.serviceId))
        const e = explainServiceAccess(explainDeps, i, s)
        const g = deps.graph.snapshot()
        const spName = (id: string) => g.servicePolicies.get(id)?.name ?? id
        const erpName = (id: string) => g.edgeRouterPolicies.get(id)?.name ?? id
        const permission = (type: 'Dial' | 'Bind') => {
          const p = e.permissions.find((x) => x.type === type)!
          return {
            allowed: p.allowed,
            policies: p.policies.map((j) => ({
              ...verdictJson('service-policies', j.policy, j.verdict),
              postureChecks: j.postureChecks.map((c) => ({ postureCheck: toEntityRef('posture-checks', c.check.id, c.check.name), typeId: c.check.typeId, apiSessions: c.sessions })),
            })),
            fixes: p.fixes.map((f) => fixJson(f, 'service-policies', i, `service ${s.name} for ${type}`, spName)),
          }
        }
        return ok({
          identity: toEntityRef('identities', i.id, i.name),
          service: toEntityRef('services', s.id, s.name),
          dial: permission('Dial'),
          bind: permission('Bind'),
          edgeRouters: {
            identityEdgeRouterPolicies: e.identityEdgeRouterPolicies.map((p) => policyRef('edge-router-policies', p)),
            serviceEdgeRouterPolicies: e.serviceEdgeRouterPolicies.map((p) => policyRef('service-edge-router-policies', p)),
            identityRouterCount: e.identityRouterCount,
            serviceRouterCount: e.serviceRouterCount,
            commonRouters: e.commonRouters.map(routerRef),
            fixes: e.routerFixes.map((f) => fixJson(f, 'edge-router-policies', i, `an edge router of service ${s.name}`, erpName)),
          },
        })
      },
    }),
    route({
      ...common, method: 'GET', path: INSIGHT_ROUTES.routerAccess, response: RouterAccessExplanation,
      summary: 'Explain why an identity can or cannot use an edge router, with the smallest fixes (edgeplane extension)',
      handle: (ctx) => {
        const i = identity(ctx.params.id)
        const g = deps.graph.snapshot()
        const r = found(g.edgeRouters.get(ctx.params.edgeRouterId))
        const e = explainRouterAccess(explainDeps, i, r)
        const erpName = (id: string) => g.edgeRouterPolicies.get(id)?.name ?? id
        return ok({
          identity: toEntityRef('identities', i.id, i.name),
          edgeRouter: routerRef(r),
          allowed: e.allowed,
          policies: e.policies.map((j) => verdictJson('edge-router-policies', j.policy, j.verdict)),
          fixes: e.fixes.map((f) => fixJson(f, 'edge-router-policies', i, `edge router ${r.name}`, erpName)),
          serviceCount: e.serviceCount,
        })
      },
    }),
    route({
      ...common, method: 'POST', path: INSIGHT_ROUTES.previews, body: PolicyPreviewCreate, query: PolicyPreviewQuery, response: PolicyPreview,
      summary: 'Preview what a policy or role attribute change would do, without applying it (edgeplane extension)',
      handle: (ctx) => {
        const limit = whole('limit', ctx.query.limit, DEFAULT_LIMIT, MAX_LIMIT)
        const offset = whole('offset', ctx.query.offset, 0, Number.MAX_SAFE_INTEGER)
        const summary = ctx.query.summary === 'true'
        const { operation, entityType } = ctx.body
        const bodies = BODIES[entityType]
        let fields: object = {}
        if (operation !== 'delete') {
          const schema = operation === 'create' ? bodies.schemas.create : operation === 'update' ? bodies.schemas.put : bodies.schemas.patch
          fields = bodies.fields(validatorOf(schema, 'body')(ctx.body.body ?? {}) as object, operation)
        }
        const outcome = previewChange(
          {
            graph: () => deps.graph.snapshot(),
            identities: () => deps.identities.snapshot(),
            lookups: deps.lookups,
            preview: deps.preview,
            now: () => deps.clock.now(),
          },
          { operation, entityType, ...(ctx.body.id !== undefined ? { id: ctx.body.id } : {}), fields },
        )
        return ok(renderPreview(deps, outcome, entityType, summary, limit, offset))
      },
    }),
  ]
}

function renderPreview(deps: InsightRouteDeps, outcome: PreviewOutcome, entityType: PreviewEntityType, summary: boolean, limit: number, offset: number) {
  const p = outcome.preview
  const ids = deps.identities.snapshot()
  const g = deps.graph.snapshot()
  const made = (id: string, type: PreviewEntityType) => (outcome.created?.id === id && entityType === type ? outcome.created.name : undefined)
  const identityRef = (id: string) => toEntityRef('identities', id, ids.identity(id)?.name ?? made(id, 'identities') ?? id)
  const serviceRef = (id: string) => toEntityRef('services', id, g.services.get(id)?.name ?? made(id, 'services') ?? id)
  const t = p.totals
  const totalCount = t.dialGained + t.dialLost + t.bindGained + t.bindLost + t.routersLost
  let changes: unknown[] = []
  if (!summary) {
    changes = pageOf(p.access, (d) => [d.identities, d.services], offset, limit, (d, i, s) => ({
      identity: identityRef(i), service: serviceRef(s), change: d.change, permission: d.permission,
    }))
    const accessRows = totalCount - t.routersLost
    if (changes.length < limit) {
      changes.push(...pageOf(p.routerLosses, (l) => [l.identities, l.services], Math.max(0, offset - accessRows), limit - changes.length, (_l, i, s) => ({
        identity: identityRef(i), service: serviceRef(s), change: 'routers-lost', permission: null,
      })))
    }
  }
  return {
    totals: t,
    changes,
    pagination: { limit, offset, totalCount },
    summary: summary ? summaryOf(p, serviceRef) : null,
  }
}
