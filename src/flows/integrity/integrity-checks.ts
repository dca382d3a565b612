/**
 * The integrity checks over stored records: every rule between them (names unique per kind, the by-username,
 * by-fingerprint, by-token, by-kid and by-issuer values unique, every reference pointing at a record that exists).
 * A finding carries the repair that fixes it, or none when it cannot be fixed automatically. Pure over the records;
 * the actors' derived in-memory structures are compared with them in integrity-derived.ts.
 */
import type { IdentityRepair } from '../../actors/identity/identity-messages.ts'
import type { GraphRepair } from '../../actors/policy-graph/policy-graph-messages.ts'
import type { SessionRepair } from '../../actors/session-registry/session-registry-messages.ts'
import { ROLE_FIELDS } from '../../actors/policy-graph/policy-graph-state.ts'
import { splitRoles } from '../../domain/policy/policy-roles.ts'
import type { EntityKind, PolicyKind } from '../../domain/policy/policy-types.ts'
import type { RecordTable, RecordTypes, StoredRecords } from '../../domain/integrity/integrity-records.ts'
import { REVOCATION_TYPES } from '../../domain/identity/identity-revocation.ts'


export type Repair =
  | { actor: 'identity'; repair: IdentityRepair }
  | { actor: 'policy-graph'; repair: GraphRepair }
  | { actor: 'session-registry'; repair: SessionRepair }

export interface Finding {
  description: string
  /** Absent: not fixable automatically. */
  repair?: Repair
}

const NOT_FIXABLE = 'unable to fix automatically'

/** The sub-db holding each policy kind. */
const POLICY_DBS: Record<PolicyKind, 'service-policies' | 'edge-router-policies' | 'service-edge-router-policies'> = {
  'service-policy': 'service-policies',
  'edge-router-policy': 'edge-router-policies',
  'service-edge-router-policy': 'service-edge-router-policies',
}

/** The sub-db holding the entities a role of each kind names. */
const ENTITY_DBS: Record<EntityKind, RecordTable> = {
  identity: 'identities',
  service: 'services',
  router: 'routers',
  'posture-check': 'posture-checks',
}

/** Sub-dbs whose records carry a name unique within the sub-db. */
const NAMED: readonly RecordTable[] = [
  'identities', 'auth-policies', 'config-types', 'configs', 'services', 'routers', 'service-policies', 'edge-router-policies',
  'service-edge-router-policies', 'posture-checks', 'cas', 'external-jwt-signers',
]

/** One piece of checking work: at most one pass over one table. A caller may pause between steps. */
export type CheckStep = () => void

/** The checks over stored records as steps that add their findings to `out`. */
export function storedRecordSteps(r: StoredRecords, out: Finding[]): CheckStep[] {
  return [...uniquenessSteps(r, out), () => checkIdentityReferences(r, out), () => checkSessionReferences(r, out), () => checkGraphReferences(r, out)]
}

export function checkStoredRecords(r: StoredRecords): Finding[] {
  const out: Finding[] = []
  for (const step of storedRecordSteps(r, out)) step()
  return out
}

/** Values that must be unique within their kind: each value held by more than one record is one finding. */
function unique<K extends RecordTable>(r: StoredRecords, db: K, field: string, valueOf: (rec: RecordTypes[K]) => string | null | undefined, out: Finding[]): void {
  const holders = new Map<string, string[]>()
  for (const [key, rec] of r[db]) {
    const v = valueOf(rec)
    if (v === null || v === undefined || v === '') continue
    const ids = holders.get(v)
    if (ids) ids.push(key)
    else holders.set(v, [key])
  }
  for (const [v, ids] of holders) {
    if (ids.length > 1) out.push({ description: `${db} ${ids.sort().join(', ')} share the ${field} '${v}', which must be unique: ${NOT_FIXABLE}` })
  }
}

