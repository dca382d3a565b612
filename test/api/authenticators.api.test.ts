// Management /authenticators and self-service /current-identity/authenticators of method updb (seed "Authenticator").
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

let seq = 0
async function userWithPassword(password = 'first-pass-1'): Promise<{ id: string; authId: string; username: string }> {
  const username = `user-${++seq}`
  const created = await srv.mgmt.post('/identities', { name: username, type: 'User', isAdmin: false })
  expectStatus(created, 201)
  const auth = await srv.mgmt.post('/authenticators', { identityId: created.body.data.id, method: 'updb', username, password })
  expectStatus(auth, 201)
  return { id: created.body.data.id, authId: auth.body.data.id, username }
}

describe('POST /authenticators', () => {
  it('creates a updb authenticator the identity can log in with', async () => {
    const u = await userWithPassword()
    const got = await srv.mgmt.get(`/authenticators/${u.authId}`)
    expectStatus(got, 200)
    expect(got.body.data).toMatchObject({ method: 'updb', username: u.username, identityId: u.id })
    expect(got.body.data.password).toBeUndefined()
    expect(JSON.stringify(got.body)).not.toContain('argon2')
    expect(await srv.login(u.username, 'first-pass-1', 'client')).toBeString()
    const identity = await srv.mgmt.get(`/identities/${u.id}`)
    expect(identity.body.data.authenticators.updb).toEqual({ id: u.authId, username: u.username })
  })

  it('refuses a second updb authenticator for the same identity with 409', async () => {
    const u = await userWithPassword()
    const res = await srv.mgmt.post('/authenticators', { identityId: u.id, method: 'updb', username: `${u.username}-2`, password: 'another-1' })
    expectError(res, 409, 'MAX_AUTHENTICATOR_METHODS_REACHED')
  })

  it('refuses a username already in use', async () => {
    const u = await userWithPassword()
    const other = await srv.mgmt.post('/identities', { name: `other-${seq}`, type: 'User', isAdmin: false })
    const res = await srv.mgmt.post('/authenticators', { identityId: other.body.data.id, method: 'updb', username: u.username, password: 'another-1' })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('username')
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['an unknown identity', { identityId: 'nope', method: 'updb', username: 'someone', password: 'pass-word' }, 'identityId'],
    ['a missing method', { identityId: 'x', username: 'someone', password: 'pass-word' }, 'method'],
    ['an unsupported method', { identityId: 'x', method: 'magic', username: 'someone', password: 'pass-word' }, 'method'],
    ['a missing password', { identityId: 'x', method: 'updb', username: 'someone' }, 'password'],
    ['a short password', { identityId: 'x', method: 'updb', username: 'someone', password: 'abcd' }, 'password'],
    ['a short username', { identityId: 'x', method: 'updb', username: 'abc', password: 'abcde' }, 'username'],
  ]
  for (const [what, body, field] of bad) {
    it(`refuses ${what} with 400 COULD_NOT_VALIDATE on ${field}`, async () => {
      const res = await srv.mgmt.post('/authenticators', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    })
  }
})

describe('PUT, PATCH and DELETE /authenticators/:id', () => {
  it('PUT sets a new username and password', async () => {
    const u = await userWithPassword()
    expectStatus(await srv.mgmt.put(`/authenticators/${u.authId}`, { username: `${u.username}-renamed`, password: 'second-pass-2' }), 200)
    expect(await srv.login(`${u.username}-renamed`, 'second-pass-2')).toBeString()
    expectError(await srv.raw.post('/edge/client/v1/authenticate?method=password', { username: u.username, password: 'first-pass-1' }), 401, 'INVALID_AUTH')
  })

  it('PATCH changes only the password', async () => {
    const u = await userWithPassword()
    expectStatus(await srv.mgmt.patch(`/authenticators/${u.authId}`, { password: 'patched-pass-3' }), 200)
    expect(await srv.login(u.username, 'patched-pass-3')).toBeString()
  })

  it('PUT without a password is 400 COULD_NOT_VALIDATE', async () => {
    const u = await userWithPassword()
    expectError(await srv.mgmt.put(`/authenticators/${u.authId}`, { username: 'whatever' }), 400, 'COULD_NOT_VALIDATE')
  })

  it('DELETE removes the authenticator: login becomes impossible', async () => {
    const u = await userWithPassword()
    expectStatus(await srv.mgmt.del(`/authenticators/${u.authId}`), 200)
    expectError(await srv.mgmt.get(`/authenticators/${u.authId}`), 404, 'NOT_FOUND')
    expectError(await srv.raw.post('/edge/client/v1/authenticate?method=password', { username: u.username, password: 'first-pass-1' }), 401, 'INVALID_AUTH')
  })

  it('lists authenticators with a filter on username', async () => {
    const u = await userWithPassword()
    const res = await srv.mgmt.get(`/authenticators?filter=${encodeURIComponent(`username = "${u.username}"`)}`)
    expectStatus(res, 200)
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([u.authId])
    const byIdentity = await srv.mgmt.get(`/identities/${u.id}/authenticators`)
    expect(byIdentity.body.data.map((a: { id: string }) => a.id)).toEqual([u.authId])
  })
})

describe('/current-identity/authenticators', () => {
  it('lists only the caller\'s own authenticators', async () => {
    const u = await userWithPassword()
    const c = srv.as(await srv.login(u.username, 'first-pass-1', 'client'), 'client')
    const res = await c.get('/current-identity/authenticators')
    expectStatus(res, 200)
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([u.authId])
  })

  it('changes the password when the current password is right', async () => {
    const u = await userWithPassword()
    const c = srv.as(await srv.login(u.username, 'first-pass-1', 'client'), 'client')
    expectStatus(await c.patch(`/current-identity/authenticators/${u.authId}`, { password: 'self-changed-1', currentPassword: 'first-pass-1' }), 200)
    expect(await srv.login(u.username, 'self-changed-1', 'client')).toBeString()
  })

  it('refuses a wrong current password with 401 UNAUTHORIZED and changes nothing', async () => {
    const u = await userWithPassword()
    const c = srv.as(await srv.login(u.username, 'first-pass-1', 'client'), 'client')
    const res = await c.put(`/current-identity/authenticators/${u.authId}`, { username: u.username, password: 'nope-nope-1', currentPassword: 'wrong-pass-1' })
    expectError(res, 401, 'UNAUTHORIZED')
    expect(res.body.error.cause.field).toBe('currentPassword')
    expect(await srv.login(u.username, 'first-pass-1', 'client')).toBeString()
  })

  it('refuses a change without currentPassword with 400 COULD_NOT_VALIDATE', async () => {
    const u = await userWithPassword()
    const c = srv.as(await srv.login(u.username, 'first-pass-1', 'client'), 'client')
    expectError(await c.patch(`/current-identity/authenticators/${u.authId}`, { password: 'abcdefg' }), 400, 'COULD_NOT_VALIDATE')
  })

  it('answers 404 for another identity\'s authenticator', async () => {
    const u = await userWithPassword()
    const adminAuth = (await srv.mgmt.get('/current-identity/authenticators')).body.data[0].id
    const c = srv.as(await srv.login(u.username, 'first-pass-1', 'client'), 'client')
    expectError(await c.get(`/current-identity/authenticators/${adminAuth}`), 404, 'NOT_FOUND')
  })
})
