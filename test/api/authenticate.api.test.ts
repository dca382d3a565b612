// POST /authenticate?method=password and the current API session, on both APIs (edge-api client.yml, management.yml).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { CurrentApiSessionDetail } from '../../schemas/api-session.ts'
import { ADMIN, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const auth = (api: string, body: unknown) => srv.raw.post(`/edge/${api}/v1/authenticate?method=password`, body)

describe('POST /authenticate?method=password', () => {
  for (const api of ['client', 'management']) {
    it(`answers an API session with a token on the ${api} API`, async () => {
      const res = await auth(api, { username: ADMIN.username, password: ADMIN.password })
      expectStatus(res, 200)
      const d = res.body.data
      expect([...Value.Errors(CurrentApiSessionDetail, d)]).toEqual([])
      expect(typeof d.token).toBe('string')
      expect(d.token).toMatch(/^[0-9a-f-]{36}$/)
      expect(res.headers.get('zt-session')).toBe(d.token)
      expect(d.identity.name).toBe('Default Admin')
      expect(d.identity.entity).toBe('identities')
      expect(d.isMfaRequired).toBe(false)
      expect(d.isMfaComplete).toBe(false)
      expect(d.authQueries).toEqual([])
      expect(d.expirationSeconds).toBe(1800)
      expect(Date.parse(d.expiresAt) - Date.parse(d.lastActivityAt)).toBe(1800_000)
      expect(res.body.meta).toEqual({})
    })
  }

  it('refuses a wrong password with 401 INVALID_AUTH', async () => {
    expectError(await auth('client', { username: ADMIN.username, password: 'wrong-password' }), 401, 'INVALID_AUTH')
  })

  it('refuses an unknown user with the same 401 INVALID_AUTH', async () => {
    expectError(await auth('client', { username: 'nobody-here', password: 'whatever1' }), 401, 'INVALID_AUTH')
  })

  it('refuses a missing password with 400 COULD_NOT_VALIDATE', async () => {
    expectError(await auth('client', { username: ADMIN.username }), 400, 'COULD_NOT_VALIDATE')
  })

  it('refuses an empty body with 400 COULD_NOT_VALIDATE', async () => {
    expectError(await srv.raw.post('/edge/client/v1/authenticate?method=password'), 400, 'COULD_NOT_VALIDATE')
  })

  it('refuses a too short username with 400 COULD_NOT_VALIDATE naming the field', async () => {
    const res = await auth('client', { username: 'abc', password: 'long-enough' })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('username')
  })

  it('refuses a too long password with 400 COULD_NOT_VALIDATE', async () => {
    const res = await auth('client', { username: ADMIN.username, password: 'x'.repeat(101) })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('password')
  })

  it('refuses an unknown method with 400 COULD_NOT_VALIDATE', async () => {
    const res = await srv.raw.post('/edge/client/v1/authenticate?method=magic', { username: ADMIN.username, password: ADMIN.password })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('method')
  })

  it('refuses a missing method with 400 COULD_NOT_VALIDATE', async () => {
    expectError(await srv.raw.post('/edge/client/v1/authenticate', { username: ADMIN.username, password: ADMIN.password }), 400, 'COULD_NOT_VALIDATE')
  })

  it('answers ext-jwt without a bearer token with 401 UNAUTHORIZED and the primary ext-jwt challenge', async () => {
    const res = await srv.raw.post('/edge/client/v1/authenticate?method=ext-jwt', {})
    expectError(res, 401, 'UNAUTHORIZED')
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer realm="openziti-primary-ext-jwt" error="missing"')
  })

  it('refuses a wrong type in the body with 400 COULD_NOT_VALIDATE', async () => {
    const res = await auth('client', { username: ADMIN.username, password: 12345 })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('password')
  })

  it('records envInfo and sdkInfo on the identity', async () => {
    const res = await auth('client', {
      username: ADMIN.username,
      password: ADMIN.password,
      envInfo: { os: 'linux', arch: 'amd64' },
      sdkInfo: { type: 'edgeplane-test', version: '1.2.3' },
    })
    expectStatus(res, 200)
    const me = await srv.as(res.body.data.token, 'client').get('/current-identity')
    expect(me.body.data.envInfo).toEqual({ os: 'linux', arch: 'amd64' })
    expect(me.body.data.sdkInfo).toEqual({ type: 'edgeplane-test', version: '1.2.3' })
  })
})

describe('current API session', () => {
  it('GET /current-api-session shows the caller\'s session with the token it presented (apiSessionDetail requires it)', async () => {
    const token = await srv.login(ADMIN.username, ADMIN.password, 'client')
    const res = await srv.as(token, 'client').get('/current-api-session')
    expectStatus(res, 200)
    expect(res.body.data.token).toBe(token)
    expect(res.body.data.expirationSeconds).toBe(1800)
    expect(res.headers.get('expiration-seconds')).toBe('1800')
  })

  it('DELETE /current-api-session logs out: the token stops working', async () => {
    const token = await srv.login(ADMIN.username, ADMIN.password, 'client')
    const c = srv.as(token, 'client')
    expectStatus(await c.del('/current-api-session'), 200)
    expectError(await c.get('/current-identity'), 401, 'UNAUTHORIZED')
  })

  it('answers 401 UNAUTHORIZED with WWW-Authenticate when no token is sent', async () => {
    const res = await srv.client.get('/current-api-session')
    expectError(res, 401, 'UNAUTHORIZED')
    expect(res.headers.get('www-authenticate')).toContain('error="missing"')
  })

  it('answers 401 UNAUTHORIZED for an unknown token', async () => {
    const res = await srv.as('00000000-0000-4000-8000-000000000000', 'client').get('/current-api-session')
    expectError(res, 401, 'UNAUTHORIZED')
    expect(res.headers.get('www-authenticate')).toContain('error="invalid"')
  })

  it('times a session out after 30 minutes without activity', async () => {
    const token = await srv.login(ADMIN.username, ADMIN.password, 'client')
    const c = srv.as(token, 'client')
    srv.clock.advance(29 * 60_000)
    expectStatus(await c.get('/current-identity'), 200)
    // that request counted as activity: 29 more minutes are fine too
    srv.clock.advance(29 * 60_000)
    expectStatus(await c.get('/current-identity'), 200)
    srv.clock.advance(30 * 60_000 + 1)
    expectError(await c.get('/current-identity'), 401, 'UNAUTHORIZED')
  })
})