function uniquenessSteps(r: StoredRecords, out: Finding[]): CheckStep[] {
  return [
    ...NAMED.map((db) => () => unique(r, db, 'name', (rec) => (rec as { name?: string }).name, out)),
    () => unique(r, 'identities', 'externalId', (i) => i.externalId, out),
    () => unique(r, 'authenticators', 'username', (a) => (a.method === 'updb' ? a.username : null), out),
    () => unique(r, 'authenticators', 'certificate fingerprint', (a) => (a.method === 'cert' ? a.fingerprint : null), out),
    () => unique(r, 'enrollments', 'token', (e) => e.token, out),
    () => unique(r, 'routers', 'certificate fingerprint', (x) => x.fingerprint, out),
    () => unique(r, 'routers', 'enrollment token', (x) => x.enrollment?.token, out),
    () => unique(r, 'api-session-certs', 'fingerprint', (c) => c.fingerprint, out),
    () => unique(r, 'external-jwt-signers', 'kid', (s) => s.kid, out),
    () => unique(r, 'external-jwt-signers', 'issuer', (s) => s.issuer, out),
    () => unique(r, 'cas', 'certificate fingerprint', (c) => c.fingerprint, out),
  ]
}

const missing = (db: string, id: string, field: string, target: string, value: string) =>
  `${db} ${id} references ${target} ${value} (${field}), which doesn't exist`

function checkIdentityReferences(r: StoredRecords, out: Finding[]): void {
  const identity = (repair: IdentityRepair): Repair => ({ actor: 'identity', repair })
  for (const [id, a] of r.authenticators) {
    if (!r.identities.has(a.identityId)) {
      out.push({ description: missing('authenticators', id, 'identityId', 'identities', a.identityId), repair: identity({ kind: 'authenticator.remove', id }) })
    } else if (a.caId && !r.cas.has(a.caId)) {
      out.push({ description: missing('authenticators', id, 'caId', 'cas', a.caId), repair: identity({ kind: 'authenticator.remove', id }) })
    }
  }
  for (const [id, e] of r.enrollments) {
    if (!r.identities.has(e.identityId)) {
      out.push({ description: missing('enrollments', id, 'identityId', 'identities', e.identityId), repair: identity({ kind: 'enrollment.remove', id }) })
    } else if (e.caId && !r.cas.has(e.caId)) {
      out.push({ description: missing('enrollments', id, 'caId', 'cas', e.caId), repair: identity({ kind: 'enrollment.remove', id }) })
    }
  }
  for (const [identityId, m] of r.mfas) {
    if (!r.identities.has(identityId)) {
      out.push({ description: missing('mfas', m.id, 'identityId', 'identities', identityId), repair: identity({ kind: 'mfa.remove', identityId }) })
    }
  }
  for (const identityId of r['auth-failures'].keys()) {
    if (!r.identities.has(identityId)) {
      out.push({ description: missing('auth-failures', identityId, 'identityId', 'identities', identityId), repair: identity({ kind: 'authFailures.remove', identityId }) })
    }
  }
  // revocations reference nothing on purpose: an IDENTITY revocation outlives its identity (a deleted identity's
  // tokens stay revoked); one of an unknown type revokes nothing and goes
  for (const [id, rv] of r.revocations) {
    if (!(REVOCATION_TYPES as readonly string[]).includes(rv.type)) {
      out.push({ description: `revocations ${id} has the unknown type '${String(rv.type)}': it revokes nothing; removed`, repair: identity({ kind: 'revocation.remove', id }) })
    }
  }
  for (const [id, i] of r.identities) {
    if (!r['auth-policies'].has(i.authPolicyId)) {
      out.push({
        description: `${missing('identities', id, 'authPolicyId', 'auth-policies', i.authPolicyId)}; fixed by the default policy`,
        repair: identity({ kind: 'identity.resetAuthPolicy', id, authPolicyId: i.authPolicyId }),
      })
    }
  }
  for (const [id, p] of r['auth-policies']) {
    const named = new Set([...(p.primary.extJwt.allowedSigners ?? []), ...(p.secondary.requireExtJwtSigner ? [p.secondary.requireExtJwtSigner] : [])])
    for (const signerId of named) {
      if (r['external-jwt-signers'].has(signerId)) continue
      out.push({ description: missing('auth-policies', id, 'signers', 'external-jwt-signers', signerId), repair: identity({ kind: 'authPolicy.dropSigner', id, signerId }) })
    }
  }
}

