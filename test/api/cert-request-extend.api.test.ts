// An admin asks the holder of a certificate authenticator to extend it early (edge-api management.yml
// POST /authenticators/{id}/request-extend, requestExtendAuthenticator; controller/model/authenticator_manager.go
// RequestExtend): the flags show on the authenticator (isExtendRequested, isKeyRollRequested, extendRequestedAt) for
// the admin and its holder, and on the holder's API sessions (isCertExtendRequested, isCertKeyRollRequested); a
// verified extension clears them and records whether the key changed (lastExtendRolledKeys). Refusals: unknown 404,
// not a certificate this controller issued 409 CAN_NOT_UPDATE_AUTHENTICATOR (docs/differences.md), non-admins 401.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair, importPrivateKeyPem, publicKeyFromPrivateKey } from '../../src/pki/pki-keys.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { makeClientCert, makeCsrPem, makeTestCa } from '../support/pki.ts'
import { enrollNewIdentity, type EnrolledIdentity } from '../support/enroll.ts'
import { decodeJwtPayload, oidcSdk } from '../support/oidc-sdk.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const certLogin = (tls: { cert: string; key: string }): Promise<ApiResponse> =>
  srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls })
const requestExtend = (id: string, body: unknown = {}) => srv.mgmt.post(`/authenticators/${id}/request-extend`, body)

/** An enrolled identity logged in by its certificate: its session token and cert authenticator id. */
async function loggedIn(name: string): Promise<EnrolledIdentity & { token: string; authenticatorId: string }> {
  const me = await enrollNewIdentity(srv, name)
  const login = await certLogin(me)
  expectStatus(login, 200)
  return { ...me, token: login.body.data.token, authenticatorId: login.body.data.authenticatorId }
}

