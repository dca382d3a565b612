// The integrity checks over stored records (flows/integrity/integrity-checks.ts), one kind of damage at a time, each
// with the repair it carries (or none when it cannot be fixed); the API test (data-integrity.api.test.ts) runs the
// same checks and their repairs end to end.
import { describe, expect, it } from 'bun:test'
import { checkStoredRecords } from '../../../src/flows/integrity/integrity-checks.ts'
import { SUB_DBS } from '../../../src/store/store-catalogue.ts'
import type { StoredRecords } from '../../../src/domain/integrity/integrity-records.ts'

/** Records of a small healthy database: an identity with a password, a CA, a signer, a service, a router, a policy. */
function healthy(): StoredRecords {
  const r = Object.fromEntries(Object.keys(SUB_DBS).map((k) => [k, new Map()])) as unknown as Record<string, Map<string, unknown>>
  r.identities!.set('i1', { id: 'i1', name: 'alice', externalId: null, authPolicyId: 'default', roleAttributes: ['staff'], updatedAt: 1 })
  r['auth-policies']!.set('default', { id: 'default', name: 'Default', primary: { extJwt: { allowed: true, allowedSigners: null } }, secondary: { requireTotp: false, requireExtJwtSigner: null } })
  r.authenticators!.set('a1', { id: 'a1', identityId: 'i1', method: 'updb', username: 'alice', updatedAt: 1 })
  r.cas!.set('ca1', { id: 'ca1', name: 'ca', fingerprint: 'ff' })
  r['external-jwt-signers']!.set('sg1', { id: 'sg1', name: 'signer', kid: 'k1', issuer: 'https://issuer' })
  r['config-types']!.set('ct1', { id: 'ct1', name: 'type' })
  r.configs!.set('c1', { id: 'c1', name: 'cfg', configTypeId: 'ct1' })
  r.services!.set('s1', { id: 's1', name: 'svc', configs: ['c1'], roleAttributes: [] })
  r.routers!.set('r1', { id: 'r1', name: 'router', isEdge: true, fingerprint: null, enrollment: null })
  r['posture-checks']!.set('pc1', { id: 'pc1', name: 'check' })
  r['service-policies']!.set('sp1', { id: 'sp1', name: 'sp', identityRoles: ['@i1'], serviceRoles: ['@s1'], postureCheckRoles: ['@pc1'] })
  r['edge-router-policies']!.set('erp1', { id: 'erp1', name: 'erp', identityRoles: ['#all'], edgeRouterRoles: ['@r1'] })
  r['api-sessions']!.set('hash1', { id: 'as1', tokenHash: 'hash1', identityId: 'i1' })
  r.sessions!.set('ss1', { id: 'ss1', apiSessionId: 'as1', identityId: 'i1', serviceId: 's1' })
  r['api-session-certs']!.set('asc1', { id: 'asc1', apiSessionId: 'as1', fingerprint: 'aa' })
  r.terminators!.set('t1', { id: 't1', serviceId: 's1', routerId: 'r1' })
  // a deleted identity's revocation: it names no record that exists, and that is not a finding
  r.revocations!.set('gone-identity', { id: 'gone-identity', type: 'IDENTITY', createdAt: 1, updatedAt: 1, expiresAt: 2, tags: {} })
  return r as unknown as StoredRecords
}

const found = (r: StoredRecords) => checkStoredRecords(r).map((f) => ({ description: f.description, repair: f.repair ?? null }))