function checkSessionReferences(r: StoredRecords, out: Finding[]): void {
  const sessions = (repair: SessionRepair): Repair => ({ actor: 'session-registry', repair })
  const apiSessionIds = new Set<string>()
  for (const s of r['api-sessions'].values()) {
    apiSessionIds.add(s.id)
    if (!r.identities.has(s.identityId)) {
      out.push({ description: missing('api-sessions', s.id, 'identityId', 'identities', s.identityId), repair: sessions({ kind: 'apiSessions.removeForIdentity', identityId: s.identityId }) })
    }
  }
  for (const [id, s] of r.sessions) {
    const broken =
      !apiSessionIds.has(s.apiSessionId) ? ['apiSessionId', 'api-sessions', s.apiSessionId]
      : !r.services.has(s.serviceId) ? ['serviceId', 'services', s.serviceId]
      : !r.identities.has(s.identityId) ? ['identityId', 'identities', s.identityId]
      : undefined
    if (broken) out.push({ description: missing('sessions', id, broken[0]!, broken[1]!, broken[2]!), repair: sessions({ kind: 'session.remove', id }) })
  }
  for (const [id, c] of r['api-session-certs']) {
    if (!apiSessionIds.has(c.apiSessionId)) {
      out.push({ description: missing('api-session-certs', id, 'apiSessionId', 'api-sessions', c.apiSessionId), repair: sessions({ kind: 'apiSessionCert.remove', id, apiSessionId: c.apiSessionId }) })
    }
  }
}

function checkGraphReferences(r: StoredRecords, out: Finding[]): void {
  const graph = (repair: GraphRepair): Repair => ({ actor: 'policy-graph', repair })
  const exists = (kind: EntityKind, id: string) => {
    if (kind !== 'router') return r[ENTITY_DBS[kind]].has(id)
    return r.routers.get(id)?.isEdge === true
  }
  for (const [kind, db] of Object.entries(POLICY_DBS) as [PolicyKind, (typeof POLICY_DBS)[PolicyKind]][]) {
    for (const [id, p] of r[db]) {
      for (const [field, entityKind] of ROLE_FIELDS[kind]) {
        const roles = (p as unknown as Record<string, readonly string[] | undefined>)[field] ?? []
        for (const target of splitRoles(roles).ids) {
          if (exists(entityKind, target)) continue
          out.push({
            description: missing(db, id, field, entityKind === 'router' ? 'edge routers' : ENTITY_DBS[entityKind], `@${target}`),
            repair: graph({ kind: 'references.drop', entityKind, id: target }),
          })
        }
      }
    }
  }
  for (const [id, s] of r.services) {
    for (const configId of s.configs) {
      if (!r.configs.has(configId)) out.push({ description: missing('services', id, 'configs', 'configs', configId), repair: graph({ kind: 'service.dropConfig', serviceId: id, configId }) })
    }
  }
  for (const [id, c] of r.configs) {
    if (!r['config-types'].has(c.configTypeId)) out.push({ description: `${missing('configs', id, 'configTypeId', 'config-types', c.configTypeId)}: ${NOT_FIXABLE}` })
  }
  for (const [key, o] of r['service-config-overrides']) {
    const broken =
      !r.identities.has(o.identityId) ? ['identityId', 'identities', o.identityId]
      : !r.services.has(o.serviceId) ? ['serviceId', 'services', o.serviceId]
      : !r.configs.has(o.configId) ? ['configId', 'configs', o.configId]
      : undefined
    if (broken) out.push({ description: missing('service-config-overrides', key, broken[0]!, broken[1]!, broken[2]!), repair: graph({ kind: 'override.drop', key }) })
  }
  for (const [id, t] of r.terminators) {
    const broken = !r.services.has(t.serviceId) ? ['serviceId', 'services', t.serviceId] : !r.routers.has(t.routerId) ? ['routerId', 'routers', t.routerId] : undefined
    if (broken) out.push({ description: missing('terminators', id, broken[0]!, broken[1]!, broken[2]!), repair: graph({ kind: 'terminator.drop', id }) })
  }
  // a router's outstanding enrollment token is looked up with identity enrollment tokens' by the enroll endpoint
  const identityTokens = new Set([...r.enrollments.values()].map((e) => e.token))
  for (const [id, x] of r.routers) {
    if (x.enrollment && identityTokens.has(x.enrollment.token)) out.push({ description: `routers ${id} has an enrollment token an identity enrollment also holds: ${NOT_FIXABLE}` })
  }
}
