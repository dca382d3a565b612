// Legacy (zt-session) API sessions at the edge routers, with the router emulator over real TLS: what a real v2 router
// needs to admit an SDK whose hello carries its token. Every frame is decoded as the router decodes it, the 1014 JSON
// included (test/support/router-emulator-sessions.ts), and the router's own table of sessions is modelled from them.
// The full state on connect (chunks of 100, headers), ApiSessionAdded on a login with the identity's fingerprints,
// ApiSessionUpdated on a session certificate, ApiSessionRemoved on logout, admin delete, identity disable and expiry,
// heartbeats that keep a session alive and remove unknown tokens, a resync, session validation, the service session
// JWT as the router checks it against the session it holds, a router that reconnects after missing a removal, and a
// token that survives a restart.
// @see router-control-plane.md §3.4, §9 traps 6-8; management.yml /api-sessions; client.yml /current-api-session
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { generateKeyPair } from '../../src/pki/pki-keys.ts'
import { decodePem } from '../../src/lib/pem.ts'
import { ContentType as EdgeType, ApiSessionRemovedSchema } from '../../src/control/pb/edge_ctrl_pb.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import { enrollNewIdentity } from '../support/enroll.ts'
import { makeCsrPem } from '../support/pki.ts'
import {
  decodeAsRouter,
  fullStates,
  RouterSessionTable,
  sendHeartbeat,
  sendResync,
  sendValidateSessions,
  waitForAdded,
  waitForApiSessionRemoved,
  waitForFullState,
  waitForSessionRemoved,
  waitForUpdated,
} from '../support/router-emulator-sessions.ts'

let srv: TestServer
let r: RouterIdentity
let router: RouterEmulator
let table: RouterSessionTable
let adminId: string

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 }, routerChurnLimitMs: 0 })
  r = await enrollRouter(srv, 'sessions-er')
  adminId = (await srv.mgmt.get('/current-identity')).body.data.id
})
afterAll(async () => {
  router?.close()
  await srv.stop()
})

const connect = () =>
  RouterEmulator.connect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })

