// The spec checker every API answer goes through (test/support/spec-check.ts): it must catch what strict and older
// generated clients reject, and accept what they accept. Issue 9, part 1.
import { describe, expect, it } from 'bun:test'
import { checkAnswer, specPathOf, SpecCheckTally, SpecViolation, type Answer } from '../../support/spec-check.ts'

const JSON_TYPE = 'application/json'

const identity = () => ({
  id: 'XV5etiVScd',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  _links: { self: { href: './identities/XV5etiVScd' } },
  tags: { team: 'red', vip: true, gone: null },
  name: 'alice',
  type: { _links: { self: { href: './identity-types/User' } }, entity: 'identity-types', id: 'User', name: 'User' },
  typeId: 'User',
  isAdmin: false,
  isDefaultAdmin: false,
  isMfaEnabled: false,
  authenticators: {},
  enrollment: {},
  envInfo: {},
  sdkInfo: {},
  roleAttributes: ['sales'],
  hasApiSession: false,
  hasEdgeRouterConnection: false,
  edgeRouterConnectionStatus: 'offline',
  defaultHostingCost: 0,
  defaultHostingPrecedence: 'default',
  serviceHostingCosts: {},
  serviceHostingPrecedences: {},
  authPolicyId: 'default',
  authPolicy: { _links: { self: { href: './auth-policies/default' } }, entity: 'auth-policies', id: 'default', name: 'Default' },
  externalId: null,
  appData: {},
  disabled: false,
  disabledAt: null,
  disabledUntil: null,
  permissions: [],
})

const answer = (method: string, url: string, status: number, body: unknown, contentType: string | null = JSON_TYPE): Answer => ({
  method,
  url,
  status,
  contentType,
  text: typeof body === 'string' ? body : JSON.stringify(body),
})
const getIdentity = (data: Record<string, unknown>) => answer('GET', '/edge/management/v1/identities/XV5etiVScd', 200, { data, meta: {} })

/** The violation message of an answer (fails when the answer passes). */
function violation(a: Answer): string {
  try {
    checkAnswer(a)
  } catch (e) {
    expect(e).toBeInstanceOf(SpecViolation)
    return (e as Error).message
  }
  throw new Error(`expected a spec violation for ${a.method} ${a.url}`)
}

describe('spec check: finding the operation', () => {
  it('maps each listener path to its spec and the path in it (the real controller\'s aliases)', () => {
    expect(specPathOf('/edge/management/v1/identities/x')).toEqual({ spec: 'management', path: '/identities/x' })
    expect(specPathOf('/edge/client/v1')).toEqual({ spec: 'client', path: '/' })
    expect(specPathOf('/edge/v1/services')).toEqual({ spec: 'client', path: '/services' })
    expect(specPathOf('/version')).toEqual({ spec: 'client', path: '/version' })
    expect(specPathOf('/authenticate')).toEqual({ spec: 'client', path: '/authenticate' })
  })

  it('accepts a conforming answer and names the operation it was checked as (the query is ignored)', () => {
    expect(checkAnswer({ ...getIdentity(identity()), url: '/edge/management/v1/identities/XV5etiVScd?x=1' })).toEqual({
      kind: 'checked',
      operation: 'management GET /identities/{id} → 200',
    })
  })

  it('prefers a literal path segment over a template', () => {
    const res = checkAnswer(answer('GET', '/edge/management/v1/identities/XV5etiVScd/authenticators', 200, { data: [], meta: { pagination: { limit: 10, offset: 0, totalCount: 0 } } }))
    expect(res).toEqual({ kind: 'checked', operation: 'management GET /identities/{id}/authenticators → 200' })
  })

  it('fails an operation the spec does not have, naming it', () => {
    const msg = violation(answer('PUT', '/edge/management/v1/identities', 405, { error: { code: 'METHOD_NOT_ALLOWED' }, meta: {} }))
    expect(msg).toContain('no such operation (PUT /identities)')
    expect(msg).toContain('EDGEPLANE_EXTENSIONS')
  })

  it('fails a success status the operation does not document, and checks an undocumented error status as apiErrorEnvelope', () => {
    expect(violation(answer('GET', '/edge/management/v1/identities/x', 201, { data: {}, meta: {} }))).toContain('documents no 201 answer')
    expect(checkAnswer(answer('GET', '/edge/management/v1/identities/x', 400, { error: { code: 'X', message: 'm', requestId: 'r' }, meta: {} })).kind).toBe('checked')
    expect(violation(answer('GET', '/edge/management/v1/identities/x', 400, { error: { code: 1 }, meta: {} }))).toContain('/error/code')
  })

  it('skips answers that are not JSON, and fails JSON that does not parse', () => {
    expect(checkAnswer(answer('GET', '/.well-known/est/cacerts', 200, 'MIIB...', 'application/pkcs7-mime')).kind).toBe('skipped')
    expect(checkAnswer(answer('DELETE', '/edge/management/v1/identities/x', 204, '')).kind).toBe('skipped')
    expect(violation(answer('GET', '/edge/client/v1/version', 200, '{"data":', JSON_TYPE))).toContain('does not parse')
  })
})

