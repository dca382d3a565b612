// Authentication policies as a Management API resource (seed "Authentication policy"; edge-api management.yml
// /auth-policies; controller-behaviour.md §4 "Authentication policies"): the default policy from the first start,
// CRUD with every field, normalisation, references from identities and to external JWT signers.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { authPolicyBody, createPasswordUser, DEFAULT_POLICY_WIRE } from '../support/auth-policy.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const DEFAULT_RULES = DEFAULT_POLICY_WIRE
const body = authPolicyBody

const get = async (id: string) => {
  const res = await srv.mgmt.get(`/auth-policies/${id}`)
  expectStatus(res, 200)
  return res.body.data
}

describe('the default auth policy', () => {
  it('exists from the first start with the real controller values', async () => {
    expect(await get('default')).toMatchObject({ id: 'default', name: 'Default', tags: {}, ...DEFAULT_RULES })
  })

  it('is what a new identity names, shown by its real name', async () => {
    const id = await srv.create('/identities', { name: 'policy-default-user', type: 'User', isAdmin: false })
    const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(identity.authPolicyId).toBe('default')
    expect(identity.authPolicy).toMatchObject({ id: 'default', name: 'Default', entity: 'auth-policies' })
  })

  it('can not be deleted while identities name it: 409 CAN_NOT_DELETE_REFERENCED_ENTITY', async () => {
    const res = await srv.mgmt.del('/auth-policies/default')
    expectError(res, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY')
    expect(res.body.error.cause.reason).toContain('entity type authPolicies referenced by identities')
  })

  it('can be changed, like any policy', async () => {
    expectStatus(await srv.mgmt.patch('/auth-policies/default', { tags: { note: 'site-wide' } }), 200)
    expect((await get('default')).tags).toEqual({ note: 'site-wide' })
    expectStatus(await srv.mgmt.patch('/auth-policies/default', { tags: {} }), 200)
  })
})

describe('POST /auth-policies', () => {
  it('creates a policy with every field and answers it on get and in the list', async () => {
    const rules = {
      name: 'strict',
      primary: {
        cert: { allowed: false, allowExpiredCerts: false },
        extJwt: { allowed: false, allowedSigners: [] },
        updb: { allowed: true, minPasswordLength: 12, requireSpecialChar: true, requireNumberChar: true, requireMixedCase: true, maxAttempts: 3, lockoutDurationMinutes: 15 },
      },
      secondary: { requireTotp: true, requireExtJwtSigner: null },
      tags: { team: 'sec' },
    }
    const id = await srv.create('/auth-policies', rules)
    expect(await get(id)).toMatchObject({ id, ...rules })
    const list = await srv.mgmt.get(`/auth-policies?filter=${encodeURIComponent('name="strict"')}`)
    expectStatus(list, 200)
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([id])
    expect(list.body.meta.pagination.totalCount).toBe(1)
  })

  it('stores negative attempts and durations as 0 and a minimum password length below 5 as 5, as the real controller', async () => {
    const id = await srv.create('/auth-policies', body('normalised', { maxAttempts: -3, lockoutDurationMinutes: -1, minPasswordLength: 2 }))
    expect((await get(id)).primary.updb).toMatchObject({ maxAttempts: 0, lockoutDurationMinutes: 0, minPasswordLength: 5 })
  })

  it('refuses a minimum password length above 100 (no password could satisfy it) and stores nothing', async () => {
    const res = await srv.mgmt.post('/auth-policies', body('impossible', { minPasswordLength: 101 }))
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('primary.updb.minPasswordLength')
    const list = await srv.mgmt.get(`/auth-policies?filter=${encodeURIComponent('name="impossible"')}`)
    expect(list.body.data).toEqual([])
  })

  it('refuses a duplicate name with 400 COULD_NOT_VALIDATE on name', async () => {
    await srv.create('/auth-policies', body('twice'))
    const res = await srv.mgmt.post('/auth-policies', body('twice'))
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
  })

  const missing: [string, Record<string, unknown>][] = [
    ['name', { primary: DEFAULT_RULES.primary, secondary: { requireTotp: false } }],
    ['primary', { name: 'no-primary', secondary: { requireTotp: false } }],
    ['secondary', { name: 'no-secondary', primary: DEFAULT_RULES.primary }],
    ['primary.updb', { name: 'no-updb', primary: { cert: DEFAULT_RULES.primary.cert, extJwt: DEFAULT_RULES.primary.extJwt }, secondary: { requireTotp: false } }],
  ]
  for (const [field, b] of missing) {
    it(`refuses a body without ${field} with 400 COULD_NOT_VALIDATE`, async () => {
      expectError(await srv.mgmt.post('/auth-policies', b), 400, 'COULD_NOT_VALIDATE')
    })
  }

  it('refuses signers that do not exist, naming the field', async () => {
    const allowed = await srv.mgmt.post('/auth-policies', body('signers', {}, { primary: { ...DEFAULT_RULES.primary, extJwt: { allowed: true, allowedSigners: ['no-such-signer'] } } }))
    expectError(allowed, 400, 'COULD_NOT_VALIDATE')
    expect(allowed.body.error.cause.field).toBe('primary.extJwt.allowedSigners')
    const required = await srv.mgmt.post('/auth-policies', body('secondary-signer', {}, { secondary: { requireTotp: false, requireExtJwtSigner: 'no-such-signer' } }))
    expectError(required, 400, 'COULD_NOT_VALIDATE')
    expect(required.body.error.cause.field).toBe('secondary.requireExtJwtSigner')
  })

  it('is for admins only: 401 UNAUTHORIZED without a session and for a non-admin', async () => {
    expectError(await srv.raw.post('/edge/management/v1/auth-policies', body('anonymous')), 401, 'UNAUTHORIZED')
    await createPasswordUser(srv, 'not-an-admin', 'plain-pass')
    const user = srv.as(await srv.login('not-an-admin', 'plain-pass'), 'management')
    expectError(await user.post('/auth-policies', body('by-a-user')), 401, 'UNAUTHORIZED')
    expectError(await user.get('/auth-policies'), 401, 'UNAUTHORIZED')
  })
})

describe('PUT and PATCH /auth-policies/:id', () => {
  it('put replaces every field; a put without tags clears them', async () => {
    const id = await srv.create('/auth-policies', body('put-me', { maxAttempts: 5 }, { tags: { a: 'b' } }))
    expectStatus(await srv.mgmt.put(`/auth-policies/${id}`, body('put-done', { requireNumberChar: true })), 200)
    const p = await get(id)
    expect(p).toMatchObject({ name: 'put-done', tags: {} })
    expect(p.primary.updb).toMatchObject({ maxAttempts: 0, requireNumberChar: true })
  })

  it('patch changes only the members given, at every level; a null leaves a member as it is', async () => {
    const id = await srv.create('/auth-policies', body('patch-me', { maxAttempts: 4, lockoutDurationMinutes: 10 }, { tags: { keep: 'me' } }))
    const res = await srv.mgmt.patch(`/auth-policies/${id}`, { name: null, primary: { updb: { maxAttempts: 7, lockoutDurationMinutes: null }, cert: null }, secondary: { requireTotp: true } })
    expectStatus(res, 200)
    const p = await get(id)
    expect(p.name).toBe('patch-me')
    expect(p.tags).toEqual({ keep: 'me' })
    expect(p.primary.updb).toMatchObject({ maxAttempts: 7, lockoutDurationMinutes: 10, minPasswordLength: 5 })
    expect(p.primary.cert).toEqual(DEFAULT_RULES.primary.cert)
    expect(p.secondary).toEqual({ requireTotp: true, requireExtJwtSigner: null })
  })

  it('patch normalises too, and refuses what create refuses without changing anything', async () => {
    const id = await srv.create('/auth-policies', body('patch-bounds', { minPasswordLength: 8 }))
    expectStatus(await srv.mgmt.patch(`/auth-policies/${id}`, { primary: { updb: { maxAttempts: -1 } } }), 200)
    expect((await get(id)).primary.updb.maxAttempts).toBe(0)
    expectError(await srv.mgmt.patch(`/auth-policies/${id}`, { primary: { updb: { minPasswordLength: 500 } } }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.patch(`/auth-policies/${id}`, { name: 'Default' }), 400, 'COULD_NOT_VALIDATE')
    expect(await get(id)).toMatchObject({ name: 'patch-bounds', primary: { updb: { minPasswordLength: 8 } } })
  })

  it('an unknown policy is 404 NOT_FOUND', async () => {
    expectError(await srv.mgmt.patch('/auth-policies/nope', { name: 'x' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.put('/auth-policies/nope', body('x')), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get('/auth-policies/nope'), 404, 'NOT_FOUND')
  })
})

describe('identities and their auth policy', () => {
  it('authPolicyId must name an existing policy on create, put and patch', async () => {
    const create = await srv.mgmt.post('/identities', { name: 'bad-policy', type: 'User', isAdmin: false, authPolicyId: 'nope' })
    expectError(create, 400, 'COULD_NOT_VALIDATE')
    expect(create.body.error.cause.field).toBe('authPolicyId')
    const id = await srv.create('/identities', { name: 'policy-user', type: 'User', isAdmin: false })
    expectError(await srv.mgmt.patch(`/identities/${id}`, { authPolicyId: 'nope' }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.put(`/identities/${id}`, { name: 'policy-user', type: 'User', isAdmin: false, authPolicyId: 'nope' }), 400, 'COULD_NOT_VALIDATE')
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.authPolicyId).toBe('default')
  })

  it('an identity names a policy by id and shows its current name; the policy can not be deleted until it is released', async () => {
    const policyId = await srv.create('/auth-policies', body('named-by-one'))
    const id = await srv.create('/identities', { name: 'policy-holder', type: 'User', isAdmin: false, authPolicyId: policyId })
    expectStatus(await srv.mgmt.patch(`/auth-policies/${policyId}`, { name: 'renamed-policy' }), 200)
    const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(identity.authPolicy).toMatchObject({ id: policyId, name: 'renamed-policy' })
    const listed = await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`authPolicyId="${policyId}"`)}`)
    expect(listed.body.data.map((i: { id: string }) => i.id)).toEqual([id])

    const refused = await srv.mgmt.del(`/auth-policies/${policyId}`)
    expectError(refused, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY')
    expect(refused.body.error.cause.value).toEqual([id])
    // a put without authPolicyId goes back to the default policy
    expectStatus(await srv.mgmt.put(`/identities/${id}`, { name: 'policy-holder', type: 'User', isAdmin: false }), 200)
    expectStatus(await srv.mgmt.del(`/auth-policies/${policyId}`), 200)
    expectError(await srv.mgmt.get(`/auth-policies/${policyId}`), 404, 'NOT_FOUND')
  })
})

describe('persistence', () => {
  it('keeps policies and identities naming them across a restart, with the default policy', async () => {
    const policyId = await srv.create('/auth-policies', body('durable', { maxAttempts: 9 }))
    const id = await srv.create('/identities', { name: 'durable-holder', type: 'User', isAdmin: false, authPolicyId: policyId })
    await srv.restart()
    expect((await get(policyId)).primary.updb.maxAttempts).toBe(9)
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.authPolicy.name).toBe('durable')
    expect((await get('default')).name).toBe('Default')
  })
})
