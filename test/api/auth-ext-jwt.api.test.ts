// POST /authenticate?method=ext-jwt and the ext-jwt second factor (seed "Authentication" points 7 and 9;
// controller-behaviour.md §4 "ext-jwt", "authQueries" and the WWW-Authenticate realms openziti-primary-ext-jwt and
// openziti-secondary-ext-jwt). Tokens are signed here with jose at the server's fake clock; JWKS signers fetch their
// keys from a local plain-http server on 127.0.0.1 (loopback is the one place plain http is accepted).
// The policy rules of a test identity are written through the API: a new auth policy, named by the identity.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose'
import type { AuthPolicyRules } from '../../src/domain/identity/identity-auth-policy.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { authPolicyBody } from '../support/auth-policy.ts'
import { makeTestCa } from '../support/pki.ts'

/** Puts the identity under a new policy: the default rules with `over` applied to primary.extJwt and secondary. */
async function usePolicy(identityId: string, over: { primary?: Partial<AuthPolicyRules['primary']['extJwt']>; secondary?: Partial<AuthPolicyRules['secondary']> }): Promise<void> {
  const base = authPolicyBody(`ext-jwt policy ${++seq}`)
  const policyId = await srv.create('/auth-policies', {
    ...base,
    primary: { ...base.primary, extJwt: { ...base.primary.extJwt, ...over.primary } },
    secondary: { ...base.secondary, ...over.secondary },
  })
  expectStatus(await srv.mgmt.patch(`/identities/${identityId}`, { authPolicyId: policyId }), 200)
}

let jwks: { keys: JWK[] } = { keys: [] }
let jwksFetches = 0
const jwksServer = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => {
    jwksFetches++
    return Response.json(jwks)
  },
})

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer({ jwksCooldownMs: 0 })
})
afterAll(async () => {
  await srv.stop()
  jwksServer.stop(true)
})

const AUDIENCE = 'edgeplane-tests'
const nowS = () => Math.floor(srv.clock.now() / 1000)

interface Signer {
  id: string
  issuer: string
  key: CryptoKey
  alg: string
  kid?: string
}

let seq = 0
/** A certPem signer with a fresh EC (or RSA) certificate and key. */
async function certSigner(over: Record<string, unknown> = {}, keySpec?: 'rsa-2048'): Promise<Signer> {
  const ca = await makeTestCa({ commonName: `ext-jwt ${++seq}`, clock: srv.clock, keySpec })
  const issuer = `https://idp-${seq}.test`
  const kid = over.kid as string | undefined
  const id = await srv.create('/external-jwt-signers', { name: `signer-${seq}`, enabled: true, issuer, audience: AUDIENCE, certPem: ca.certPem, ...over })
  return { id, issuer, key: ca.keyPair.privateKey, alg: keySpec ? 'RS256' : 'ES256', kid }
}

/** A JWT of `signer` for `sub`, valid for five minutes from the server's clock unless the claims say otherwise. */
function tokenOf(signer: Pick<Signer, 'key' | 'alg' | 'kid' | 'issuer'>, claims: JWTPayload = {}): Promise<string> {
  return new SignJWT({ iss: signer.issuer, aud: AUDIENCE, iat: nowS(), exp: nowS() + 300, ...claims })
    .setProtectedHeader({ alg: signer.alg, ...(signer.kid ? { kid: signer.kid } : {}) })
    .sign(signer.key)
}

function extJwtLogin(authorization: string | null, api: 'client' | 'management' = 'client'): Promise<ApiResponse> {
  return srv.raw.post(`/edge/${api}/v1/authenticate?method=ext-jwt`, {}, { headers: authorization === null ? {} : { authorization } })
}

async function identity(name: string, over: Record<string, unknown> = {}): Promise<string> {
  return srv.create('/identities', { name, type: 'User', isAdmin: false, ...over })
}

function expectPrimaryRefusal(res: ApiResponse, error: 'missing' | 'invalid' | 'expired' = 'invalid'): void {
  expectError(res, 401, 'UNAUTHORIZED')
  expect(res.headers.get('www-authenticate')).toStartWith(`Bearer realm="openziti-primary-ext-jwt" error="${error}"`)
}

