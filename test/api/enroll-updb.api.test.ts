// Username/password enrollment: identity create with enrollment {updb: "<username>"}, then POST /enroll/updb?token=
// {password} (or the generic POST /enroll?token=, with method=updb or none) sets the password; the username is the
// enrollment's (controller-behaviour.md §6 "POST /enroll/updb"; edge-api client.yml enrollUpdb).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { decodeJwt } from 'jose'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

async function withUpdb(name: string, username: string): Promise<{ id: string; token: string; jwt: string }> {
  const id = await srv.create('/identities', { name, type: 'User', isAdmin: false, enrollment: { updb: username } })
  const updb = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.updb
  return { id, token: updb.token, jwt: updb.jwt }
}

const enrollUpdb = (token: string, body: unknown) => srv.client.post(`/enroll/updb?token=${token}`, body)

describe('updb enrollment', () => {
  it('sets the password for the username fixed at creation; the user then logs in with it', async () => {
    const { id, token, jwt } = await withUpdb('updb-user', 'alice-updb')
    expect(decodeJwt(jwt)).toMatchObject({ sub: id, jti: token, em: 'updb' })
    const res = await enrollUpdb(token, { password: 'alice-pass-1', username: 'ignored-name' })
    expectStatus(res, 200)
    expect(res.body.data).toEqual({ username: 'alice-updb', controllers: [srv.server.advertisedUrl] })
    const login = await srv.raw.post('/edge/client/v1/authenticate?method=password', { username: 'alice-updb', password: 'alice-pass-1' })
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(id)
    const identity = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(identity.enrollment).toEqual({})
    expect(identity.authenticators.updb.username).toBe('alice-updb')
    expectError(await enrollUpdb(token, { password: 'again-pass-1' }), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('takes the generic form POST /enroll?method=updb&token=', async () => {
    const { token } = await withUpdb('updb-generic', 'bob-updb')
    expectStatus(await srv.client.post(`/enroll?method=updb&token=${token}`, { password: 'bob-pass-1' }), 200)
    expectStatus(await srv.raw.post('/edge/client/v1/authenticate?method=password', { username: 'bob-updb', password: 'bob-pass-1' }), 200)
  })

  it('takes the generic form without a method (the token names updb), and the user logs in', async () => {
    const { id, token } = await withUpdb('updb-generic-no-method', 'gina-updb')
    const res = await srv.client.post(`/enroll?token=${token}`, { password: 'gina-pass-1' })
    expectStatus(res, 200)
    expect(res.body.data).toEqual({ username: 'gina-updb', controllers: [srv.server.advertisedUrl] })
    const login = await srv.raw.post('/edge/client/v1/authenticate?method=password', { username: 'gina-updb', password: 'gina-pass-1' })
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(id)
    expectError(await srv.client.post(`/enroll?token=${token}`, { password: 'gina-pass-2' }), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('without a method reads the body as updb does: no password, or a PEM body, is COULD_NOT_VALIDATE on password', async () => {
    const { id, token } = await withUpdb('updb-generic-bad-body', 'hank-updb')
    for (const res of [
      await srv.client.post(`/enroll?token=${token}`, {}),
      await srv.client.post(`/enroll?token=${token}`, { password: 'abcd' }),
      await srv.client('POST', `/enroll?token=${token}`, { rawBody: 'hank-pass-1', headers: { 'content-type': 'text/plain' } }),
    ]) {
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe('password')
    }
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.updb.token).toBe(token)
  })

  it('keeps an explicit method: a updb token under method=ott is INVALID_ENROLLMENT_TOKEN; each token of an identity redeems by its own method', async () => {
    const id = await srv.create('/identities', { name: 'updb-and-ott', type: 'User', isAdmin: false, enrollment: { ott: true, updb: 'ivy-updb' } })
    const { ott, updb } = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment
    expectError(await srv.client.post(`/enroll?method=ott&token=${updb.token}`, { password: 'ivy-pass-1' }), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectError(await srv.client.post(`/enroll?method=updb&token=${ott.token}`, { password: 'ivy-pass-1' }), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectStatus(await srv.client.post(`/enroll?token=${updb.token}`, { password: 'ivy-pass-1' }), 200)
    const after = (await srv.mgmt.get(`/identities/${id}`)).body.data
    expect(Object.keys(after.enrollment)).toEqual(['ott'])
    expect(after.authenticators.updb.username).toBe('ivy-updb')
    expectStatus(await srv.raw.post('/edge/client/v1/authenticate?method=password', { username: 'ivy-updb', password: 'ivy-pass-1' }), 200)
  })

  it('refuses a missing, short or long password with COULD_NOT_VALIDATE on password, keeping the enrollment', async () => {
    const { id, token } = await withUpdb('updb-bad-password', 'carol-updb')
    for (const body of [{}, { password: 'abcd' }, { password: 'x'.repeat(101) }]) {
      const res = await enrollUpdb(token, body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe('password')
    }
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.updb.token).toBe(token)
  })

  it('refuses an ott token on the updb endpoint and an unknown token', async () => {
    const id = await srv.create('/identities', { name: 'updb-ott-token', type: 'User', isAdmin: false, enrollment: { ott: true } })
    const ottToken = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ott.token
    expectError(await enrollUpdb(ottToken, { password: 'some-pass-1' }), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectError(await enrollUpdb(crypto.randomUUID(), { password: 'some-pass-1' }), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('refuses a username an updb authenticator already holds, at creation', async () => {
    const res = await srv.mgmt.post('/identities', { name: 'updb-dup', type: 'User', isAdmin: false, enrollment: { updb: 'admin' } })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('username')
  })

  it('lets exactly one of two enrollments for the same username set it', async () => {
    const a = await withUpdb('updb-race-a', 'dora-updb')
    const b = await withUpdb('updb-race-b', 'dora-updb')
    expectStatus(await enrollUpdb(a.token, { password: 'dora-pass-1' }), 200)
    const second = await enrollUpdb(b.token, { password: 'dora-pass-2' })
    expectError(second, 400, 'COULD_NOT_VALIDATE')
    expect(second.body.error.cause.field).toBe('username')
  })

  it('is also created through POST /enrollments with a username', async () => {
    const id = await srv.create('/identities', { name: 'updb-admin-made', type: 'User', isAdmin: false })
    const expiresAt = new Date(srv.clock.now() + 3_600_000).toISOString()
    expectError(await srv.mgmt.post('/enrollments', { identityId: id, method: 'updb', expiresAt }), 400, 'COULD_NOT_VALIDATE')
    const res = await srv.mgmt.post('/enrollments', { identityId: id, method: 'updb', username: 'erin-updb', expiresAt })
    expectStatus(res, 201)
    const e = (await srv.mgmt.get(`/enrollments/${res.body.data.id}`)).body.data
    expect(e).toMatchObject({ method: 'updb', username: 'erin-updb', expiresAt })
    expectStatus(await enrollUpdb(e.token, { password: 'erin-pass-1' }), 200)
  })
})
