// Revocations of OIDC tokens (issue 22, "Revocations are stored"; edge-api management.yml listRevocations,
// detailRevocation, createRevocation; oidc-and-ha.md §4): admin-only create, list and detail; an identity's disable,
// lockout and delete and an authenticator's delete store an IDENTITY revocation in the same commit; revocations
// survive a restart and a backup/restore, and are pruned once expired.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { ADMIN, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { authPolicyBody, createPasswordUser, passwordLogin } from '../support/auth-policy.ts'
import { backupDataDir } from '../../src/operate/operate-backup.ts'
import { restoreDataDir } from '../../src/operate/operate-restore.ts'

/** The default refresh-token lifetime (24 h) + 1 minute: how long a revocation lives unless told otherwise. */
const LIFETIME_MS = 24 * 60 * 60_000 + 60_000

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const detail = (id: string) => srv.mgmt.get(`/revocations/${encodeURIComponent(id)}`)
const iso = (ms: number) => new Date(ms).toISOString()

describe('POST /revocations', () => {
  it('creates a JTI revocation: 201 with its id, then listed and shown with its expiry', async () => {
    const jti = randomUUID()
    const at = srv.clock.now()
    const res = await srv.mgmt.post('/revocations', { id: jti, type: 'JTI', tags: { why: 'test' } })
    expectStatus(res, 201)
    expect(res.body.data.id).toBe(jti)
    expect(res.body.data._links.self.href).toContain(`revocations/${jti}`)
    const shown = await detail(jti)
    expectStatus(shown, 200)
    expect(shown.body.data).toMatchObject({ id: jti, type: 'JTI', createdAt: iso(at), updatedAt: iso(at), expiresAt: iso(at + LIFETIME_MS), tags: { why: 'test' } })
  })

  it('creates API_SESSION and IDENTITY revocations; a second one of an id replaces the first with a new createdAt', async () => {
    const asid = randomUUID()
    expectStatus(await srv.mgmt.post('/revocations', { id: asid, type: 'API_SESSION' }), 201)
    const { id } = await createPasswordUser(srv, 'revoke-by-admin', 'right-pass-1')
    const first = srv.clock.now()
    expectStatus(await srv.mgmt.post('/revocations', { id, type: 'IDENTITY' }), 201)
    expect((await detail(id)).body.data).toMatchObject({ type: 'IDENTITY', createdAt: iso(first), tags: {} })
    srv.clock.advance(5_000)
    expectStatus(await srv.mgmt.post('/revocations', { id, type: 'IDENTITY' }), 201)
    expect((await detail(id)).body.data).toMatchObject({ type: 'IDENTITY', createdAt: iso(first + 5_000), expiresAt: iso(first + 5_000 + LIFETIME_MS) })
    expect((await detail(asid)).body.data.type).toBe('API_SESSION')
  })

  it('refuses an unknown type, a missing id and a non-UUID jti with 400 COULD_NOT_VALIDATE, storing nothing', async () => {
    const before = (await srv.mgmt.get('/revocations')).body.meta.pagination.totalCount
    expectError(await srv.mgmt.post('/revocations', { id: randomUUID(), type: 'TOKEN' }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/revocations', { type: 'JTI' }), 400, 'COULD_NOT_VALIDATE')
    const notUuid = await srv.mgmt.post('/revocations', { id: 'not-a-uuid', type: 'JTI' })
    expectError(notUuid, 400, 'COULD_NOT_VALIDATE')
    expect(notUuid.body.error.cause.field).toBe('id')
    expectError(await srv.mgmt.post('/revocations', { id: 'nope', type: 'API_SESSION' }), 400, 'COULD_NOT_VALIDATE')
    expect((await srv.mgmt.get('/revocations')).body.meta.pagination.totalCount).toBe(before)
  })

  it('refuses an IDENTITY revocation of an unknown identity with 404 NOT_FOUND', async () => {
    expectError(await srv.mgmt.post('/revocations', { id: 'no-such-identity', type: 'IDENTITY' }), 404, 'NOT_FOUND')
    expectError(await detail('no-such-identity'), 404, 'NOT_FOUND')
  })

  it('is refused to a non-admin (401 UNAUTHORIZED), as are the list and the detail', async () => {
    await createPasswordUser(srv, 'revoke-non-admin', 'right-pass-1')
    const token = (await passwordLogin(srv, 'revoke-non-admin', 'right-pass-1')).body.data.token
    const caller = srv.as(token, 'management')
    expectError(await caller.post('/revocations', { id: randomUUID(), type: 'JTI' }), 401, 'UNAUTHORIZED')
    expectError(await caller.get('/revocations'), 401, 'UNAUTHORIZED')
    expectError(await caller.get(`/revocations/${randomUUID()}`), 401, 'UNAUTHORIZED')
  })
})

describe('GET /revocations', () => {
  it('lists with filter, sort and paging like the other lists', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()]
    for (const id of ids) expectStatus(await srv.mgmt.post('/revocations', { id, type: 'JTI', tags: { batch: 'list-test' } }), 201)
    const filtered = await srv.mgmt.get(`/revocations?filter=${encodeURIComponent('tags.batch = "list-test"')}&sort=${encodeURIComponent('id desc')}`)
    expectStatus(filtered, 200)
    expect(filtered.body.data.map((r: { id: string }) => r.id)).toEqual([...ids].sort().reverse())
    expect(filtered.body.meta.pagination).toMatchObject({ totalCount: 3 })
    expect(filtered.body.meta.filterableFields).toContain('expiresAt')
    const paged = await srv.mgmt.get(`/revocations?filter=${encodeURIComponent('tags.batch = "list-test"')}&limit=2&offset=2`)
    expect(paged.body.data).toHaveLength(1)
    expect(paged.body.meta.pagination).toMatchObject({ limit: 2, offset: 2, totalCount: 3 })
    const byId = await srv.mgmt.get(`/revocations?filter=${encodeURIComponent(`id = "${ids[1]}"`)}`)
    expect(byId.body.data.map((r: { id: string }) => r.id)).toEqual([ids[1]])
    const byType = await srv.mgmt.get(`/revocations?filter=${encodeURIComponent('type = "IDENTITY"')}&limit=500`)
    for (const r of byType.body.data) expect(r.type).toBe('IDENTITY')
  })
})