describe('spec check: shapes', () => {
  it('names the path of the bad field, the operation and the body', () => {
    const msg = violation(getIdentity({ ...identity(), isAdmin: 'no' }))
    expect(msg).toContain('management GET /identities/{id} → 200')
    expect(msg).toContain('at /data/isAdmin: must be boolean, got "no"')
    expect(msg).toContain('body: {"data":')
  })

  it('fails a missing required property and an enum value the spec does not list', () => {
    const { name: _name, ...noName } = identity()
    expect(violation(getIdentity(noName))).toContain("must have required property 'name'")
    const caps = answer('GET', '/edge/client/v1/enumerated-capabilities', 200, { data: ['OIDC_AUTH', 'OIDC_AUTH_WITH_CSR'], meta: {} })
    expect(violation(caps)).toContain('at /data/1: must be equal to one of the allowed values')
  })

  it('checks date-time formats strictly', () => {
    expect(violation(getIdentity({ ...identity(), createdAt: '2026-01-01 00:00' }))).toContain('at /data/createdAt: must match format "date-time"')
  })

  it('admits null where the spec says x-nullable, and nowhere else', () => {
    expect(checkAnswer(getIdentity({ ...identity(), externalId: null, disabledAt: null })).kind).toBe('checked')
    expect(violation(getIdentity({ ...identity(), name: null }))).toContain('at /data/name: must be string')
  })

  it('never admits a null map, although the current spec marks tags and appData nullable (older clients reject it)', () => {
    expect(violation(getIdentity({ ...identity(), appData: null }))).toContain('at /data/appData: must be object, got null')
    expect(violation(getIdentity({ ...identity(), tags: null }))).toContain('at /data/tags: must be object, got null')
  })

  it('requires id, createdAt, updatedAt and _links on every stored resource', () => {
    for (const field of ['id', 'createdAt', 'updatedAt', '_links']) {
      const body = identity() as Record<string, unknown>
      delete body[field]
      expect(violation(getIdentity(body))).toContain(`must have required property '${field}'`)
    }
  })

  it('ignores required names the spec never declares (apiSessionDetail\'s cachedUpdatedAt), as generated clients do', () => {
    const session = {
      id: 's1', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', _links: {}, tags: {},
      token: '', identity: { _links: {}, entity: 'identities', id: 'i', name: 'n' }, identityId: 'i', configTypes: [], ipAddress: '127.0.0.1',
      authQueries: [], isMfaRequired: false, isMfaComplete: false, authenticatorId: 'a', isCertExtendable: false,
    }
    expect(checkAnswer(answer('GET', '/edge/management/v1/api-sessions/s1', 200, { data: session, meta: {} })).kind).toBe('checked')
    const { token: _token, ...noToken } = session
    expect(violation(answer('GET', '/edge/management/v1/api-sessions/s1', 200, { data: noToken, meta: {} }))).toContain("must have required property 'token'")
  })

  it('reads a bare `type: object` as any value (go-swagger\'s interface{}): tag values, config data', () => {
    expect(checkAnswer(getIdentity({ ...identity(), tags: { a: 'x', b: true, c: null } })).kind).toBe('checked')
  })
})

describe('spec check: the offSpec escape', () => {
  it('counts every use by reason in the summary printed at the end of the run', () => {
    const tally = new SpecCheckTally()
    expect(tally.summary()).toBe('')
    tally.recordChecked()
    tally.recordOffSpec('deliberately wrong')
    tally.recordOffSpec('deliberately wrong')
    tally.recordOffSpec('another reason')
    expect(tally.summary().split('\n')).toEqual([
      'spec check: 1 answers checked against the official spec; 3 off-spec by request (2 reasons)',
      '  2 × deliberately wrong',
      '  1 × another reason',
    ])
  })
})