/** Polls `check` until it holds. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 3_000): Promise<void> {
  const until = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > until) throw new Error('the condition did not come true in time')
    await Bun.sleep(20)
  }
}

/** A user with a password, logged in on the Client API: its session id and token. */
async function userLogin(name: string): Promise<{ identityId: string; id: string; token: string }> {
  let identityId = (await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`name="${name}"`)}`)).body.data[0]?.id as string | undefined
  if (!identityId) {
    identityId = await srv.create('/identities', { name, type: 'User', isAdmin: false, roleAttributes: ['sessions'] })
    expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId, username: name, password: `${name}-pass` }), 201)
  }
  const res = await srv.client.post('/authenticate?method=password', { username: name, password: `${name}-pass` }, { session: null })
  expectStatus(res, 200)
  return { identityId, id: res.body.data.id, token: res.body.data.token }
}

describe('the sync after a ClientHello', () => {
  it('pushes every API session as a full state in chunks of 100 with the instant headers, then shows SYNC_DONE', async () => {
    // past two chunks: 205 logins, a few at a time (each costs an argon2 check)
    const logins: Array<{ id: string; token: string }> = []
    for (let i = 0; i < 205; i += 5) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(5, 205 - i) }, () => srv.raw.post('/edge/management/v1/authenticate?method=password', { username: 'admin', password: 'admin-pass-1' })),
      )
      for (const res of batch) {
        expectStatus(res, 200)
        logins.push({ id: res.body.data.id, token: res.body.data.token })
      }
    }
    router = await connect()
    const fs = await waitForFullState(router)
    const total = (await srv.mgmt.get('/api-sessions?limit=1')).body.meta.pagination.totalCount
    expect(fs.sessions).toHaveLength(total)
    expect(fs.chunks.length).toBe(Math.ceil(total / 100))
    expect(fs.chunks.map((c) => c.sessions.length)).toEqual(fs.chunks.map((_, i) => (i < fs.chunks.length - 1 ? 100 : total - 100 * i)))
    expect(fs.chunks.map((c) => c.state.isLast)).toEqual(fs.chunks.map((_, i) => i === fs.chunks.length - 1))
    for (const c of fs.chunks) expect(new TextDecoder().decode(c.frame.headers.get(1013)!)).toBe('instant')
    for (const l of logins) expect(fs.sessions.find((s) => s.token === l.token)).toEqual(expect.objectContaining({ id: l.id, identityId: adminId, certFingerprints: [] }))
    table = new RouterSessionTable().follow(router)
    expect(table.completedSyncs).toEqual([fs.id])
    expect(table.sessions.size).toBe(total)
    await eventually(async () => (await srv.mgmt.get(`/edge-routers/${r.id}`)).body.data.syncStatus === 'SYNC_DONE')
  }, 60_000)
})

describe('pushes while connected', () => {
  it('a certificate login reaches the router at once as ApiSessionAdded, with the SHA-1 of the identity\'s certificate', async () => {
    const me = await enrollNewIdentity(srv, 'sessions-cert-user')
    const login = await srv.raw.post('/edge/client/v1/authenticate?method=cert', {}, { tls: me })
    expectStatus(login, 200)
    const { body } = await waitForAdded(router, (s, full) => !full && s.token === login.body.data.token)
    const fingerprint = parseCertificatesPem(me.cert)[0].fingerprintSha1
    expect(body.apiSessions).toEqual([expect.objectContaining({ token: login.body.data.token, id: login.body.data.id, identityId: me.id, certFingerprints: [fingerprint] })])
    expect(body.isFullState).toBe(false)

    // a certificate of the session: ApiSessionUpdated with both fingerprints
    const keys = await generateKeyPair('ec-p256')
    const client = srv.as(login.body.data.token, 'client')
    const issued = await client.post('/current-api-session/certificates', { csr: await makeCsrPem(keys) })
    expectStatus(issued, 201)
    const sessionCert = parseCertificatesPem(issued.body.data.certificate)[0].fingerprintSha1
    const updated = await waitForUpdated(router, (s) => s.token === login.body.data.token && s.certFingerprints.includes(sessionCert))
    expect(updated.body.apiSessions[0].certFingerprints).toEqual([fingerprint, sessionCert])
    expect(table.catchUp().sessions.get(login.body.data.token)!.certFingerprints).toEqual([fingerprint, sessionCert])

    // logout: ApiSessionRemoved with its token and id
    expectStatus(await client.del('/current-api-session'), 200)
    const removed = await waitForApiSessionRemoved(router, login.body.data.token)
    expect(removed.body).toMatchObject({ tokens: [login.body.data.token], ids: [login.body.data.id] })
    expect(table.catchUp().sessions.has(login.body.data.token)).toBe(false)
  })

  it('an admin delete and an identity disabled remove the session', async () => {
    const a = await userLogin('sessions-del-user')
    await waitForAdded(router, (s) => s.token === a.token)
    expectStatus(await srv.mgmt.del(`/api-sessions/${a.id}`), 200)
    await waitForApiSessionRemoved(router, a.token)
    const b = await userLogin('sessions-disabled-user')
    await waitForAdded(router, (s) => s.token === b.token)
    expectStatus(await srv.mgmt.post(`/identities/${b.identityId}/disable`, { durationMinutes: 0 }), 200)
    await waitForApiSessionRemoved(router, b.token)
    expect(table.catchUp().sessions.has(b.token)).toBe(false)
  })

  it('answers the tokens of no session in a heartbeat with ApiSessionRemoved', async () => {
    const live = await userLogin('sessions-hb-user')
    await waitForAdded(router, (s) => s.token === live.token)
    const unknown = crypto.randomUUID()
    sendHeartbeat(router, [live.token, unknown])
    const { body } = await waitForApiSessionRemoved(router, unknown)
    expect(body.tokens).toEqual([unknown])
    expect(router.isClosed).toBe(false)
  })

  it('repeats the full state when the router asks, under a greater sync id', async () => {
    const before = fullStates(router).map((f) => f.id)
    sendResync(router)
    const again = await waitForFullState(router, before)
    expect(again.id > before.at(-1)!).toBe(true)
    const total = (await srv.mgmt.get('/api-sessions?limit=1')).body.meta.pagination.totalCount
    expect(again.sessions).toHaveLength(total)
    expect(table.catchUp().completedSyncs.at(-1)).toBe(again.id)
    expect(table.sessions.size).toBe(total)
  })
})

describe('service sessions', () => {
  let user: { identityId: string; id: string; token: string }
  let serviceId: string
  beforeAll(async () => {
    user = await userLogin('sessions-svc-user')
    serviceId = await srv.create('/services', { name: 'sessions-svc', roleAttributes: ['sessions'], encryptionRequired: true })
    await srv.create('/edge-router-policies', { name: 'sessions-erp', semantic: 'AnyOf', identityRoles: ['#sessions'], edgeRouterRoles: [`@${r.id}`] })
    await srv.create('/service-edge-router-policies', { name: 'sessions-serp', semantic: 'AnyOf', serviceRoles: ['#sessions'], edgeRouterRoles: [`@${r.id}`] })
    await srv.create('/service-policies', { name: 'sessions-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#sessions'], serviceRoles: ['#sessions'] })
  })

  it('carry a JWT the router checks against the API session it holds: kid of the server certificate, z_asid its id', async () => {
    const held = table.catchUp().sessions.get(user.token) ?? (await waitForAdded(router, (s) => s.token === user.token)).body.apiSessions[0]
    const created = await srv.as(user.token, 'client').post('/sessions', { serviceId, type: 'Dial' })
    expectStatus(created, 201)
    const jwt = created.body.data.token as string
    const der = decodePem(srv.server.pki.server.certPem)[0].der
    expect(decodeProtectedHeader(jwt).kid).toBe(createHash('sha1').update(der).digest('hex'))
    expect(decodeJwt(jwt)).toMatchObject({ sub: serviceId, jti: created.body.data.id, z_asid: held.id, z_iid: user.identityId, z_t: 's', z_st: 'Dial', z_leg: true, aud: ['openziti'] })
    // asked again: the same session, its token signed anew (same claims but iat)
    const again = await srv.as(user.token, 'client').post('/sessions', { serviceId, type: 'Dial' })
    expect(again.body.data.id).toBe(created.body.data.id)
    expect(decodeJwt(again.body.data.token)).toMatchObject({ jti: created.body.data.id, z_asid: held.id })
  })

  it('are validated for the router, unknown ids answered with SessionRemoved; a deleted one is removed', async () => {
    const created = await srv.as(user.token, 'client').post('/sessions', { serviceId, type: 'Dial' })
    const id = created.body.data.id as string
    sendValidateSessions(router, [id, 'no-such-session'])
    const { body } = await waitForSessionRemoved(router, 'no-such-session')
    expect(body).toMatchObject({ tokens: ['no-such-session'], ids: ['no-such-session'] })
    expectStatus(await srv.as(user.token, 'client').del(`/sessions/${id}`), 200)
    const removed = await waitForSessionRemoved(router, id)
    expect(removed.body).toMatchObject({ tokens: [id], ids: [id] })
    expect(table.catchUp().removedServiceSessions).toEqual(['no-such-session', id])
  })
})

describe('a router that reconnects', () => {
  // the router drops, once a full state is in, the sessions it did not name up to the greatest id it named
  // (router/state/manager.go RemoveMissingApiSessions): one that ended while it was away and is newer than every
  // session named stays until the router's heartbeat names it (for an SDK using it) and is answered
  it('drops with the new full state a session that ended while it was away; a newer one goes at its next heartbeat', async () => {
    const older = await userLogin('sessions-older')
    const stays = await userLogin('sessions-stays')
    const newest = await userLogin('sessions-newest')
    await waitForAdded(router, (s) => s.token === newest.token)
    table.catchUp()
    expect([older, stays, newest].every((x) => table.sessions.has(x.token))).toBe(true)
    router.close()
    await eventually(async () => (await srv.mgmt.get(`/edge-routers/${r.id}`)).body.data.isOnline === false)
    expectStatus(await srv.mgmt.del(`/api-sessions/${older.id}`), 200)
    expectStatus(await srv.mgmt.del(`/api-sessions/${newest.id}`), 200)
    router = await connect()
    const fs = await waitForFullState(router)
    table.follow(router)
    expect(table.completedSyncs.at(-1)).toBe(fs.id)
    expect(table.sessions.has(older.token)).toBe(false)
    expect(table.sessions.has(stays.token)).toBe(true)
    expect(table.sessions.has(newest.token)).toBe(true)
    sendHeartbeat(router, [stays.token, newest.token])
    await waitForApiSessionRemoved(router, newest.token)
    expect(table.catchUp().sessions.has(newest.token)).toBe(false)
    expect(table.sessions.has(stays.token)).toBe(true)
  })
})

describe('expiry and heartbeats', () => {
  it('a session named by heartbeats outlives its timeout; one not named expires and is removed', async () => {
    const kept = await userLogin('sessions-kept')
    const idle = await userLogin('sessions-idle')
    await waitForAdded(router, (s) => s.token === idle.token)
    srv.clock.advance(20 * 60_000)
    sendHeartbeat(router, [kept.token])
    await eventually(async () => Date.parse((await srv.mgmt.get(`/api-sessions/${kept.id}`)).body.data.lastActivityAt) === srv.clock.now())
    srv.clock.advance(15 * 60_000)
    await srv.server.sweepSessions()
    await waitForApiSessionRemoved(router, idle.token)
    expectStatus(await srv.mgmt.get(`/api-sessions/${kept.id}`), 200)
    expect((await srv.mgmt.get(`/api-sessions/${idle.id}`)).status).toBe(404)
    expect(table.catchUp().sessions.has(kept.token)).toBe(true)
    expect(table.sessions.has(idle.token)).toBe(false)
  })
})

describe('a restart', () => {
  it('keeps a session\'s token: it is pushed to the router after it, and logging it out still removes it', async () => {
    const before = await userLogin('sessions-restart')
    router.close()
    await srv.restart()
    router = await connect()
    const fs = await waitForFullState(router)
    expect(fs.sessions.find((s) => s.token === before.token)).toEqual(expect.objectContaining({ id: before.id, identityId: before.identityId }))
    expectStatus(await srv.as(before.token, 'client').del('/current-api-session'), 200)
    const removed = await router.waitFor((f) => f.contentType === EdgeType.ApiSessionRemovedType && decodeAsRouter(ApiSessionRemovedSchema, f).tokens.includes(before.token))
    expect(decodeAsRouter(ApiSessionRemovedSchema, removed).ids).toEqual([before.id])
  })
})
