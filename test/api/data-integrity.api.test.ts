// Data integrity and snapshots (seed "Data integrity state"/"Data integrity scan"; controller-behaviour.md §10
// "Data integrity", "Snapshot"; policy-and-storage.md §7–8): records are broken behind the actors' backs with a raw
// LMDB handle on the stopped server's data directory, the server starts on it, a check finds each kind of damage, a
// fix repairs what is repairable (after writing a snapshot), and a second check finds only what cannot be repaired.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'lmdb'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { openStoreCopy } from '../../src/store/store-copy.ts'
import type { SubDbName } from '../../src/store/store-catalogue.ts'

let srv: TestServer
const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-integrity-'))
const ids: Record<string, string> = {}

beforeAll(async () => {
  srv = await startTestServer({ dataDir })
  ids.gone = await srv.create('/identities', { name: 'to-vanish', type: 'Device', isAdmin: false, enrollment: { ott: true } })
  ids.kept = await srv.create('/identities', { name: 'kept-user', type: 'User', isAdmin: false, roleAttributes: ['staff'] })
  ids.type = await srv.create('/config-types', { name: 'port-type', schema: { type: 'object', properties: { port: { type: 'integer' } } } })
  ids.config = await srv.create('/configs', { name: 'cfg', configTypeId: ids.type, data: { port: 80 } })
  ids.service = await srv.create('/services', { name: 'svc', encryptionRequired: true, configs: [ids.config], roleAttributes: ['web'] })
  ids.policy = await srv.create('/service-policies', {
    name: 'sp', type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${ids.gone}`, '#staff'], serviceRoles: ['#web'],
  })
}, 30_000)
afterAll(async () => {
  await srv.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Stops the server, lets `damage` write to the data directory's LMDB behind the actors' backs, starts it again. */
async function breakBehindTheBack(damage: (db: (name: SubDbName) => { get(k: string): any; putSync(k: string, v: unknown): void; removeSync(k: string): void; getRange(): Iterable<{ key: string; value: any }> }) => void) {
  await srv.server.stop()
  const env = open({ path: join(dataDir, 'edgeplane.mdb'), encoding: 'json', maxDbs: 64 })
  const handles = new Map<string, any>()
  // one transaction: the writes of a large damage commit at once
  env.transactionSync(() => damage((name) => handles.get(name) ?? handles.set(name, env.openDB({ name, encoding: 'json' })).get(name)))
  await env.close()
  await srv.restart()
}

async function run(kind: 'check' | 'fix') {
  expectStatus(await srv.mgmt.post(`/database/${kind}-data-integrity`), 202)
  for (;;) {
    const res = await srv.mgmt.get('/database/data-integrity-results')
    expectStatus(res, 200)
    if (!res.body.data.inProgress) return res.body.data as { results: { description: string; fixed: boolean }[]; tooManyErrors: boolean; error: string; fixingErrors: boolean }
    await Bun.sleep(5)
  }
}

const duplicateName = () => `identities ${['dup-identity', ids.kept].sort().join(', ')} share the name 'kept-user'`
const only = <T extends { description: string }>(results: T[], part: string) => results.filter((r) => r.description.includes(part))

describe('data integrity results before any run', () => {
  it('answer the seed state with zero times and nothing found', async () => {
    const res = await srv.mgmt.get('/database/data-integrity-results')
    expectStatus(res, 200)
    expect(res.body.data).toEqual({
      startTime: '0001-01-01T00:00:00.000Z', endTime: '0001-01-01T00:00:00.000Z', error: '', fixingErrors: false, inProgress: false, results: [], tooManyErrors: false,
    })
    expect(res.body.meta.pagination).toEqual({ limit: -1, offset: 0, totalCount: 0 })
  })

  it('are refused without an admin session', async () => {
    const user = await srv.create('/identities', { name: 'integrity-nonadmin', type: 'User', isAdmin: false, enrollment: { updb: 'integrity-nonadmin' } })
    expect(user).toBeString()
    expectError(await srv.mgmt.get('/database/data-integrity-results', { session: null }), 401, 'UNAUTHORIZED')
    expectError(await srv.mgmt.post('/database/check-data-integrity', undefined, { session: null }), 401, 'UNAUTHORIZED')
    expectError(await srv.mgmt.post('/database/snapshot', undefined, { session: null }), 401, 'UNAUTHORIZED')
  })
})

describe('a check of a healthy database', () => {
  it('finds nothing, with start and end times', async () => {
    // as a process stopped in the middle of a check leaves it
    writeFileSync(join(dataDir, 'integrity-check-1.mdb'), 'partial copy')
    const data = await run('check')
    expect(data.results).toEqual([])
    expect(data.error).toBe('')
    expect(data.fixingErrors).toBe(false)
    const res = await srv.mgmt.get('/database/data-integrity-results')
    expect(Date.parse(res.body.data.startTime)).toBe(srv.clock.now())
    expect(Date.parse(res.body.data.endTime)).toBe(srv.clock.now())
    // the check's temporary copy is gone, and the one left behind
    expect(readdirSync(dataDir).filter((f) => f.startsWith('integrity-check-'))).toEqual([])
  })
})

describe('damage done behind the actors\' backs', () => {
  it('is found by a check, each kind with its description, nothing fixed', async () => {
    await breakBehindTheBack((db) => {
      db('identities').removeSync(ids.gone)
      const kept = db('identities').get(ids.kept)
      db('identities').putSync('dup-identity', { ...kept, id: 'dup-identity', roleAttributes: [] })
      db('identities').putSync('lost-policy', { ...kept, id: 'lost-policy', name: 'lost-policy-user', authPolicyId: 'no-such-policy' })
      const admin = [...db('authenticators').getRange()].map((e) => e.value).find((a) => a.method === 'updb' && a.username === 'admin')
      db('authenticators').putSync('ghost-auth', { ...admin, id: 'ghost-auth', identityId: 'ghost', username: 'ghost-user' })
      db('mfas').putSync('ghost', { id: 'ghost-mfa', identityId: 'ghost', isVerified: false, secret: 'AAAA', recoveryCodes: [], lastStep: 0 })
      db('auth-failures').putSync('ghost', 3)
      // a revocation of a deleted identity is no finding; one of an unknown type revokes nothing and goes
      db('revocations').putSync('ghost', { id: 'ghost', type: 'IDENTITY', createdAt: 1, updatedAt: 1, expiresAt: 8_000_000_000_000, tags: {} })
      db('revocations').putSync('bad-revocation', { id: 'bad-revocation', type: 'TOKEN', createdAt: 1, updatedAt: 1, expiresAt: 8_000_000_000_000, tags: {} })
      const session = [...db('api-sessions').getRange()][0]!.value
      db('api-sessions').putSync('f'.repeat(64), { ...session, id: 'ghost-session', tokenHash: 'f'.repeat(64), identityId: 'ghost' })
      // not even loaded at start (their API session is gone): only the stored records are damaged
      db('sessions').putSync('ghost-ss', { id: 'ghost-ss', apiSessionId: 'no-api-session', identityId: ids.kept, serviceId: ids.service, type: 'Dial' })
      db('api-session-certs').putSync('ghost-cert', { id: 'ghost-cert', apiSessionId: 'no-api-session', identityId: ids.kept, fingerprint: 'ab'.repeat(20) })
      db('configs').removeSync(ids.config)
      db('service-config-overrides').putSync(`${ids.kept}/no-service/${ids.type}`, { identityId: ids.kept, serviceId: 'no-service', configId: 'no-config' })
    })
    const data = await run('check')
    const r = data.results
    expect(data.tooManyErrors).toBe(false)
    expect(r.every((x) => !x.fixed)).toBe(true)
    expect(only(r, duplicateName())).toHaveLength(1)
    expect(only(r, `authenticators ghost-auth references identities ghost`)).toHaveLength(1)
    expect(only(r, `references identities ${ids.gone} (identityId)`).map((x) => x.description)).toEqual([expect.stringMatching(/^enrollments /)])
    expect(only(r, `mfas ghost-mfa references identities ghost`)).toHaveLength(1)
    expect(only(r, `auth-failures ghost references identities ghost`)).toHaveLength(1)
    expect(only(r, `revocations bad-revocation has the unknown type 'TOKEN'`)).toHaveLength(1)
    expect(only(r, 'revocations ghost')).toEqual([])
    expect(only(r, `identities lost-policy references auth-policies no-such-policy`)).toHaveLength(1)
    expect(only(r, `api-sessions ghost-session references identities ghost`)).toHaveLength(1)
    expect(only(r, `service-policies ${ids.policy} references identities @${ids.gone} (identityRoles)`)).toHaveLength(1)
    expect(only(r, 'sessions ghost-ss references api-sessions no-api-session')).toHaveLength(1)
    expect(only(r, 'api-session-certs ghost-cert references api-sessions no-api-session')).toHaveLength(1)
    expect(only(r, `services ${ids.service} references configs ${ids.config}`)).toHaveLength(1)
    expect(only(r, `service-config-overrides ${ids.kept}/no-service/${ids.type} references services no-service`)).toHaveLength(1)
    // the name index holds one of the two: not a finding of its own (the duplicate is)
    expect(only(r, 'the name lookup of identities')).toEqual([])
  })

  it('is repaired by a fix where repairable, after a snapshot; a second check finds only what is not', async () => {
    const before = readdirSync(dataDir).filter((f) => f.startsWith('edgeplane.mdb-'))
    const fixed = await run('fix')
    expect(fixed.fixingErrors).toBe(true)
    const snapshots = readdirSync(dataDir).filter((f) => f.startsWith('edgeplane.mdb-') && !before.includes(f))
    expect(snapshots).toHaveLength(1)
    const byFix = (part: string) => only(fixed.results, part).map((x) => x.fixed)
    expect(byFix('share the name')).toEqual([false])
    expect(byFix('authenticators ghost-auth')).toEqual([true])
    expect(byFix('service-policies')).toEqual([true])
    expect(byFix(`services ${ids.service}`)).toEqual([true])
    expect(byFix('api-sessions ghost-session')).toEqual([true])
    expect(byFix('identities lost-policy')).toEqual([true])
    expect(byFix('sessions ghost-ss')).toEqual([true])
    expect(byFix('api-session-certs ghost-cert')).toEqual([true])
    expect(byFix('revocations bad-revocation')).toEqual([true])

    const again = await run('check')
    expect(again.results).toEqual([{ description: `${duplicateName()}, which must be unique: unable to fix automatically`, fixed: false }])
    // the repairs went through the actors: the API shows them
    expect((await srv.mgmt.get(`/services/${ids.service}`)).body.data.configs).toEqual([])
    expect((await srv.mgmt.get(`/service-policies/${ids.policy}`)).body.data.identityRoles).toEqual(['#staff'])
    expect((await srv.mgmt.get('/identities/lost-policy')).body.data.authPolicyId).toBe('default')
    expectError(await srv.mgmt.get('/revocations/bad-revocation'), 404, 'NOT_FOUND')
    expect((await srv.mgmt.get('/revocations/ghost')).body.data.type).toBe('IDENTITY')
    // the snapshot holds the database as it was before the repairs
    const copy = openStoreCopy(join(dataDir, snapshots[0]!))
    expect((copy.db('authenticators').get('ghost-auth') as { identityId: string }).identityId).toBe('ghost')
    await copy.close()
    rmSync(join(dataDir, `${snapshots[0]}-lock`), { force: true })
  })

  it('stays fixed across a restart (the repairs were written through); a second fix changes nothing', async () => {
    await srv.restart()
    const data = await run('check')
    expect(data.results.map((x) => x.description)).toEqual([expect.stringContaining(duplicateName())])
    const second = await run('fix')
    expect(second.results).toEqual([{ description: expect.stringContaining(duplicateName()), fixed: false }])
  })
})

describe('a check over many records', () => {
  it('keeps a service listing answering while it runs, and keeps at most 1000 results', async () => {
    await breakBehindTheBack((db) => {
      for (let i = 0; i < 60_000; i++) db('auth-failures').putSync(`ghost-${String(i).padStart(6, '0')}`, 1)
    })
    expectStatus(await srv.mgmt.post('/database/check-data-integrity'), 202)
    // one run at a time, checks and fixes counted together
    expectError(await srv.mgmt.post('/database/fix-data-integrity'), 429, 'RATE_LIMITED')
    const listing = await srv.mgmt.get('/services')
    expectStatus(listing, 200)
    expect(listing.body.data.map((s: { id: string }) => s.id)).toContain(ids.service)
    const during = await srv.mgmt.get('/database/data-integrity-results')
    expect(during.body.data.inProgress).toBe(true)
    let data = during.body.data
    while (data.inProgress) {
      await Bun.sleep(10)
      data = (await srv.mgmt.get('/database/data-integrity-results')).body.data
    }
    expect(data.tooManyErrors).toBe(true)
    expect(data.results).toHaveLength(1000)
    const fixed = await run('fix')
    expect(fixed.tooManyErrors).toBe(true)
    const clean = await run('check')
    expect(clean.results.map((x) => x.description)).toEqual([expect.stringContaining(duplicateName())])
  }, 60_000)
})

describe('POST /database/snapshot', () => {
  it('writes a snapshot named as the real controller names them, at most one per minute', async () => {
    const named = (ms: number) => {
      const iso = new Date(ms).toISOString()
      return join(dataDir, `edgeplane.mdb-${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`)
    }
    srv.clock.advance(7_000)
    const takenAt = srv.clock.now()
    expectStatus(await srv.mgmt.post('/database/snapshot'), 200)
    const path = named(takenAt)
    const stamp = new Date(takenAt).toISOString()
    expect(path).toEndWith(`edgeplane.mdb-${stamp.slice(0, 10).replaceAll('-', '')}-${stamp.slice(11, 19).replaceAll(':', '')}`)
    expect(existsSync(path)).toBe(true)
    const copy = openStoreCopy(path)
    expect(copy.db('services').get(ids.service)).toMatchObject({ name: 'svc' })
    await copy.close()
    srv.clock.advance(59_000)
    const res = await srv.mgmt.post('/database/snapshot')
    expectError(res, 429, 'RATE_LIMITED')
    expect(res.body.error.cause.message).toBe('may snapshot database at most once per minute')
    srv.clock.advance(1_000)
    expectStatus(await srv.mgmt.post('/database/snapshot'), 200)
    expect(existsSync(named(takenAt + 60_000))).toBe(true)
  })

  it('goes to the snapshot directory when one is set', async () => {
    const snapDir = mkdtempSync(join(tmpdir(), 'edgeplane-snaps-'))
    const other = await startTestServer({ snapshotDir: join(snapDir, 'nested') })
    try {
      expectStatus(await other.mgmt.post('/database/snapshot'), 200)
      const day = new Date(other.clock.now()).toISOString().slice(0, 10).replaceAll('-', '')
      expect(readdirSync(join(snapDir, 'nested'))).toEqual([`edgeplane.mdb-${day}-000000`])
    } finally {
      await other.stop()
      rmSync(snapDir, { recursive: true, force: true })
    }
  })
})
