// OIDC sign-in as the C SDK 1.18.2 does it on the wire (oidc-and-ha.md §2), then the edge APIs with the bearer access
// token: discovery, authorize by POST with the query, login/cert over mTLS, callback, code exchange, current identity,
// services, refresh with Basic `openziti:`, and the refusals: PKCE, reused code, expired, revoked and foreign-bound
// tokens, a disabled identity, a Host that is not ours, OIDC turned off.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { expectError, expectStatus, startTestServer, ADMIN, type TestServer } from '../support/harness.ts'
import { enrollNewIdentity, type EnrolledIdentity } from '../support/enroll.ts'
import { makeCsrPem } from '../support/pki.ts'
import { Secret, TOTP } from 'otpauth'
import { decodeJwtHeader, decodeJwtPayload, oidcSdk, type OidcSdk } from '../support/oidc-sdk.ts'

let srv: TestServer
let me: EnrolledIdentity
let sdk: OidcSdk
beforeAll(async () => {
  srv = await startTestServer()
  await srv.create('/services', { name: 'oidc-web', encryptionRequired: true, roleAttributes: ['oidc-web'] })
  await srv.create('/service-policies', { name: 'oidc-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#oidc'], serviceRoles: ['#oidc-web'], postureCheckRoles: [] })
  await srv.create('/edge-router-policies', { name: 'oidc-routers', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] })
  await srv.create('/service-edge-router-policies', { name: 'oidc-serp', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] })
  await srv.create('/edge-routers', { name: 'oidc-er', roleAttributes: [], isTunnelerEnabled: false })
  me = await enrollNewIdentity(srv, 'oidc-device', 'ec-p256', { roleAttributes: ['oidc'] })
  sdk = oidcSdk(srv, me)
})
afterAll(async () => {
  await srv.stop()
})

describe('what the SDK reads before it signs in', () => {
  it('/version advertises OIDC_AUTH, the edge key and edge-oidc at /oidc', async () => {
    const v = await srv.raw.get('/version')
    expectStatus(v, 200)
    expect(v.body.data.capabilities).toEqual(['OIDC_AUTH'])
    expect(v.body.data.apiVersions.edge.v1.path).toBe('/edge/client/v1')
    expect(v.body.data.apiVersions['edge-oidc'].v1).toEqual({ path: '/oidc', apiBaseUrls: [`${srv.server.advertisedUrl}/oidc`] })
  })

  it('discovery names the endpoints under the issuer the client reached, with openziti_endpoints', async () => {
    const d = await sdk.discovery()
    const issuer = `${srv.url}/oidc`
    expect(d.issuer).toBe(issuer)
    expect(d.authorization_endpoint).toBe(`${issuer}/authorize`)
    expect(d.token_endpoint).toBe(`${issuer}/oauth/token`)
    expect(d.jwks_uri).toBe(`${issuer}/keys`)
    expect(d.code_challenge_methods_supported).toEqual(['S256'])
    expect(d.id_token_signing_alg_values_supported).toHaveLength(1)
    expect(d.openziti_endpoints).toMatchObject({ cert: `${issuer}/login/cert`, totp: `${issuer}/login/totp`, auth_queries: `${issuer}/login/auth-queries` })
  })

  it('a Host that names none of the server certificate\'s names gets a plain 404', async () => {
    const res = await sdk.call('GET', '/oidc/.well-known/openid-configuration', { headers: { host: 'elsewhere.example:443' } })
    expect(res.status).toBe(404)
  })

  it('the key set holds the key tokens name by kid (SHA-1 of the server certificate)', async () => {
    const keys = await sdk.call('GET', '/oidc/keys')
    expect(keys.status).toBe(200)
    const [serverCert] = parseCertificatesPem(srv.server.pki.server.certPem)
    expect(keys.json.keys.map((k: any) => k.kid)).toEqual([serverCert.fingerprintSha1])
    expect(keys.json.keys[0].use).toBe('sig')
  })
})

