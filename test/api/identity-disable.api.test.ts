// Disabling and enabling identities (edge-api management.yml disableIdentity, enableIdentity; seed "Identity:
// clear-disabled operation"; controller-behaviour.md §4 "Lockout"): a disabled identity's API sessions end at once
// and it can not log in by any method until the window ends or an admin enables it.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { createPasswordUser, passwordLogin } from '../support/auth-policy.ts'
import { enrollNewIdentity } from '../support/enroll.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})


const view = async (id: string) => (await srv.mgmt.get(`/identities/${id}`)).body.data

describe('POST /identities/:id/disable', () => {
  it('disables for durationMinutes: sessions end at once, no login by password or certificate until the window ends', async () => {
    const { id } = await createPasswordUser(srv, 'disable-me', 'right-pass-1')
    const session = (await passwordLogin(srv, 'disable-me', 'right-pass-1')).body.data.token
    const me = srv.as(session, 'client')
    expectStatus(await me.get('/current-identity'), 200)

    const at = srv.clock.now()
    const res = await srv.mgmt.post(`/identities/${id}/disable`, { durationMinutes: 10 })
    expectStatus(res, 200)
    expect(res.body).toEqual({ data: {}, meta: {} })
    expect(await view(id)).toMatchObject({ disabled: true, disabledAt: new Date(at).toISOString(), disabledUntil: new Date(at + 10 * 60_000).toISOString(), hasApiSession: false })
    expectError(await me.get('/current-identity'), 401, 'UNAUTHORIZED')
    const listed = await srv.mgmt.get(`/api-sessions?filter=${encodeURIComponent(`identityId="${id}"`)}`)
    expect(listed.body.data).toEqual([])
    expectError(await passwordLogin(srv, 'disable-me', 'right-pass-1'), 401, 'INVALID_AUTH')

    srv.clock.advance(10 * 60_000)
    expect((await view(id)).disabled).toBe(false)
    expectStatus(await passwordLogin(srv, 'disable-me', 'right-pass-1'), 200)
  })

  it('refuses certificate login while disabled; 0 minutes lasts until enabled, and enable clears every disabled state', async () => {
    const device = await enrollNewIdentity(srv, 'disable-cert')
    const certLogin = () => srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls: device })
    expectStatus(await certLogin(), 200)
    expectStatus(await srv.mgmt.post(`/identities/${device.id}/disable`, { durationMinutes: 0 }), 200)
    expect(await view(device.id)).toMatchObject({ disabled: true, disabledUntil: null })
    expectError(await certLogin(), 401, 'INVALID_AUTH')
    srv.clock.advance(20 * 60_000)
    expectError(await certLogin(), 401, 'INVALID_AUTH')

    expectStatus(await srv.mgmt.post(`/identities/${device.id}/enable`), 200)
    expect(await view(device.id)).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null })
    expectStatus(await certLogin(), 200)
  })

  it('a second disable replaces the window; enabling an identity that is not disabled is harmless', async () => {
    const { id } = await createPasswordUser(srv, 'disable-twice', 'right-pass-1')
    expectStatus(await srv.mgmt.post(`/identities/${id}/enable`), 200)
    expectStatus(await srv.mgmt.post(`/identities/${id}/disable`, { durationMinutes: 0 }), 200)
    expectStatus(await srv.mgmt.post(`/identities/${id}/disable`, { durationMinutes: 1 }), 200)
    srv.clock.advance(60_000)
    expectStatus(await passwordLogin(srv, 'disable-twice', 'right-pass-1'), 200)
  })

  it('survives a restart', async () => {
    const { id } = await createPasswordUser(srv, 'disable-durable', 'right-pass-1')
    expectStatus(await srv.mgmt.post(`/identities/${id}/disable`, { durationMinutes: 0 }), 200)
    await srv.restart()
    expect((await view(id)).disabled).toBe(true)
    expectError(await passwordLogin(srv, 'disable-durable', 'right-pass-1'), 401, 'INVALID_AUTH')
  })

  const badBodies: [string, unknown][] = [
    ['no body', undefined],
    ['no durationMinutes', {}],
    ['a negative durationMinutes', { durationMinutes: -1 }],
    ['a fractional durationMinutes', { durationMinutes: 1.5 }],
    ['a string durationMinutes', { durationMinutes: '5' }],
  ]
  for (const [what, b] of badBodies) {
    it(`refuses ${what} with 400 COULD_NOT_VALIDATE and changes nothing`, async () => {
      const id = (await srv.mgmt.get(`/identities?filter=${encodeURIComponent('name="Default Admin"')}`)).body.data[0].id
      expectError(await srv.mgmt('POST', `/identities/${id}/disable`, b === undefined ? {} : { body: b }), 400, 'COULD_NOT_VALIDATE')
      expect((await view(id)).disabled).toBe(false)
    })
  }

  it('an unknown identity is 404 NOT_FOUND', async () => {
    expectError(await srv.mgmt.post('/identities/nope/disable', { durationMinutes: 5 }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.post('/identities/nope/enable'), 404, 'NOT_FOUND')
  })

  it('is for admins only', async () => {
    const { id } = await createPasswordUser(srv, 'disable-non-admin', 'right-pass-1')
    const user = srv.as((await passwordLogin(srv, 'disable-non-admin', 'right-pass-1')).body.data.token, 'management')
    expectError(await user.post(`/identities/${id}/disable`, { durationMinutes: 5 }), 401, 'UNAUTHORIZED')
    expectError(await user.post(`/identities/${id}/enable`), 401, 'UNAUTHORIZED')
  })
})