/** Extends `me`'s certificate (with a new key, or the one it has) and verifies it: the new certificate and key. */
async function extendAndVerify(me: EnrolledIdentity & { token: string; authenticatorId: string }, newKey: boolean) {
  const keys = newKey
    ? await generateKeyPair('ec-p256')
    : await (async () => {
        const privateKey = await importPrivateKeyPem(me.key)
        return { privateKey, publicKey: await publicKeyFromPrivateKey(privateKey) }
      })()
  const client = srv.as(me.token, 'client')
  const path = `/current-identity/authenticators/${me.authenticatorId}`
  const extended = await client.post(`${path}/extend`, { clientCertCsr: await makeCsrPem(keys) }, { tls: me })
  expectStatus(extended, 200)
  const pending = (await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data
  // an extension asked for but not yet verified leaves the request standing
  expect(pending.isExtendRequested).toBe(true)
  expectStatus(await client.post(`${path}/extend-verify`, { clientCert: extended.body.data.clientCert }), 200)
  return { cert: extended.body.data.clientCert as string, key: await exportPrivateKeyPem(keys.privateKey) }
}

describe('POST /authenticators/{id}/request-extend', () => {
  it('flags the authenticator and its sessions with a key roll; a verified extension with a new key clears them', async () => {
    const me = await loggedIn('request-extend-roll')
    const before = (await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data
    expect(before).toMatchObject({ isExtendRequested: false, isKeyRollRequested: false, extendRequestedAt: null, lastExtendRolledKeys: false })
    const client = srv.as(me.token, 'client')
    expect((await client.get('/current-api-session')).body.data).toMatchObject({ isCertExtendRequested: false, isCertKeyRollRequested: false })

    srv.clock.advance(60_000)
    const res = await requestExtend(me.authenticatorId, { rollKeys: true })
    expectStatus(res, 200)
    expect(res.body.data).toEqual({})
    const asked = new Date(srv.clock.now()).toISOString()
    const flagged = { isExtendRequested: true, isKeyRollRequested: true, extendRequestedAt: asked }
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data).toMatchObject(flagged)
    // the holder sees it on its authenticator and on its sessions: the one it has and a new one
    const own = (await client.get('/current-identity/authenticators')).body.data.find((a: { id: string }) => a.id === me.authenticatorId)
    expect(own).toMatchObject(flagged)
    expect((await client.get('/current-api-session')).body.data).toMatchObject({ isCertExtendRequested: true, isCertKeyRollRequested: true })
    const again = await certLogin(me)
    expect(again.body.data).toMatchObject({ isCertExtendRequested: true, isCertKeyRollRequested: true })
    const listed = (await srv.mgmt.get(`/api-sessions?filter=${encodeURIComponent(`identityId = "${me.id}"`)}`)).body.data
    expect(listed.map((s: { isCertExtendRequested: boolean }) => s.isCertExtendRequested)).toEqual([true, true])
    // an admin's own session (updb) is never flagged
    expect((await srv.mgmt.get('/current-api-session')).body.data).toMatchObject({ isCertExtendRequested: false, isCertKeyRollRequested: false })

    const next = await extendAndVerify(me, true)
    const done = (await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data
    expect(done).toMatchObject({ isExtendRequested: false, isKeyRollRequested: false, extendRequestedAt: null, lastExtendRolledKeys: true })
    expect((await client.get('/current-api-session')).body.data).toMatchObject({ isCertExtendRequested: false, isCertKeyRollRequested: false })
    expectStatus(await certLogin(next), 200)
  })

  it('without rollKeys asks for an extension only; extending with the same key records that no key was rolled', async () => {
    const me = await loggedIn('request-extend-keep-key')
    expectStatus(await requestExtend(me.authenticatorId, {}), 200)
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data).toMatchObject({ isExtendRequested: true, isKeyRollRequested: false })
    expect((await srv.as(me.token, 'client').get('/current-api-session')).body.data).toMatchObject({
      isCertExtendRequested: true,
      isCertKeyRollRequested: false,
    })
    // asked again with rollKeys: the later request stands
    expectStatus(await requestExtend(me.authenticatorId, { rollKeys: true }), 200)
    expectStatus(await requestExtend(me.authenticatorId, { rollKeys: false }), 200)
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data.isKeyRollRequested).toBe(false)
    const next = await extendAndVerify(me, false)
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data).toMatchObject({
      isExtendRequested: false,
      extendRequestedAt: null,
      lastExtendRolledKeys: false,
    })
    expectStatus(await certLogin(next), 200)
  })

  it('an OIDC sign-in carries the flags in its tokens (z_cer, z_ckrr) and its session shows them as they are now', async () => {
    const me = await enrollNewIdentity(srv, 'request-extend-oidc')
    const sdk = oidcSdk(srv, me)
    const before = await sdk.certLogin()
    expect(decodeJwtPayload(before.access_token)).toMatchObject({ z_cer: false, z_ckrr: false })
    const authenticatorId = decodeJwtPayload(before.access_token).z_authid as string
    expectStatus(await requestExtend(authenticatorId, { rollKeys: true }), 200)
    const after = await sdk.certLogin()
    expect(decodeJwtPayload(after.access_token)).toMatchObject({ z_cer: true, z_ckrr: true })
    // the session of a token minted before the request reads the authenticator as it is
    for (const token of [before.access_token, after.access_token]) {
      const session = await sdk.api(token, 'client').get('/current-api-session')
      expectStatus(session, 200)
      expect(session.body.data).toMatchObject({ isCertExtendRequested: true, isCertKeyRollRequested: true })
    }
  })

  it('survives a restart', async () => {
    const me = await loggedIn('request-extend-restart')
    expectStatus(await requestExtend(me.authenticatorId, { rollKeys: true }), 200)
    await srv.restart()
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data).toMatchObject({ isExtendRequested: true, isKeyRollRequested: true })
  })

  it('404 NOT_FOUND for an unknown authenticator', async () => {
    expectError(await requestExtend('no-such-authenticator', { rollKeys: true }), 404, 'NOT_FOUND')
  })

  it('409 CAN_NOT_UPDATE_AUTHENTICATOR for a updb authenticator and a certificate of a third-party CA; nothing changes', async () => {
    const updb = (await srv.mgmt.get('/current-identity/authenticators')).body.data.find((a: { method: string }) => a.method === 'updb')
    expectError(await requestExtend(updb.id, { rollKeys: true }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR')
    expect((await srv.mgmt.get(`/authenticators/${updb.id}`)).body.data.isExtendRequested).toBeUndefined()

    const ca = await makeTestCa({ commonName: 'request-extend third party', clock: srv.clock })
    const identityId = await srv.create('/identities', { name: 'request-extend-third-party', type: 'Device', isAdmin: false })
    const holder = await makeClientCert({ issuer: ca.signer, clock: srv.clock, commonName: 'third-party holder' })
    const caId = await srv.create('/cas', {
      name: 'request-extend-ca', certPem: ca.certPem, isAuthEnabled: true, isAutoCaEnrollmentEnabled: false, isOttCaEnrollmentEnabled: true, identityRoles: [],
    })
    const token = (await srv.mgmt.get(`/cas/${caId}`)).body.data.verificationToken
    const proof = await makeClientCert({ issuer: ca.signer, commonName: token, clock: srv.clock })
    expectStatus(await srv.mgmt('POST', `/cas/${caId}/verify`, { rawBody: proof.certPem, headers: { 'content-type': 'text/plain' } }), 200)
    const authId = await srv.create('/authenticators', { identityId, method: 'cert', certPem: holder.certPem })
    expectError(await requestExtend(authId, { rollKeys: true }), 409, 'CAN_NOT_UPDATE_AUTHENTICATOR')
    expect((await srv.mgmt.get(`/authenticators/${authId}`)).body.data).toMatchObject({ isExtendRequested: false, extendRequestedAt: null })
  })

  it('400 COULD_NOT_VALIDATE for a body that is not the spec\'s', async () => {
    const me = await loggedIn('request-extend-bad-body')
    expectError(await requestExtend(me.authenticatorId, { rollKeys: 'yes' }), 400, 'COULD_NOT_VALIDATE')
    expectError(await requestExtend(me.authenticatorId, [true]), 400, 'COULD_NOT_VALIDATE')
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data.isExtendRequested).toBe(false)
  })

  it('401 UNAUTHORIZED for a non-admin (its own authenticator too) and without a session', async () => {
    const me = await loggedIn('request-extend-not-admin')
    const asMe = srv.as((await srv.raw.post('/edge/management/v1/authenticate?method=cert', {}, { tls: me })).body.data.token, 'management')
    expectError(await asMe.post(`/authenticators/${me.authenticatorId}/request-extend`, { rollKeys: true }), 401, 'UNAUTHORIZED')
    expectError(await srv.mgmt.post(`/authenticators/${me.authenticatorId}/request-extend`, { rollKeys: true }, { session: null }), 401, 'UNAUTHORIZED')
    expect((await srv.mgmt.get(`/authenticators/${me.authenticatorId}`)).body.data.isExtendRequested).toBe(false)
  })
})