describe('a certificate sign-in, then the edge APIs with the bearer token', () => {
  it('signs in, reads the current identity, the API session and the services', async () => {
    const tokens = await sdk.certLogin()
    expect(tokens.token_type).toBe('Bearer')
    expect(tokens.scope).toBe('openid offline_access')
    const access = decodeJwtPayload(tokens.access_token)
    const [leaf] = parseCertificatesPem(me.cert)
    expect(access).toMatchObject({ sub: me.id, z_t: 'a', aud: ['openziti'], amr: ['cert'], z_cfs: [leaf.fingerprintSha1], z_acf: leaf.fingerprintSha1 })
    expect(access.exp - access.iat).toBe(30 * 60)
    expect(typeof access.z_asid).toBe('string')
    expect(decodeJwtHeader(tokens.access_token)).toMatchObject({ typ: 'JWT', kid: parseCertificatesPem(srv.server.pki.server.certPem)[0].fingerprintSha1 })
    const refresh = decodeJwtPayload(tokens.refresh_token!)
    expect(refresh).toMatchObject({ z_t: 'r', z_asid: access.z_asid })
    expect(refresh.exp - refresh.iat).toBe(24 * 3600)
    expect(decodeJwtPayload(tokens.id_token!)).toMatchObject({ sub: me.id, name: 'oidc-device', azp: 'openziti' })
    expect(decodeJwtPayload(tokens.id_token!).z_asid).toBeUndefined()

    const api = sdk.api(tokens.access_token, 'client')
    const current = await api.get('/current-identity')
    expectStatus(current, 200)
    expect(current.body.data.id).toBe(me.id)
    const session = await api.get('/current-api-session')
    expectStatus(session, 200)
    expect(session.body.data).toMatchObject({ id: access.z_asid, identityId: me.id, token: tokens.access_token, isMfaRequired: false })
    expect(session.body.data.expirationSeconds).toBe(30 * 60)
    const services = await api.get('/services?configTypes=all')
    expectStatus(services, 200)
    expect(services.body.data.map((s: any) => s.name)).toEqual(['oidc-web'])
    // sdkInfo and envInfo of the login are recorded on the identity
    expect((await srv.mgmt.get(`/identities/${me.id}`)).body.data.sdkInfo).toMatchObject({ type: 'ziti-sdk-c', version: '1.18.2' })
  })

  it('a service session of a bearer session is its token alone (z_leg false), not stored', async () => {
    const tokens = await sdk.certLogin()
    const api = sdk.api(tokens.access_token, 'client')
    const serviceId = (await api.get('/services')).body.data[0].id
    const created = await api.post('/sessions', { serviceId, type: 'Dial' })
    expectStatus(created, 201)
    expect(decodeJwtPayload(created.body.data.token)).toMatchObject({ z_leg: false, z_t: 's', z_asid: decodeJwtPayload(tokens.access_token).z_asid })
    expect((await api.get('/sessions')).body.data).toEqual([])
  })

  it('refreshes with Basic openziti:, keeps z_asid, and refuses the old refresh token afterwards', async () => {
    const first = await sdk.certLogin()
    srv.clock.advance(60_000)
    const again = await sdk.refresh(first.refresh_token!)
    expect(again.status).toBe(200)
    const [a1, a2] = [decodeJwtPayload(first.access_token), decodeJwtPayload(again.json.access_token)]
    expect(a2.z_asid).toBe(a1.z_asid)
    expect(a2.jti).not.toBe(a1.jti)
    expect(a2.auth_time).toBe(a1.auth_time)
    expect(again.json.refresh_token).not.toBe(first.refresh_token)
    // the SDK drops cached service sessions when the API session id changes: it must not
    const session = await sdk.api(again.json.access_token, 'client').get('/current-api-session')
    expect(session.body.data.id).toBe(a1.z_asid)
    const reused = await sdk.refresh(first.refresh_token!)
    expect(reused.status).toBe(400)
    expect(reused.json.error).toBe('invalid_grant')
    // the rotated one still works
    expect((await sdk.refresh(again.json.refresh_token)).status).toBe(200)
  })

  it('a wrong PKCE verifier and a reused code are invalid_grant', async () => {
    const a = await sdk.authorize()
    const login = await sdk.call('POST', `/oidc/login/cert?id=${a.id}`, { body: '{}', headers: { 'content-type': 'application/json' } })
    const code = await sdk.followToCode(login)
    const wrong = await sdk.exchange(code, `${a.verifier}x`)
    expect(wrong.status).toBe(400)
    expect(wrong.json.error).toBe('invalid_grant')
    // a code works once, even when its first use failed
    const reused = await sdk.exchange(code, a.verifier)
    expect(reused.status).toBe(400)
    expect(reused.json.error).toBe('invalid_grant')
  })

  it('a token bound to one certificate is refused with another (z_cfs)', async () => {
    const tokens = await sdk.certLogin()
    const other = await enrollNewIdentity(srv, 'oidc-other', 'ec-p256')
    const res = await sdk.api(tokens.access_token, 'client').get('/current-identity', { tls: { cert: other.cert, key: other.key } })
    expectError(res, 401, 'UNAUTHORIZED')
    expect(res.headers.get('www-authenticate')).toContain('error="invalid"')
  })

  it('logout with the bearer revokes its API session; refresh then fails too', async () => {
    const tokens = await sdk.certLogin()
    const api = sdk.api(tokens.access_token, 'client')
    expectStatus(await api.del('/current-api-session'), 200)
    expectError(await api.get('/current-identity'), 401, 'UNAUTHORIZED')
    const refreshed = await sdk.refresh(tokens.refresh_token!)
    expect(refreshed.json.error).toBe('invalid_grant')
  })

  it('/oidc/revoke of a refresh token ends it', async () => {
    const tokens = await sdk.certLogin()
    const res = await sdk.call('POST', '/oidc/revoke', { body: `token=${tokens.refresh_token}&client_id=openziti`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(res.status).toBe(200)
    expect((await sdk.refresh(tokens.refresh_token!)).json.error).toBe('invalid_grant')
    // anyone may call it: a string that is not one of our tokens is answered 200 and stores nothing
    const before = (await srv.mgmt.get('/revocations?limit=1')).body.meta.pagination.totalCount
    for (const junk of ['not-a-token', `${tokens.access_token.slice(0, -4)}AAAA`, 'x'.repeat(5000)]) {
      const r = await sdk.call('POST', '/oidc/revoke', { body: `token=${junk}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      expect(r.status).toBe(200)
    }
    expect((await srv.mgmt.get('/revocations?limit=1')).body.meta.pagination.totalCount).toBe(before)
  })

  it('a disabled identity\'s token is refused at once, and so is its refresh', async () => {
    const dev = await enrollNewIdentity(srv, 'oidc-disabled', 'ec-p256')
    const devSdk = oidcSdk(srv, dev)
    const tokens = await devSdk.certLogin()
    const api = devSdk.api(tokens.access_token, 'client')
    expectStatus(await api.get('/current-identity'), 200)
    expectStatus(await srv.mgmt.post(`/identities/${dev.id}/disable`, { durationMinutes: 0 }), 200)
    expectError(await api.get('/current-identity'), 401, 'UNAUTHORIZED')
    expect((await devSdk.refresh(tokens.refresh_token!)).json.error).toBe('invalid_grant')
  })

  it('zt-session wins over a bearer token, and a refresh token opens no session', async () => {
    const tokens = await sdk.certLogin()
    const adminToken = await srv.login(ADMIN.username, ADMIN.password, 'client')
    const both = await sdk.api(tokens.access_token, 'client').get('/current-identity', { headers: { 'zt-session': adminToken } })
    expect(both.body.data.name).toBe('Default Admin')
    const byRefresh = await sdk.api(tokens.refresh_token!, 'client').get('/current-identity')
    expectError(byRefresh, 401, 'UNAUTHORIZED')
  })

  it('an admin signs in by password and uses the Management API with the bearer', async () => {
    const admin = oidcSdk(srv)
    const tokens = await admin.passwordLogin(ADMIN.username, ADMIN.password)
    expect(decodeJwtPayload(tokens.access_token)).toMatchObject({ amr: ['password'], z_ia: true, z_cfs: null })
    const res = await admin.api(tokens.access_token, 'management').get('/identities?limit=1')
    expectStatus(res, 200)
  })

  it('a CSR at the token endpoint answers a session certificate that the tokens are bound to', async () => {
    const a = await sdk.authorize()
    const login = await sdk.call('POST', `/oidc/login/cert?id=${a.id}`, { body: '{}', headers: { 'content-type': 'application/json' } })
    const keys = await generateKeyPair('ec-p256')
    const csr = await makeCsrPem(keys, { commonName: 'oidc-device' })
    const tokens = await sdk.exchange(await sdk.followToCode(login), a.verifier, [['csr_pem', csr]])
    expect(tokens.status).toBe(200)
    const [sessionCert] = parseCertificatesPem(tokens.json.session_cert)
    expect(decodeJwtPayload(tokens.json.access_token).z_cfs).toContain(sessionCert.fingerprintSha1)
    // the session certificate alone now carries the token
    const res = await sdk.api(tokens.json.access_token, 'client').get('/current-identity', {
      tls: { cert: tokens.json.session_cert, key: await exportPrivateKeyPem(keys.privateKey) },
    })
    expectStatus(res, 200)
  })

  it('a bearer session enrolls TOTP and gets a TOTP token (z_t "t"); a zt-session gets none', async () => {
    const dev = await enrollNewIdentity(srv, 'oidc-totp-token', 'ec-p256')
    const devSdk = oidcSdk(srv, dev)
    const api = devSdk.api((await devSdk.certLogin()).access_token, 'client')
    expectStatus(await api.post('/current-identity/mfa', {}), 201)
    const url = new URL((await api.get('/current-identity/mfa')).body.data.provisioningUrl)
    const code = (offset: number) => TOTP.generate({ secret: Secret.fromBase32(url.searchParams.get('secret')!), timestamp: srv.clock.now() + offset })
    expectStatus(await api.post('/current-identity/mfa/verify', { code: code(0) }), 200)
    const token = await api.post('/current-api-session/totp-token', { code: code(30_000) })
    expectStatus(token, 200)
    const claims = decodeJwtPayload(token.body.data.token)
    expect(claims).toMatchObject({ z_t: 't', sub: dev.id, z_asid: (await api.get('/current-api-session')).body.data.id })
    // a zt-session (the admin's: no TOTP owed) is refused before any code is read
    expectError(await srv.mgmt.post('/current-api-session/totp-token', { code: '123456' }), 400, 'INVALID_BACKING_TOKEN_TYPE')
  })

  it('TOTP owed at sign-in: 200 with the TOTP query and totp-required, the code through login/totp, amr with totp', async () => {
    const dev = await enrollNewIdentity(srv, 'oidc-totp-owed', 'ec-p256')
    const legacy = await srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls: dev })
    const api = srv.as(legacy.body.data.token, 'client')
    expectStatus(await api.post('/current-identity/mfa', {}), 201)
    const secret = new URL((await api.get('/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!
    const code = (offset: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: srv.clock.now() + offset })
    expectStatus(await api.post('/current-identity/mfa/verify', { code: code(0) }), 200)

    const devSdk = oidcSdk(srv, dev)
    const a = await devSdk.authorize()
    const login = await devSdk.call('POST', `/oidc/login/cert?id=${a.id}`, { body: '{}', headers: { 'content-type': 'application/json' } })
    expect(login.status).toBe(200)
    expect(login.headers.get('totp-required')).toBe('true')
    expect(login.json.authQueries).toEqual([expect.objectContaining({ typeId: 'TOTP', httpUrl: './oidc/login/totp', isTotpEnrolled: true })])
    // the SDK posts the code as a form, then follows the redirect to the callback
    const totp = await devSdk.call('POST', '/oidc/login/totp', { body: `id=${a.id}&code=${code(30_000)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const tokens = await devSdk.exchange(await devSdk.followToCode(totp), a.verifier)
    expect(tokens.status).toBe(200)
    expect(decodeJwtPayload(tokens.json.access_token).amr).toEqual(['cert', 'totp'])
    const session = await devSdk.api(tokens.json.access_token, 'client').get('/current-api-session')
    expectStatus(session, 200)
    expect(session.body.data).toMatchObject({ isMfaComplete: true, authQueries: [] })
  })

  it('end_session with the ID token as hint revokes the identity\'s tokens and redirects', async () => {
    const dev = await enrollNewIdentity(srv, 'oidc-end-session', 'ec-p256')
    const devSdk = oidcSdk(srv, dev)
    srv.clock.advance(1_000)
    const tokens = await devSdk.certLogin()
    const out = await devSdk.call('GET', `/oidc/end_session?id_token_hint=${tokens.id_token}`)
    expect(out.status).toBe(302)
    expect(out.headers.get('location')).toBe('/oidc/logged-out')
    expectError(await devSdk.api(tokens.access_token, 'client').get('/current-identity'), 401, 'UNAUTHORIZED')
    // a forged hint (another identity's claims, no valid signature) ends nothing
    const other = await sdk.certLogin()
    const [h, , sig] = other.id_token!.split('.')
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: me.id })).toString('base64url')}.${sig}`
    expect((await sdk.call('GET', `/oidc/end_session?id_token_hint=${forged}`)).status).toBe(302)
    expectStatus(await sdk.api(other.access_token, 'client').get('/current-identity'), 200)
    // a sign-in after the revocation's second works again
    srv.clock.advance(1_000)
    expectStatus(await devSdk.api((await devSdk.certLogin()).access_token, 'client').get('/current-identity'), 200)
  })

  it('token endpoint refusals are OAuth errors', async () => {
    const bad = await sdk.call('POST', '/oidc/oauth/token', { body: 'grant_type=password&client_id=openziti', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(bad.status).toBe(400)
    expect(bad.json.error).toBe('unsupported_grant_type')
    const client = await sdk.call('POST', '/oidc/oauth/token', { body: 'grant_type=refresh_token&client_id=nobody', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(client.json.error).toBe('invalid_client')
  })
})

describe('expiry', () => {
  it('an expired access token is 401 with the Bearer "expired" challenge', async () => {
    const tokens = await sdk.certLogin()
    // (last in the file: the clock moves past every session of the test server)
    srv.clock.advance(31 * 60_000)
    const res = await sdk.api(tokens.access_token, 'client').get('/current-identity')
    expectError(res, 401, 'UNAUTHORIZED')
    expect(res.headers.get('www-authenticate')).toContain('Bearer realm="openziti-oidc" error="expired"')
  })

})

describe('OIDC turned off', () => {
  it('advertises nothing of it and /oidc answers 404', async () => {
    const off = await startTestServer({ oidc: { enabled: false } })
    try {
      const v = await off.raw.get('/version')
      expect(v.body.data.capabilities).toEqual([])
      expect(v.body.data.apiVersions['edge-oidc']).toBeUndefined()
      const res = await fetch(`${off.url}/oidc/.well-known/openid-configuration`, { tls: { ca: off.caPem } } as RequestInit)
      expect(res.status).toBe(404)
    } finally {
      await off.stop()
    }
  })
})