describe('POST /authenticate?method=ext-jwt', () => {
  it('logs in with a certPem signer found by iss; the token works, the authenticator id is the signer', async () => {
    const signer = await certSigner()
    const id = await identity('jwt-user-1')
    const res = await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: id })}`)
    expectStatus(res, 200)
    expect(res.body.data).toMatchObject({ identityId: id, authenticatorId: signer.id, authQueries: [], isMfaRequired: false })
    const me = await srv.as(res.body.data.token, 'client').get('/current-identity')
    expectStatus(me, 200)
    expect(me.body.data.id).toBe(id)
  })

  it('finds the signer by kid before iss, on the Management API too', async () => {
    const signer = await certSigner({ kid: 'kid-first' })
    const id = await identity('jwt-user-kid')
    // the iss is the signer's own; a kid of another signer would pick that one and fail its issuer check
    expectStatus(await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: id })}`, 'management'), 200)
    const other = await certSigner({ kid: 'kid-other' })
    expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf({ ...signer, kid: 'kid-other' }, { sub: id })}`))
    expect(other.id).not.toBe(signer.id)
  })

  it('verifies RSA signers with RS256 and PS256', async () => {
    const signer = await certSigner({}, 'rsa-2048')
    const id = await identity('jwt-user-rsa')
    expectStatus(await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: id })}`), 200)
    // PS256 needs the key imported for RSA-PSS: re-sign with the same private key material
    const pkcs8 = await crypto.subtle.exportKey('pkcs8', signer.key)
    const pss = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['sign'])
    expectStatus(await extJwtLogin(`Bearer ${await tokenOf({ ...signer, key: pss, alg: 'PS256' }, { sub: id })}`), 200)
  })

  it('maps the signer claim to externalId when useExternalId is set', async () => {
    const signer = await certSigner({ claimsProperty: 'email', useExternalId: true })
    const id = await identity('jwt-user-ext', { externalId: 'alice@example.test' })
    const res = await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: 'ignored', email: 'alice@example.test' })}`)
    expectStatus(res, 200)
    expect(res.body.data.identityId).toBe(id)
    // the identity id in the claim is no match for an externalId signer
    expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(signer, { email: id })}`))
  })

  it('considers at most three bearer tokens, in order', async () => {
    const signer = await certSigner()
    const id = await identity('jwt-user-many')
    const good = await tokenOf(signer, { sub: id })
    const bad = await tokenOf(signer, { sub: 'nobody' })
    expectStatus(await extJwtLogin(`Bearer ${bad}, Bearer ${bad}, Bearer ${good}`), 200)
    expectPrimaryRefusal(await extJwtLogin(`Bearer ${bad}, Bearer ${bad}, Bearer ${bad}, Bearer ${good}`))
  })

  describe('refusals: 401 UNAUTHORIZED with the openziti-primary-ext-jwt challenge', () => {
    let signer: Signer
    let id: string
    beforeAll(async () => {
      signer = await certSigner({ externalAuthUrl: 'https://idp.test/login' })
      id = await identity('jwt-user-refused')
    })

    it('no bearer token: error missing, naming the enabled signers', async () => {
      const res = await extJwtLogin(null)
      expectPrimaryRefusal(res, 'missing')
      const header = res.headers.get('www-authenticate')!
      expect(header).toContain(signer.id)
      expect(header).toContain(signer.issuer)
    })

    it('a malformed token, or a scheme other than Bearer', async () => {
      expectPrimaryRefusal(await extJwtLogin('Bearer not-a-jwt'))
      expectPrimaryRefusal(await extJwtLogin(`Basic ${await tokenOf(signer, { sub: id })}`), 'missing')
    })

    it('an issuer no signer has', async () => {
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf({ ...signer, issuer: 'https://elsewhere.test' }, { sub: id })}`))
    })

    it('a token for another audience', async () => {
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: id, aud: 'someone-else' })}`))
    })

    it('an expired token (error expired), and one not yet valid, at the server clock', async () => {
      const token = await tokenOf(signer, { sub: id })
      srv.clock.advance(301_000)
      try {
        expectPrimaryRefusal(await extJwtLogin(`Bearer ${token}`), 'expired')
      } finally {
        srv.clock.advance(-301_000)
      }
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: id, nbf: nowS() + 120 })}`))
    })

    it("a certPem signer whose certificate has expired", async () => {
      const old = await makeTestCa({ commonName: 'expired signer', clock: srv.clock, notBefore: srv.clock.now() - 86_400_000, notAfter: srv.clock.now() - 60_000 })
      const issuer = `https://expired-${++seq}.test`
      await srv.create('/external-jwt-signers', { name: `expired-${seq}`, enabled: true, issuer, audience: AUDIENCE, certPem: old.certPem })
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf({ issuer, key: old.keyPair.privateKey, alg: 'ES256' }, { sub: id })}`))
    })

    it('a bad signature', async () => {
      const { privateKey } = await generateKeyPair('ES256')
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf({ ...signer, key: privateKey }, { sub: id })}`))
    })

    it('a claim naming no identity, or no claim at all', async () => {
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: 'no-such-identity' })}`))
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(signer)}`))
    })

    it('a disabled signer, which the Client API list leaves out too', async () => {
      const off = await certSigner({ enabled: false })
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(off, { sub: id })}`))
      const listed = await srv.raw.get('/edge/client/v1/external-jwt-signers?limit=500')
      expect(listed.body.data.map((s: { id: string }) => s.id)).not.toContain(off.id)
    })

    it("an identity whose policy does not allow ext-jwt, or not this signer", async () => {
      const other = await certSigner()
      await identity('jwt-no-extjwt')
      await identity('jwt-other-signer-only')
      const noExtJwt = (await srv.mgmt.get('/identities?filter=' + encodeURIComponent('name = "jwt-no-extjwt"'))).body.data[0].id
      const otherOnly = (await srv.mgmt.get('/identities?filter=' + encodeURIComponent('name = "jwt-other-signer-only"'))).body.data[0].id
      await usePolicy(noExtJwt, { primary: { allowed: false } })
      await usePolicy(otherOnly, { primary: { allowedSigners: [other.id] } })
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: noExtJwt })}`))
      expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(signer, { sub: otherOnly })}`))
      expectStatus(await extJwtLogin(`Bearer ${await tokenOf(other, { sub: otherOnly })}`), 200)
    })
  })
})

describe('JWKS signers', () => {
  it('fetch their keys from the endpoint, refetch on an unknown kid after a rotation, and drop the old key', async () => {
    const first = await generateKeyPair('ES256')
    jwks = { keys: [{ ...(await exportJWK(first.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] }
    const issuer = `https://jwks-idp-${++seq}.test`
    const signerId = await srv.create('/external-jwt-signers', {
      name: `jwks-signer-${seq}`, enabled: true, issuer, audience: AUDIENCE, jwksEndpoint: `http://127.0.0.1:${jwksServer.port}/keys`,
    })
    const id = await identity('jwks-user')
    const fetchesBefore = jwksFetches
    const v1 = { issuer, key: first.privateKey, alg: 'ES256', kid: 'k1' }
    const res = await extJwtLogin(`Bearer ${await tokenOf(v1, { sub: id })}`)
    expectStatus(res, 200)
    expect(res.body.data.authenticatorId).toBe(signerId)
    expect(jwksFetches).toBe(fetchesBefore + 1)
    // cached: a second login fetches nothing
    expectStatus(await extJwtLogin(`Bearer ${await tokenOf(v1, { sub: id })}`), 200)
    expect(jwksFetches).toBe(fetchesBefore + 1)

    const second = await generateKeyPair('RS256')
    jwks = { keys: [{ ...(await exportJWK(second.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' }] }
    const v2 = { issuer, key: second.privateKey, alg: 'RS256', kid: 'k2' }
    expectStatus(await extJwtLogin(`Bearer ${await tokenOf(v2, { sub: id })}`), 200)
    expect(jwksFetches).toBe(fetchesBefore + 2)
    expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf(v1, { sub: id })}`))
  })

  it('refuses when the endpoint cannot be reached', async () => {
    const { privateKey } = await generateKeyPair('ES256')
    const issuer = `https://unreachable-${++seq}.test`
    await srv.create('/external-jwt-signers', { name: `dead-jwks-${seq}`, enabled: true, issuer, audience: AUDIENCE, jwksEndpoint: 'http://127.0.0.1:9/keys' })
    const id = await identity('jwks-unreachable-user')
    expectPrimaryRefusal(await extJwtLogin(`Bearer ${await tokenOf({ issuer, key: privateKey, alg: 'ES256', kid: 'x' }, { sub: id })}`))
  })
})

