// API-session certificates over real TLS (edge-api client.yml /current-api-session/certificates; the seed's
// "Ephemeral certificate"): a client certificate issued from a CSR to the caller's API session logs its identity in
// by certificate while that session lives, and is removed with it.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { ADMIN, expectError, expectStatus, startTestServer, type ApiClient, type ApiResponse, type TestServer } from '../support/harness.ts'
import { makeCsrPem } from '../support/pki.ts'
import { enrollNewIdentity } from '../support/enroll.ts'

const PATH = '/current-api-session/certificates'
let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const certLogin = (tls: { cert: string; key: string }): Promise<ApiResponse> =>
  srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls })

/** A Client API session of a newly enrolled identity (logged in by its certificate). */
async function newSession(name: string): Promise<{ id: string; client: ApiClient }> {
  const me = await enrollNewIdentity(srv, name)
  const login = await certLogin(me)
  expectStatus(login, 200)
  return { id: me.id, client: srv.as(login.body.data.token, 'client') }
}

/** Creates a certificate for the client's session; answers it with its key. */
async function issue(client: ApiClient): Promise<{ id: string; cert: string; key: string; res: ApiResponse }> {
  const keys = await generateKeyPair('ec-p256')
  const res = await client.post(PATH, { csr: await makeCsrPem(keys) })
  expectStatus(res, 201)
  return { id: res.body.data.id, cert: res.body.data.certificate, key: await exportPrivateKeyPem(keys.privateKey), res }
}

describe('POST /current-api-session/certificates', () => {
  it('issues a 12-hour client certificate for the identity that logs it in by certificate', async () => {
    const me = await newSession('asc-happy')
    const { id, cert, key, res } = await issue(me.client)
    const [leaf, ...rest] = parseCertificatesPem(cert)
    expect(rest).toHaveLength(0)
    expect(leaf.subjectCn).toBe(me.id)
    expect(leaf.extKeyUsages).toEqual(['clientAuth'])
    expect(leaf.notAfter - srv.clock.now()).toBe(12 * 3_600_000)
    expect(parseCertificatesPem(res.body.data.cas).every((c) => c.isCa)).toBe(true)

    const detail = await me.client.get(`${PATH}/${id}`)
    expectStatus(detail, 200)
    expect(detail.body.data).toMatchObject({ id, subject: `CN=${me.id}`, fingerprint: leaf.fingerprintSha1, certificate: cert })
    expect(Date.parse(detail.body.data.validTo)).toBe(leaf.notAfter)
    const list = await me.client.get(PATH)
    expectStatus(list, 200)
    expect(list.body.data.map((c: any) => c.id)).toEqual([id])
    expect(list.body.meta.pagination.totalCount).toBe(1)

    const login = await certLogin({ cert, key })
    expectStatus(login, 200)
    expect(login.body.data.identity.id).toBe(me.id)
  })

  it('works for an identity logged in by password, which has no certificate of its own', async () => {
    const token = await srv.login(ADMIN.username, ADMIN.password, 'client')
    const { cert, key } = await issue(srv.as(token, 'client'))
    const login = await certLogin({ cert, key })
    expectStatus(login, 200)
    expect(login.body.data.identity.name).toBe('Default Admin')
  })

  it('refuses a bad CSR with 400 COULD_NOT_PROCESS_CSR and stores nothing', async () => {
    const me = await newSession('asc-bad-csr')
    const keys = await generateKeyPair('ec-p256')
    for (const csr of ['garbage', await makeCsrPem(keys, { askCa: true }), await makeCsrPem(keys, { uris: ['spiffe://elsewhere/identity/x'] })]) {
      expectError(await me.client.post(PATH, { csr }), 400, 'COULD_NOT_PROCESS_CSR')
    }
    expectError(await me.client.post(PATH, {}), 400, 'COULD_NOT_VALIDATE')
    expect((await me.client.get(PATH)).body.data).toEqual([])
  })

  it('401 without a session', async () => {
    const keys = await generateKeyPair('ec-p256')
    expectError(await srv.client.post(PATH, { csr: await makeCsrPem(keys) }, { session: null }), 401, 'UNAUTHORIZED')
    expectError(await srv.client.get(PATH, { session: null }), 401, 'UNAUTHORIZED')
  })
})

describe('GET and DELETE /current-api-session/certificates/{id}', () => {
  it('another API session sees none of them (404), even of the same identity', async () => {
    const me = await enrollNewIdentity(srv, 'asc-two-sessions')
    const first = srv.as((await certLogin(me)).body.data.token, 'client')
    const second = srv.as((await certLogin(me)).body.data.token, 'client')
    const { id } = await issue(first)
    expectError(await second.get(`${PATH}/${id}`), 404, 'NOT_FOUND')
    expectError(await second.del(`${PATH}/${id}`), 404, 'NOT_FOUND')
    expect((await second.get(PATH)).body.data).toEqual([])
    expectError(await first.get(`${PATH}/nope`), 404, 'NOT_FOUND')
    expectStatus(await first.get(`${PATH}/${id}`), 200)
  })

  it('a deleted certificate no longer logs in', async () => {
    const me = await newSession('asc-delete')
    const { id, cert, key } = await issue(me.client)
    expectStatus(await me.client.del(`${PATH}/${id}`), 200)
    expectError(await me.client.get(`${PATH}/${id}`), 404, 'NOT_FOUND')
    expectError(await certLogin({ cert, key }), 401, 'INVALID_AUTH')
  })
})

describe('an API-session certificate lives only as long as its API session', () => {
  it('stops logging in when its session logs out', async () => {
    const me = await newSession('asc-logout')
    const { cert, key } = await issue(me.client)
    expectStatus(await me.client.del('/current-api-session'), 200)
    expectError(await certLogin({ cert, key }), 401, 'INVALID_AUTH')
  })

  it('stops logging in when an admin deletes its session, and when its identity is deleted', async () => {
    const me = await newSession('asc-admin-delete')
    const a = await issue(me.client)
    const sessionId = (await me.client.get('/current-api-session')).body.data.id
    expectStatus(await srv.mgmt.del(`/api-sessions/${sessionId}`), 200)
    expectError(await certLogin(a), 401, 'INVALID_AUTH')

    const other = await newSession('asc-identity-delete')
    const b = await issue(other.client)
    expectStatus(await srv.mgmt.del(`/identities/${other.id}`), 200)
    expectError(await certLogin(b), 401, 'INVALID_AUTH')
  })

  it('survives a restart with its session', async () => {
    const me = await newSession('asc-restart')
    const { id, cert, key } = await issue(me.client)
    await srv.restart()
    expect((await me.client.get(PATH)).body.data.map((c: any) => c.id)).toEqual([id])
    expectStatus(await certLogin({ cert, key }), 200)
  })

  // last: it moves the clock past the session timeout
  it('stops logging in once its session timed out', async () => {
    const me = await newSession('asc-timeout')
    const { cert, key } = await issue(me.client)
    srv.clock.advance(31 * 60_000)
    expectError(await certLogin({ cert, key }), 401, 'INVALID_AUTH')
  })
})
