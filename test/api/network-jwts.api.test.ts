// The network enrollment JWT (edge-api client.yml / management.yml GET /network-jwts; controller-behaviour.md §6
// "Network JWT"; the real controller's routes/network-jwt_router.go): one token named `default` on both APIs and the
// bare alias, without a session; signed with the server certificate's key (kid its SHA-1) so it verifies with the
// enrollment JWKS; the real controller's claims; made once per process.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const PATHS = ['/edge/client/v1/network-jwts', '/edge/management/v1/network-jwts', '/network-jwts', '/edge/v1/network-jwts']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const networkJwt = async (path = PATHS[0]) => {
  const res = await srv.raw.get(path)
  expectStatus(res, 200)
  expect(res.body.data).toHaveLength(1)
  expect(res.body.data[0].name).toBe('default')
  return res.body.data[0].token as string
}
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString())

describe('GET /network-jwts', () => {
  it('answers one token named default on both APIs and the Client API aliases, without a session: the same token', async () => {
    const tokens = new Set<string>()
    for (const path of PATHS) tokens.add(await networkJwt(path))
    expect(tokens.size).toBe(1)
  })

  it('holds the real controller\'s claims: em network, aud openziti-enroller, iss = sub with the trailing slash, a UUID jti, ctrls null; no exp or iat', async () => {
    const claims = claimsOf(await networkJwt())
    const issuer = `${srv.server.advertisedUrl}/`
    expect(claims).toEqual({ iss: issuer, sub: issuer, aud: ['openziti-enroller'], jti: expect.stringMatching(UUID), em: 'network', ctrls: null })
  })

  it('is signed with the server certificate\'s key: it verifies with the enrollment JWKS, kid its SHA-1', async () => {
    const jwt = await networkJwt('/edge/management/v1/network-jwts')
    const jwks = (await srv.raw.get('/edge/client/v1/enroll/jwks')).body as { keys: (JWK & { kid: string })[] }
    expect(decodeProtectedHeader(jwt)).toMatchObject({ alg: 'ES256', kid: srv.server.pki.server.view.fingerprintSha1 })
    expect(jwks.keys[0]!.kid).toBe(srv.server.pki.server.view.fingerprintSha1)
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), { audience: 'openziti-enroller', issuer: `${srv.server.advertisedUrl}/` })
    expect(payload.em).toBe('network')
  })

  it('answers the same with an admin session, a user\'s, or a session that does not exist', async () => {
    const token = await networkJwt()
    expect((await srv.mgmt.get('/network-jwts')).body.data[0].token).toBe(token)
    const res = await srv.raw.get('/edge/client/v1/network-jwts', { session: 'no-such-session' })
    expectStatus(res, 200)
    expect(res.body.data[0].token).toBe(token)
  })

  it('takes no other method: 405 METHOD_NOT_ALLOWED', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expectError(await srv.raw(method, '/edge/management/v1/network-jwts', { body: {}, offSpec: 'the spec has only GET /network-jwts' }), 405, 'METHOD_NOT_ALLOWED')
    }
  })

  it('is made anew by each process: a restart gives a token with another jti', async () => {
    const before = claimsOf(await networkJwt())
    await srv.restart()
    const after = claimsOf(await networkJwt())
    expect(after.jti).not.toBe(before.jti)
    // the restarted listener has a port of its own (port 0): the issuer follows it
    const issuer = `${srv.server.advertisedUrl}/`
    expect(after).toEqual({ ...before, iss: issuer, sub: issuer, jti: after.jti })
  })
})