// Seed point 9: with an ext-jwt second factor the bearer JWT of that signer must come with every request.
describe('the ext-jwt second factor (secondary.requireExtJwtSigner)', () => {
  let primary: Signer
  let second: Signer
  let id: string
  let token: string
  beforeAll(async () => {
    primary = await certSigner()
    second = await certSigner({ externalAuthUrl: 'https://second.test/authorize', clientId: 'edge-client', scopes: ['openid', 'profile'] })
    id = await identity('jwt-second-factor')
    await usePolicy(id, { secondary: { requireExtJwtSigner: second.id } })
    const res = await extJwtLogin(`Bearer ${await tokenOf(primary, { sub: id })}`)
    expectStatus(res, 200)
    token = res.body.data.token
    expect(res.body.data.authQueries).toEqual([
      { typeId: 'EXT-JWT', provider: 'url', httpUrl: 'https://second.test/authorize', clientId: 'edge-client', scopes: ['openid', 'profile'], id: second.id },
    ])
  })

  it('leaves the session partial without the bearer: the current API session shows the query, the rest is 401', async () => {
    const client = srv.as(token, 'client')
    const current = await client.get('/current-api-session')
    expectStatus(current, 200)
    expect(current.body.data.authQueries.map((q: { typeId: string }) => q.typeId)).toEqual(['EXT-JWT'])
    const refused = await client.get('/current-identity')
    expectError(refused, 401, 'UNAUTHORIZED')
    const header = refused.headers.get('www-authenticate')!
    expect(header).toStartWith('Bearer realm="openziti-secondary-ext-jwt" error="missing"')
    expect(header).toContain(`id="${second.id}"`)
  })

  it("answers fully with a valid bearer of that signer for the session's identity, on every request", async () => {
    const client = srv.as(token, 'client')
    const headers = { authorization: `Bearer ${await tokenOf(second, { sub: id })}` }
    expectStatus(await client.get('/current-identity', { headers }), 200)
    const current = await client.get('/current-api-session', { headers })
    expect(current.body.data.authQueries).toEqual([])
    // the next request without it is partial again
    expectError(await client.get('/current-identity'), 401, 'UNAUTHORIZED')
  })

  it("refuses a bearer of another signer, another identity's, or an expired one", async () => {
    const client = srv.as(token, 'client')
    const otherId = await identity('jwt-second-other')
    const cases: [string, string][] = [
      [await tokenOf(primary, { sub: id }), 'missing'],
      [await tokenOf(second, { sub: otherId }), 'invalid'],
      [await tokenOf(second, { sub: id, exp: nowS() - 10 }), 'expired'],
    ]
    for (const [bearer, error] of cases) {
      const res = await client.get('/current-identity', { headers: { authorization: `Bearer ${bearer}` } })
      expectError(res, 401, 'UNAUTHORIZED')
      expect(res.headers.get('www-authenticate')).toStartWith(`Bearer realm="openziti-secondary-ext-jwt" error="${error}"`)
    }
  })

  it('is satisfied at login when the login request carries both tokens', async () => {
    const both = `Bearer ${await tokenOf(primary, { sub: id })}, Bearer ${await tokenOf(second, { sub: id })}`
    const res = await extJwtLogin(both)
    expectStatus(res, 200)
    expect(res.body.data.authQueries).toEqual([])
  })

  it('cannot be satisfied once the required signer is disabled', async () => {
    const bearer = await tokenOf(second, { sub: id })
    expectStatus(await srv.mgmt.patch(`/external-jwt-signers/${second.id}`, { enabled: false }), 200)
    try {
      expectError(await srv.as(token, 'client').get('/current-identity', { headers: { authorization: `Bearer ${bearer}` } }), 401, 'UNAUTHORIZED')
    } finally {
      expectStatus(await srv.mgmt.patch(`/external-jwt-signers/${second.id}`, { enabled: true }), 200)
    }
  })
})