describe('integrity checks over stored records', () => {
  it('find nothing in a healthy database', () => {
    expect(found(healthy())).toEqual([])
  })

  const cases: [string, (r: Record<string, Map<string, any>>) => void, string, unknown][] = [
    ['an authenticator of a third-party CA that is gone', (r) => r.authenticators!.set('a2', { id: 'a2', identityId: 'i1', method: 'cert', fingerprint: 'f2', caId: 'gone' }),
      'authenticators a2 references cas gone (caId), which doesn\'t exist', { actor: 'identity', repair: { kind: 'authenticator.remove', id: 'a2' } }],
    ['an ottca enrollment of a CA that is gone', (r) => r.enrollments!.set('e1', { id: 'e1', identityId: 'i1', token: 't', caId: 'gone' }),
      'enrollments e1 references cas gone (caId), which doesn\'t exist', { actor: 'identity', repair: { kind: 'enrollment.remove', id: 'e1' } }],
    ['an auth policy naming a signer that is gone', (r) => r['auth-policies']!.set('ap', { id: 'ap', name: 'ap', primary: { extJwt: { allowed: true, allowedSigners: ['sg1', 'gone'] } }, secondary: { requireTotp: false, requireExtJwtSigner: 'gone' } }),
      'auth-policies ap references external-jwt-signers gone (signers), which doesn\'t exist', { actor: 'identity', repair: { kind: 'authPolicy.dropSigner', id: 'ap', signerId: 'gone' } }],
    ['a service session of an API session that is gone', (r) => r.sessions!.set('ss1', { id: 'ss1', apiSessionId: 'gone-session', identityId: 'i1', serviceId: 's1' }),
      'sessions ss1 references api-sessions gone-session (apiSessionId), which doesn\'t exist', { actor: 'session-registry', repair: { kind: 'session.remove', id: 'ss1' } }],
    ['a service session of a service that is gone', (r) => r.sessions!.set('ss2', { id: 'ss2', apiSessionId: 'as1', identityId: 'i1', serviceId: 'gone' }),
      'sessions ss2 references services gone (serviceId), which doesn\'t exist', { actor: 'session-registry', repair: { kind: 'session.remove', id: 'ss2' } }],
    ['an API session certificate of an API session that is gone', (r) => r['api-session-certs']!.set('asc2', { id: 'asc2', apiSessionId: 'gone', fingerprint: 'bb' }),
      'api-session-certs asc2 references api-sessions gone (apiSessionId), which doesn\'t exist', { actor: 'session-registry', repair: { kind: 'apiSessionCert.remove', id: 'asc2', apiSessionId: 'gone' } }],
    ['an edge router policy naming a fabric-only router', (r) => r.routers!.set('r1', { id: 'r1', name: 'router', isEdge: false, fingerprint: null, enrollment: null }),
      'edge-router-policies erp1 references edge routers @r1 (edgeRouterRoles), which doesn\'t exist', { actor: 'policy-graph', repair: { kind: 'references.drop', entityKind: 'router', id: 'r1' } }],
    ['a service policy naming a posture check that is gone', (r) => r['posture-checks']!.clear(),
      'service-policies sp1 references posture-checks @pc1 (postureCheckRoles), which doesn\'t exist', { actor: 'policy-graph', repair: { kind: 'references.drop', entityKind: 'posture-check', id: 'pc1' } }],
    ['a terminator of a router that is gone', (r) => r.terminators!.set('t2', { id: 't2', serviceId: 's1', routerId: 'gone' }),
      'terminators t2 references routers gone (routerId), which doesn\'t exist', { actor: 'policy-graph', repair: { kind: 'terminator.drop', id: 't2' } }],
    ['a config of a config type that is gone', (r) => r['config-types']!.clear(),
      'configs c1 references config-types ct1 (configTypeId), which doesn\'t exist: unable to fix automatically', null],
    ['two signers with one kid', (r) => r['external-jwt-signers']!.set('sg2', { id: 'sg2', name: 'signer2', kid: 'k1', issuer: 'https://other' }),
      'external-jwt-signers sg1, sg2 share the kid \'k1\', which must be unique: unable to fix automatically', null],
    ['two signers with one issuer', (r) => r['external-jwt-signers']!.set('sg2', { id: 'sg2', name: 'signer2', kid: null, issuer: 'https://issuer' }),
      'external-jwt-signers sg1, sg2 share the issuer \'https://issuer\', which must be unique: unable to fix automatically', null],
    ['two updb authenticators with one username', (r) => r.authenticators!.set('a3', { id: 'a3', identityId: 'i1', method: 'updb', username: 'alice' }),
      'authenticators a1, a3 share the username \'alice\', which must be unique: unable to fix automatically', null],
    ['two routers with one certificate fingerprint', (r) => {
      r.routers!.set('r1', { id: 'r1', name: 'router', isEdge: true, fingerprint: 'ab', enrollment: null })
      r.routers!.set('r2', { id: 'r2', name: 'router2', isEdge: true, fingerprint: 'ab', enrollment: null })
    }, 'routers r1, r2 share the certificate fingerprint \'ab\', which must be unique: unable to fix automatically', null],
    ['a router enrollment token an identity enrollment holds', (r) => {
      r.enrollments!.set('e2', { id: 'e2', identityId: 'i1', token: 'tok', caId: null })
      r.routers!.set('r1', { id: 'r1', name: 'router', isEdge: true, fingerprint: null, enrollment: { token: 'tok' } })
    }, 'routers r1 has an enrollment token an identity enrollment also holds: unable to fix automatically', null],
    ['a revocation of an unknown type', (r) => r.revocations!.set('rv1', { id: 'rv1', type: 'TOKEN', createdAt: 1, updatedAt: 1, expiresAt: 2, tags: {} }),
      'revocations rv1 has the unknown type \'TOKEN\': it revokes nothing; removed', { actor: 'identity', repair: { kind: 'revocation.remove', id: 'rv1' } }],
  ]
  for (const [what, damage, description, repair] of cases) {
    it(`case=${what}`, () => {
      const r = healthy()
      damage(r as unknown as Record<string, Map<string, any>>)
      expect(found(r) as unknown[]).toEqual([{ description, repair }])
    })
  }
})
