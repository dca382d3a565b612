// Management /api-sessions: list, get, delete (admin only) (seed "API session"). Only a token's hash is stored: the
// caller's own session shows the token it presented, every other one "" (README differences).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { ApiSessionDetail } from '../../schemas/api-session.ts'
import { ADMIN, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
let userId: string
beforeAll(async () => {
  srv = await startTestServer()
  const created = await srv.mgmt.post('/identities', { name: 'session-user', type: 'User', isAdmin: false })
  userId = created.body.data.id
  await srv.mgmt.post('/authenticators', { identityId: userId, method: 'updb', username: 'session-user', password: 'pass-word-1' })
})
afterAll(async () => {
  await srv.stop()
})

describe('/api-sessions', () => {
  it('lists sessions with their identity; another session\'s token is "" and never its hash', async () => {
    const token = await srv.login('session-user', 'pass-word-1', 'client')
    const res = await srv.mgmt.get(`/api-sessions?filter=${encodeURIComponent(`identityId = "${userId}"`)}`)
    expectStatus(res, 200)
    expect(res.body.data.length).toBe(1)
    const s = res.body.data[0]
    expect(Value.Check(ApiSessionDetail, s)).toBe(true)
    expect(s.identity.name).toBe('session-user')
    expect(s.token).toBe('')
    expect(res.text).not.toContain(token)
    expect(res.text).not.toContain('tokenHash')
  })

  it('shows the caller its own token: in its row of the list, its detail and /current-api-session', async () => {
    const token = await srv.login(ADMIN.username, ADMIN.password)
    const admin = srv.as(token, 'management')
    const own = await admin.get('/current-api-session')
    expectStatus(own, 200)
    expect(own.body.data.token).toBe(token)
    const rows = (await admin.get('/api-sessions?limit=-1')).body.data as { id: string; token: string }[]
    expect(rows.find((r) => r.id === own.body.data.id)?.token).toBe(token)
    expect(rows.filter((r) => r.id !== own.body.data.id).every((r) => r.token === '')).toBe(true)
    expect((await admin.get(`/api-sessions/${own.body.data.id}`)).body.data.token).toBe(token)
    expect((await srv.mgmt.get(`/api-sessions/${own.body.data.id}`)).body.data.token).toBe('')
  })

  it('gets one session by id and 404 for an unknown id', async () => {
    const token = await srv.login('session-user', 'pass-word-1', 'client')
    const id = (await srv.as(token, 'client').get('/current-api-session')).body.data.id
    const res = await srv.mgmt.get(`/api-sessions/${id}`)
    expectStatus(res, 200)
    expect(res.body.data.identityId).toBe(userId)
    expectError(await srv.mgmt.get('/api-sessions/nope'), 404, 'NOT_FOUND')
  })

  it('deleting a session logs its holder out', async () => {
    const token = await srv.login('session-user', 'pass-word-1', 'client')
    const c = srv.as(token, 'client')
    const id = (await c.get('/current-api-session')).body.data.id
    expectStatus(await srv.mgmt.del(`/api-sessions/${id}`), 200)
    expectError(await c.get('/current-identity'), 401, 'UNAUTHORIZED')
    expectError(await srv.mgmt.del(`/api-sessions/${id}`), 404, 'NOT_FOUND')
  })

  it('shows hasApiSession on the identity while it has one', async () => {
    const token = await srv.login('session-user', 'pass-word-1', 'client')
    expect((await srv.mgmt.get(`/identities/${userId}`)).body.data.hasApiSession).toBe(true)
    await srv.as(token, 'client').del('/current-api-session')
    const rest = await srv.mgmt.get(`/api-sessions?filter=${encodeURIComponent(`identityId = "${userId}"`)}&limit=-1`)
    for (const s of rest.body.data) await srv.mgmt.del(`/api-sessions/${s.id}`)
    expect((await srv.mgmt.get(`/identities/${userId}`)).body.data.hasApiSession).toBe(false)
  })

  it('is refused to non-admins with 401 UNAUTHORIZED', async () => {
    const c = srv.as(await srv.login('session-user', 'pass-word-1', 'management'), 'management')
    expectError(await c.get('/api-sessions'), 401, 'UNAUTHORIZED')
    expectError(await c.del('/api-sessions/whatever'), 401, 'UNAUTHORIZED')
  })

  it('removes timed-out sessions in the background sweep', async () => {
    const token = await srv.login('session-user', 'pass-word-1', 'client')
    const id = (await srv.as(token, 'client').get('/current-api-session')).body.data.id
    srv.clock.advance(31 * 60_000)
    // the admin's own session timed out too: log in again
    const admin = srv.as(await srv.login(ADMIN.username, ADMIN.password), 'management')
    await srv.server.sweepSessions()
    expectError(await admin.get(`/api-sessions/${id}`), 404, 'NOT_FOUND')
  })

  it('moves lastActivityAt with use, to the second: a request within a second of the last activity leaves it', async () => {
    const c = srv.as(await srv.login('session-user', 'pass-word-1', 'client'), 'client')
    const activity = async () => Date.parse((await c.get('/current-api-session')).body.data.lastActivityAt)
    const first = await activity()
    srv.clock.advance(400)
    expect(await activity()).toBe(first)
    srv.clock.advance(600)
    // a second after the last activity: this request moves it (its answer shows the new value)
    expect(await activity()).toBe(first + 1000)
    srv.clock.advance(999)
    expect(await activity()).toBe(first + 1000)
  })
})
