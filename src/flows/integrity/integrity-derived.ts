/**
 * The derived in-memory structures of the actors, recomputed from the stored records and compared: every lookup an
 * actor keeps (names, role attributes, usernames, fingerprints, tokens, kids, issuers) must find each record, and the
 * policy index must equal one rebuilt from scratch. A record the actor no longer holds as stored (changed since the
 * copy was taken) is skipped: the check compares like with like. None of these is fixable in place (they are memory
 * only); a restart rebuilds every one of them from the records.
 */
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import type { ExternalJwtSignerReads } from '../../domain/ca/ca-jwt-signer-types.ts'
import type { ReadTable } from '../../lib/entity-table.ts'
import { PolicyIndex } from '../../domain/policy/policy-index.ts'
import { buildPolicyIndex, comparePolicyDumps, indexEntitiesOf } from '../../domain/policy/policy-index-check.ts'
import type { CheckStep, Finding } from './integrity-checks.ts'
import type { RecordTable, StoredRecords } from '../../domain/integrity/integrity-records.ts'

export interface DerivedSources {
  identities: IdentityReads
  graph: PolicyGraphReads
  ca: ThirdPartyCaReads & ExternalJwtSignerReads
  /** The policy resolver's maintained index. */
  policyIndex: Pick<PolicyIndex, 'dump'>
}

const RESTART = 'unable to fix in place: a restart rebuilds it from the records'

type Versioned = { readonly id: string; readonly updatedAt: number }

/** Checks each lookup of every record the actor holds as stored. */
function lookups<T extends Versioned>(
  db: RecordTable,
  stored: ReadonlyMap<string, T>,
  live: (id: string) => T | undefined,
  keys: readonly { what: string; of: (t: T) => string | null | undefined; find: (v: string) => T | undefined }[],
  out: Finding[],
): void {
  for (const rec of stored.values()) {
    if (live(rec.id)?.updatedAt !== rec.updatedAt) continue
    for (const k of keys) {
      const v = k.of(rec)
      if (v === null || v === undefined || v === '') continue
      const found = k.find(v)
      // another record holding the same value is a uniqueness finding of the stored records already
      if (found === undefined || k.of(found) !== v) {
        out.push({ description: `the ${k.what} lookup of ${db} does not find ${rec.id} by '${v}': ${RESTART}` })
      }
    }
  }
}

/** Checks that the role attribute index holds every record the actor holds as stored under each of its attributes. */
function roleIndex<T extends Versioned & { roleAttributes: readonly string[] | null }>(
  db: RecordTable,
  stored: ReadonlyMap<string, T>,
  live: (id: string) => T | undefined,
  idsWithRole: (attr: string) => ReadonlySet<string>,
  out: Finding[],
): void {
  for (const rec of stored.values()) {
    if (live(rec.id)?.updatedAt !== rec.updatedAt) continue
    for (const attr of rec.roleAttributes ?? []) {
      if (!idsWithRole(attr).has(rec.id)) out.push({ description: `the role attribute index of ${db} does not hold ${rec.id} under '${attr}': ${RESTART}` })
    }
  }
}

const byName = <T extends Versioned & { name: string }>(table: ReadTable<T>) => ({
  what: 'name',
  of: (t: T) => t.name,
  find: (v: string) => {
    const id = table.idByName(v)
    return id === undefined ? undefined : table.get(id)
  },
})

