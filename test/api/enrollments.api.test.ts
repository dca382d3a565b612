// The enrollment resource (edge-api management.yml /enrollments, /enrollments/{id}, /enrollments/{id}/refresh,
// /identities/{id}/enrollments): an admin adds, lists, refreshes and deletes an identity's enrollments.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { decodeJwt } from 'jose'
import { generateKeyPair } from '../../src/pki/pki-keys.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { makeCsrPem } from '../support/pki.ts'

let srv: TestServer
let csrPem: string
beforeAll(async () => {
  srv = await startTestServer()
  csrPem = await makeCsrPem(await generateKeyPair('ec-p256'))
})
afterAll(async () => {
  await srv.stop()
})

const inHours = (h: number) => new Date(srv.clock.now() + h * 3_600_000).toISOString()
const newIdentity = (name: string) => srv.create('/identities', { name, type: 'Device', isAdmin: false })
const enrollOtt = (token: string) => srv.client.post('/enroll/ott', { token, clientCsr: csrPem })

describe('POST /enrollments', () => {
  it('adds an ott enrollment that expires at the given expiresAt', async () => {
    const identityId = await newIdentity('enr-create')
    const expiresAt = inHours(48)
    const res = await srv.mgmt.post('/enrollments', { identityId, method: 'ott', expiresAt })
    expectStatus(res, 201)
    const detail = await srv.mgmt.get(`/enrollments/${res.body.data.id}`)
    expectStatus(detail, 200)
    const e = detail.body.data
    expect(e).toMatchObject({ method: 'ott', identityId, expiresAt, caId: null, identity: { id: identityId, name: 'enr-create' } })
    expect(decodeJwt(e.jwt)).toMatchObject({ sub: identityId, jti: e.token, em: 'ott', exp: Date.parse(expiresAt) / 1000 })
    const ofIdentity = await srv.mgmt.get(`/identities/${identityId}/enrollments`)
    expect(ofIdentity.body.data.map((x: any) => x.id)).toEqual([e.id])
    const filtered = await srv.mgmt.get(`/enrollments?filter=${encodeURIComponent(`identityId = "${identityId}" and method = "ott"`)}`)
    expect(filtered.body.data.map((x: any) => x.id)).toEqual([e.id])
    expect((await srv.mgmt.get(`/identities/${identityId}`)).body.data.enrollment.ott.token).toBe(e.token)
    expectStatus(await enrollOtt(e.token), 200)
    expect((await srv.mgmt.get(`/identities/${identityId}/enrollments`)).body.data).toEqual([])
  })

  it('refuses a second outstanding enrollment of the same method with 409 ENROLLMENT_EXISTS', async () => {
    const identityId = await newIdentity('enr-twice')
    expectStatus(await srv.mgmt.post('/enrollments', { identityId, method: 'ott', expiresAt: inHours(1) }), 201)
    expectError(await srv.mgmt.post('/enrollments', { identityId, method: 'ott', expiresAt: inHours(2) }), 409, 'ENROLLMENT_EXISTS')
  })

  const refusals: [string, (identityId: string) => Record<string, unknown>, string][] = [
    ['a past expiresAt', (identityId) => ({ identityId, method: 'ott', expiresAt: inHours(-1) }), 'expiresAt'],
    ['an expiresAt that is not a date-time', (identityId) => ({ identityId, method: 'ott', expiresAt: 'tomorrow' }), 'expiresAt'],
    ['an unknown identity', () => ({ identityId: 'nobody', method: 'ott', expiresAt: inHours(1) }), 'identityId'],
    ['an ottca enrollment of an unknown CA', (identityId) => ({ identityId, method: 'ottca', caId: 'some-ca', expiresAt: inHours(1) }), 'caId'],
  ]
  for (const [what, body, field] of refusals) {
    it(`refuses ${what} with 400 COULD_NOT_VALIDATE on ${field}, writing nothing`, async () => {
      const identityId = await newIdentity(`enr-bad-${field}-${what.length}`)
      const res = await srv.mgmt.post('/enrollments', body(identityId))
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
      expect((await srv.mgmt.get(`/identities/${identityId}/enrollments`)).body.data).toEqual([])
    })
  }
})

describe('POST /enrollments/{id}/refresh', () => {
  it('gives a new token and JWT; the old token stops working', async () => {
    const identityId = await newIdentity('enr-refresh')
    const id = (await srv.mgmt.post('/enrollments', { identityId, method: 'ott', expiresAt: inHours(1) })).body.data.id
    const before = (await srv.mgmt.get(`/enrollments/${id}`)).body.data
    const expiresAt = inHours(5)
    expectStatus(await srv.mgmt.post(`/enrollments/${id}/refresh`, { expiresAt }), 200)
    const after = (await srv.mgmt.get(`/enrollments/${id}`)).body.data
    expect(after.token).not.toBe(before.token)
    expect(after.expiresAt).toBe(expiresAt)
    expect(decodeJwt(after.jwt).jti).toBe(after.token)
    expectError(await enrollOtt(before.token), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectStatus(await enrollOtt(after.token), 200)
  })

  it('answers 404 for an unknown enrollment', async () => {
    expectError(await srv.mgmt.post('/enrollments/nope/refresh', { expiresAt: inHours(1) }), 404, 'NOT_FOUND')
  })
})

describe('DELETE /enrollments/{id}', () => {
  it('removes the enrollment: its token no longer enrolls', async () => {
    const identityId = await newIdentity('enr-delete')
    const id = (await srv.mgmt.post('/enrollments', { identityId, method: 'ott', expiresAt: inHours(1) })).body.data.id
    const token = (await srv.mgmt.get(`/enrollments/${id}`)).body.data.token
    expectStatus(await srv.mgmt.del(`/enrollments/${id}`), 200)
    expectError(await srv.mgmt.get(`/enrollments/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del(`/enrollments/${id}`), 404, 'NOT_FOUND')
    expectError(await enrollOtt(token), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('needs an admin session', async () => {
    expectError(await srv.raw.get('/edge/management/v1/enrollments'), 401, 'UNAUTHORIZED')
  })
})