describe('revocations the controller makes itself (same commit as the change)', () => {
  it('disabling an identity stores an IDENTITY revocation created at the disable', async () => {
    const { id } = await createPasswordUser(srv, 'revoke-disabled', 'right-pass-1')
    expectError(await detail(id), 404, 'NOT_FOUND')
    srv.clock.advance(1_000)
    const at = srv.clock.now()
    expectStatus(await srv.mgmt.post(`/identities/${id}/disable`, { durationMinutes: 0 }), 200)
    const shown = await detail(id)
    expectStatus(shown, 200)
    expect(shown.body.data).toMatchObject({ id, type: 'IDENTITY', createdAt: iso(at), expiresAt: iso(at + LIFETIME_MS) })
    // enabling again leaves it: its cut-off is the disable, so tokens issued later are not revoked
    expectStatus(await srv.mgmt.post(`/identities/${id}/enable`), 200)
    expect((await detail(id)).body.data.createdAt).toBe(iso(at))
  })

  it('deleting an identity stores an IDENTITY revocation that outlives the identity', async () => {
    const { id } = await createPasswordUser(srv, 'revoke-deleted', 'right-pass-1')
    srv.clock.advance(1_000)
    const at = srv.clock.now()
    expectStatus(await srv.mgmt.del(`/identities/${id}`), 200)
    expectError(await srv.mgmt.get(`/identities/${id}`), 404, 'NOT_FOUND')
    expect((await detail(id)).body.data).toMatchObject({ id, type: 'IDENTITY', createdAt: iso(at) })
  })

  it('deleting one of its authenticators stores an IDENTITY revocation of the identity', async () => {
    const { id, authenticatorId } = await createPasswordUser(srv, 'revoke-authenticator', 'right-pass-1')
    srv.clock.advance(1_000)
    const at = srv.clock.now()
    expectStatus(await srv.mgmt.del(`/authenticators/${authenticatorId}`), 200)
    expect((await detail(id)).body.data).toMatchObject({ id, type: 'IDENTITY', createdAt: iso(at) })
  })

  it('a lockout of the auth policy stores an IDENTITY revocation at the failed attempt that locks', async () => {
    const policyId = await srv.create('/auth-policies', authPolicyBody('revoke-lockout', { maxAttempts: 2, lockoutDurationMinutes: 5 }))
    const { id } = await createPasswordUser(srv, 'revoke-locked', 'right-pass-1', policyId)
    srv.clock.advance(1_000)
    expectError(await passwordLogin(srv, 'revoke-locked', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    expectError(await detail(id), 404, 'NOT_FOUND')
    const at = srv.clock.now()
    expectError(await passwordLogin(srv, 'revoke-locked', 'wrong-pass-1'), 401, 'INVALID_AUTH')
    expect((await srv.mgmt.get(`/identities/${id}`)).body.data.disabled).toBe(true)
    expect((await detail(id)).body.data).toMatchObject({ id, type: 'IDENTITY', createdAt: iso(at) })
  })
})

describe('revocations are durable and expire', () => {
  let own: TestServer
  const work = mkdtempSync(join(tmpdir(), 'edgeplane-revocations-'))
  beforeAll(async () => {
    own = await startTestServer({ dataDir: join(work, 'data') })
  })
  afterAll(async () => {
    await own.stop()
    rmSync(work, { recursive: true, force: true })
  })

  it('survive a restart, and a backup restored into a new data directory', async () => {
    const jti = randomUUID()
    expectStatus(await own.mgmt.post('/revocations', { id: jti, type: 'JTI', tags: { kept: true } }), 201)
    const identityId = await own.create('/identities', { name: 'revoke-durable', type: 'User', isAdmin: false })
    expectStatus(await own.mgmt.post(`/identities/${identityId}/disable`, { durationMinutes: 0 }), 200)
    const before = (await own.mgmt.get(`/revocations/${jti}`)).body.data

    await own.restart()
    expect((await own.mgmt.get(`/revocations/${jti}`)).body.data).toEqual(before)
    expectStatus(await own.mgmt.get(`/revocations/${identityId}`), 200)

    await own.stop()
    const archive = join(work, 'backup.tar.gz')
    await backupDataDir({ dataDir: join(work, 'data'), outFile: archive, now: new Date(own.clock.now()) })
    const report = await restoreDataDir(archive, join(work, 'restored'))
    expect(report.counts.revocations).toBe(2)
    const restored = await startTestServer({ dataDir: join(work, 'restored') })
    try {
      expect((await restored.mgmt.get(`/revocations/${jti}`)).body.data).toEqual(before)
      expect((await restored.mgmt.get(`/revocations/${identityId}`)).body.data.type).toBe('IDENTITY')
    } finally {
      await restored.stop()
    }
    own = await startTestServer({ dataDir: join(work, 'data') })
  }, 30_000)

  it('an expired revocation stays listed until pruned; pruning removes only the expired ones, for good', async () => {
    const early = randomUUID()
    expectStatus(await own.mgmt.post('/revocations', { id: early, type: 'JTI' }), 201)
    own.clock.advance(LIFETIME_MS - 1_000)
    const late = randomUUID()
    const admin = () => own.login(ADMIN.username, ADMIN.password).then((t) => own.as(t, 'management'))
    let mgmt = await admin()
    expectStatus(await mgmt.post('/revocations', { id: late, type: 'API_SESSION' }), 201)
    own.clock.advance(1_000)
    mgmt = await admin()
    // `early` has expired: still listed until the prune
    expectStatus(await mgmt.get(`/revocations/${early}`), 200)
    await own.server.pruneRevocations()
    expectError(await mgmt.get(`/revocations/${early}`), 404, 'NOT_FOUND')
    expectStatus(await mgmt.get(`/revocations/${late}`), 200)
    await own.restart()
    expectError(await own.mgmt.get(`/revocations/${early}`), 404, 'NOT_FOUND')
    expectStatus(await own.mgmt.get(`/revocations/${late}`), 200)
  }, 30_000)
})