/** The comparisons of derived structures as steps (one table's lookups each) that add their findings to `out`. */
export function derivedSteps(live: DerivedSources, r: StoredRecords, out: Finding[]): CheckStep[] {
  const steps: CheckStep[] = []
  const ids = live.identities
  steps.push(() => lookups('identities', r.identities, (id) => ids.identity(id), [
    { what: 'name', of: (i) => i.name, find: (v) => ids.identity(ids.identityIdByName(v) ?? '') },
    { what: 'externalId', of: (i) => i.externalId, find: (v) => ids.identityByExternalId(v) },
  ], out))
  steps.push(() => roleIndex('identities', r.identities, (id) => ids.identity(id), (a) => ids.idsWithRole(a), out))
  steps.push(() => lookups('authenticators', r.authenticators, (id) => ids.authenticators.get(id), [
    { what: 'username', of: (a) => (a.method === 'updb' ? a.username : null), find: (v) => ids.updbByUsername(v) },
    { what: 'certificate fingerprint', of: (a) => (a.method === 'cert' ? a.fingerprint : null), find: (v) => ids.certByFingerprintOf(v) },
  ], out))
  steps.push(() => lookups('enrollments', r.enrollments, (id) => ids.enrollments.get(id), [{ what: 'token', of: (e) => e.token, find: (v) => ids.enrollmentOfToken(v) }], out))
  steps.push(() => lookups('auth-policies', r['auth-policies'], (id) => ids.authPolicies.get(id), [byName(ids.authPolicies)], out))
  const g = live.graph
  steps.push(() => lookups('config-types', r['config-types'], (id) => g.configTypes.get(id), [byName(g.configTypes)], out))
  steps.push(() => lookups('configs', r.configs, (id) => g.configs.get(id), [byName(g.configs)], out))
  steps.push(() => lookups('services', r.services, (id) => g.services.get(id), [byName(g.services)], out))
  steps.push(() => roleIndex('services', r.services, (id) => g.services.get(id), (a) => g.services.idsWithRole(a), out))
  steps.push(() => roleIndex('routers', new Map([...r.routers].filter(([, x]) => x.isEdge)), (id) => g.edgeRouters.get(id), (a) => g.edgeRouters.idsWithRole(a), out))
  steps.push(() => roleIndex('posture-checks', r['posture-checks'], (id) => g.postureChecks.get(id), (a) => g.postureChecks.idsWithRole(a), out))
  steps.push(() => lookups('routers', r.routers, (id) => g.routers.get(id), [
    byName(g.routers),
    { what: 'certificate fingerprint', of: (x) => x.fingerprint, find: (v) => g.routerOfFingerprint(v) },
    { what: 'enrollment token', of: (x) => x.enrollment?.token, find: (v) => g.routerOfEnrollmentToken(v) },
  ], out))
  steps.push(() => lookups('service-policies', r['service-policies'], (id) => g.servicePolicies.get(id), [byName(g.servicePolicies)], out))
  steps.push(() => lookups('edge-router-policies', r['edge-router-policies'], (id) => g.edgeRouterPolicies.get(id), [byName(g.edgeRouterPolicies)], out))
  steps.push(() => lookups('service-edge-router-policies', r['service-edge-router-policies'], (id) => g.serviceEdgeRouterPolicies.get(id), [byName(g.serviceEdgeRouterPolicies)], out))
  steps.push(() => lookups('posture-checks', r['posture-checks'], (id) => g.postureChecks.get(id), [byName(g.postureChecks)], out))
  const ca = live.ca
  steps.push(() => lookups('cas', r.cas, (id) => ca.cas.get(id), [byName(ca.cas), { what: 'certificate fingerprint', of: (c) => c.fingerprint, find: (v) => ca.caByFingerprint(v) }], out))
  steps.push(() => lookups('external-jwt-signers', r['external-jwt-signers'], (id) => ca.jwtSigners.get(id), [
    byName(ca.jwtSigners),
    { what: 'kid', of: (s) => s.kid, find: (v) => ca.jwtSignerByKid(v) },
    { what: 'issuer', of: (s) => s.issuer, find: (v) => ca.jwtSignerByIssuer(v) },
  ], out))
  return steps
}

/** Entities put into the rebuilt index between two pauses, and policies. */
const ENTITY_SLICE = 1_000
const POLICY_SLICE = 20

/**
 * The policy index rebuilt from the actors' records and compared with the maintained one. The records and the
 * maintained index's dump are taken at one instant (records are replaced, never changed in place, so the captured
 * lists stay as they were); the rebuild then goes in slices, `pause` between them, so requests keep being answered.
 */
export async function checkPolicyIndex(live: DerivedSources, pause: () => Promise<void>): Promise<Finding[]> {
  const g = live.graph
  const entities = [...indexEntitiesOf({
    identities: live.identities.identities.values(),
    services: g.services.values(),
    edgeRouters: g.edgeRouters.values(),
    postureChecks: g.postureChecks.values(),
  })]
  const policies = [...g.indexPolicies()]
  const maintained = live.policyIndex.dump()
  const rebuilt = new PolicyIndex()
  for (let i = 0; i < entities.length; i += ENTITY_SLICE) {
    buildPolicyIndex(entities.slice(i, i + ENTITY_SLICE), [], false, rebuilt)
    await pause()
  }
  for (let i = 0; i < policies.length; i += POLICY_SLICE) {
    buildPolicyIndex([], policies.slice(i, i + POLICY_SLICE), false, rebuilt)
    await pause()
  }
  return comparePolicyDumps(maintained, rebuilt.dump()).map((d) => ({ description: `${d}: ${RESTART}` }))
}
