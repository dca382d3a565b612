// Backup and restore (issue 12, "Backup, restore, snapshots"): `edgeplane backup` of a directory a controller is
// writing to gives a consistent archive; a restored directory starts and answers the same lists; keys stay 0600;
// damaged, foreign, newer-schema archives and non-empty targets are refused with nothing left behind; an older
// schema is migrated on restore. The CLI runs as a child process, as an operator runs it beside the controller.
import { TEST_EPOCH_MS } from '../support/test-epoch.ts'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { cpSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'
import tar from 'tar-stream'
import { open } from 'lmdb'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { extractArchive, hashFile, writeArchive, type BackupManifest } from '../../src/operate/operate-archive.ts'
import { FakeClock } from '../../src/lib/clock.ts'
import { randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { openStore } from '../../src/store/store-env.ts'
import { readDataDirStatus, renderDataDirStatus } from '../../src/operate/operate-status.ts'
import { SCHEMA_VERSION } from '../../src/store/store-migrations.ts'
import { CONTROLLER_PKI_FILES } from '../../src/pki/pki-bootstrap.ts'

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const work = mkdtempSync(join(tmpdir(), 'edgeplane-backup-test-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

async function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(['bun', MAIN, ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

/** The names of every item of a Management list, sorted. */
/** Every name of a list, page by page (the writer of the live backup may create more than a page). */
async function namesOf(t: TestServer, path: string): Promise<string[]> {
  const names: string[] = []
  for (let offset = 0; ; offset += 500) {
    const res = await t.mgmt.get(`${path}?limit=500&offset=${offset}`)
    expectStatus(res, 200)
    names.push(...(res.body.data as { name: string }[]).map((x) => x.name))
    if (offset + 500 >= (res.body.meta as { pagination: { totalCount: number } }).pagination.totalCount) break
  }
  return names.sort()
}

/** Tar entries of an archive: name → mode. */
async function tarModes(file: string): Promise<Map<string, number>> {
  const modes = new Map<string, number>()
  const extract = tar.extract()
  const done = pipeline(createReadStream(file), createGunzip(), extract)
  for await (const entry of extract) {
    modes.set(entry.header.name, entry.header.mode)
    entry.resume()
  }
  await done
  return modes
}

/** The TOTP code of `secret` at the clock's now. */
const totpAt = (secret: string, clock: FakeClock) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now() })

let seq = 0
const fresh = (what: string) => join(work, `${what}-${++seq}`)

describe('edgeplane backup of a running controller', () => {
  let t: TestServer
  const dataDir = fresh('live')
  beforeAll(async () => {
    t = await startTestServer({ dataDir })
    for (let i = 0; i < 5; i++) {
      await t.create('/services', { name: `svc-${i}`, encryptionRequired: true, roleAttributes: ['web'] })
      await t.create('/identities', { name: `before-${i}`, type: 'User', isAdmin: false, roleAttributes: ['staff'] })
    }
    await t.create('/service-policies', { name: 'staff-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#web'] })
  }, 30_000)
  afterAll(async () => {
    await t.stop()
  }, 30_000)

  it('copies a consistent state under writes; the restored directory starts and answers the same lists', async () => {
    const archive = fresh('live.tar.gz')
    let writing = true
    let written = 0
    const writer = (async () => {
      while (writing) {
        const res = await t.mgmt.post('/identities', { name: `during-${written}`, type: 'User', isAdmin: false })
        expectStatus(res, 201)
        written++
      }
    })()
    const backup = await cli(['backup', '--data', dataDir, '--out', archive])
    writing = false
    await writer
    expect(backup.stderr).toBe('')
    expect(backup.code).toBe(0)
    expect(backup.stdout).toContain('backup written to')
    expect(written).toBeGreaterThan(0)
    expect(statSync(archive).mode & 0o777).toBe(0o600)

    const modes = await tarModes(archive)
    expect([...modes.keys()][0]).toBe('manifest.json')
    for (const f of Object.values(CONTROLLER_PKI_FILES)) expect(modes.get(`pki/${f}`)).toBe(0o600)
    expect(modes.get('edgeplane.mdb')).toBe(0o600)

    const target = fresh('restored')
    const restore = await cli(['restore', '--from', archive, '--data', target])
    expect(restore.stderr).toBe('')
    expect(restore.code).toBe(0)
    expect(restore.stdout).toMatch(/files verified against their SHA-256/)
    expect(restore.stdout).toMatch(/\n {2}services: 5\n/)
    expect(statSync(target).mode & 0o777).toBe(0o700)
    for (const f of [CONTROLLER_PKI_FILES.rootKey, CONTROLLER_PKI_FILES.intermediateKey, CONTROLLER_PKI_FILES.serverKey]) {
      expect(statSync(join(target, 'pki', f)).mode & 0o777).toBe(0o600)
    }

    const original = await namesOf(t, '/identities')
    const r = await startTestServer({ dataDir: target })
    try {
      expect(await namesOf(r, '/services')).toEqual(await namesOf(t, '/services'))
      expect(await namesOf(r, '/service-policies')).toEqual(['staff-dial'])
      const restored = await namesOf(r, '/identities')
      // a prefix of the writes in time: every identity of before the backup, a run of `during-N` from 0, none unknown
      for (const name of restored) expect(original).toContain(name)
      for (let i = 0; i < 5; i++) expect(restored).toContain(`before-${i}`)
      const during = restored.filter((n) => n.startsWith('during-')).map((n) => Number(n.slice(7))).sort((a, b) => a - b)
      expect(during).toEqual(during.map((_, i) => i))
      // the restored controller serves the same service list to a staff identity as the original
      const probe = (await r.mgmt.get('/identities?filter=name%3D%22before-0%22')).body.data[0].id as string
      const a = await r.mgmt.get(`/identities/${probe}/services?limit=500`)
      const b = await t.mgmt.get(`/identities/${probe}/services?limit=500`)
      expectStatus(a, 200)
      expect((a.body.data as { name: string }[]).map((s) => s.name).sort()).toEqual((b.body.data as { name: string }[]).map((s) => s.name).sort())
      // the same CA: certificates of the original are trusted by the restored one
      expect(r.caPem).toBe(t.caPem)
    } finally {
      await r.stop()
    }
  }, 60_000)

  it('status --url reports version, uptime, counts and health through an admin login; --data reads beside it', async () => {
    const caFile = fresh('ca.pem')
    writeFileSync(caFile, t.caPem)
    const s = await cli(['status', '--url', t.url, '--ca', caFile, '--json'], { EDGEPLANE_USERNAME: 'admin', EDGEPLANE_PASSWORD: 'admin-pass-1' })
    expect(s.stderr).toBe('')
    const status = JSON.parse(s.stdout)
    expect(status.version).toBe('0.1.0')
    expect(status.uptimeSeconds).toBeGreaterThanOrEqual(0)
    expect(status.counts.services).toBe(5)
    expect(status.counts.identities).toBeGreaterThanOrEqual(6)
    expect(s.code).toBe(status.health.healthy ? 0 : 1)
    const offline = await cli(['status', '--data', dataDir, '--json'])
    expect(offline.code).toBe(0)
    expect(JSON.parse(offline.stdout).counts).toMatchObject({ services: 5, 'service-policies': 1 })
    const refused = await cli(['status', '--url', t.url, '--ca', caFile, '--username', 'admin', '--password', 'wrong-pass'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('login as admin')
  }, 30_000)

  it('GET /edgeplane-status answers start time and uptime to an admin', async () => {
    const res = await t.mgmt.get('/edgeplane-status')
    expectStatus(res, 200)
    expect(res.body.data.uptimeSeconds).toBe(0)
    t.clock.advance(90_000)
    expect((await t.mgmt.get('/edgeplane-status')).body.data.uptimeSeconds).toBe(90)
    const anon = await t.raw.get('/edge/management/v1/edgeplane-status')
    expect(anon.status).toBe(401)
  }, 30_000)
})

describe('edgeplane backup of a stopped directory, and what restore refuses', () => {
  const dataDir = fresh('stopped')
  let archive: string
  let lists: { services: string[]; identities: string[] }
  beforeAll(async () => {
    const t = await startTestServer({ dataDir })
    await t.create('/services', { name: 'kept', encryptionRequired: true })
    await t.create('/identities', { name: 'kept-user', type: 'User', isAdmin: false })
    lists = { services: await namesOf(t, '/services'), identities: await namesOf(t, '/identities') }
    await t.stop()
    archive = fresh('stopped.tar.gz')
    const r = await cli(['backup', '--data', dataDir, '--out', archive])
    expect(r.code).toBe(0)
  }, 30_000)

  it('restores a backup of a stopped directory that starts with the same lists; status --data reads it', async () => {
    const target = fresh('restored-stopped')
    mkdirSync(target) // an empty directory is a fine target
    const r = await cli(['restore', '--from', archive, '--data', target])
    expect(r.code).toBe(0)
    const s = await cli(['status', '--data', target])
    expect(s.code).toBe(0)
    expect(s.stdout).toContain(`schema version: ${SCHEMA_VERSION}`)
    expect(s.stdout).toMatch(/\n {2}services: 1\n/)
    expect(s.stdout).toMatch(/server\.cert\.pem .* days left/)
    expect(s.stdout).toContain('health: ok')
    const t = await startTestServer({ dataDir: target })
    try {
      expect(await namesOf(t, '/services')).toEqual(lists.services)
      expect(await namesOf(t, '/identities')).toEqual(lists.identities)
    } finally {
      await t.stop()
    }
  }, 30_000)

  it('refuses a backup whose records fail the integrity check (an authenticator of no identity), leaving no target', async () => {
    const damaged = fresh('damaged-data')
    cpSync(dataDir, damaged, { recursive: true })
    const env = open({ path: join(damaged, 'edgeplane.mdb'), encoding: 'json', maxDbs: 64 })
    const authenticators = env.openDB<Record<string, unknown>, string>({ name: 'authenticators', encoding: 'json' })
    const some = [...authenticators.getRange({ limit: 1 })][0]
    await authenticators.put('orphan-authenticator', { ...some.value, id: 'orphan-authenticator', identityId: 'no-such-identity' })
    await env.close()
    const damagedArchive = fresh('damaged.tar.gz')
    expect((await cli(['backup', '--data', damaged, '--out', damagedArchive])).code).toBe(0)
    const target = fresh('restored-damaged')
    const r = await cli(['restore', '--from', damagedArchive, '--data', target])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('fails the integrity check')
    expect(r.stderr).toContain('no-such-identity')
    expect(existsSync(target)).toBe(false)
  }, 30_000)

  it('status warns of a certificate expiring within 30 days', async () => {
    const day = 24 * 3600_000
    const serverCert = (await readDataDirStatus(dataDir, 0)).certificates.find((c) => c.file === CONTROLLER_PKI_FILES.serverCert)
    const notAfter = Date.parse(serverCert?.notAfter ?? '')
    expect((await readDataDirStatus(dataDir, notAfter - 40 * day)).warnings).toEqual([])
    const s = await readDataDirStatus(dataDir, notAfter - 10 * day)
    expect(s.warnings).toEqual([`${CONTROLLER_PKI_FILES.serverCert} (${serverCert?.subject}) expires in 10 days`])
    expect(renderDataDirStatus(s)).toContain('health: 1 warning(s)')
    expect((await readDataDirStatus(dataDir, notAfter + day)).warnings[0]).toContain('has expired')
  })

  it('never overwrites an existing archive', async () => {
    const r = await cli(['backup', '--data', dataDir, '--out', archive])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('exists already')
  }, 30_000)

  it('refuses a non-empty target and leaves it as it was', async () => {
    const target = fresh('occupied')
    mkdirSync(target)
    writeFileSync(join(target, 'notes.txt'), 'mine')
    const r = await cli(['restore', '--from', archive, '--data', target])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('not an empty directory')
    expect(readFileSync(join(target, 'notes.txt'), 'utf8')).toBe('mine')
    expect(existsSync(join(target, 'edgeplane.mdb'))).toBe(false)
  }, 30_000)

  it('refuses a damaged archive and leaves no target behind', async () => {
    const bytes = readFileSync(archive)
    for (let i = Math.floor(bytes.length / 2); i < Math.floor(bytes.length / 2) + 64; i++) bytes[i] ^= 0xff
    const damaged = fresh('damaged.tar.gz')
    writeFileSync(damaged, bytes)
    const target = fresh('from-damaged')
    const r = await cli(['restore', '--from', damaged, '--data', target])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/damaged|does not match/)
    expect(existsSync(target)).toBe(false)
  }, 30_000)

  /** The archive's manifest and files, unpacked into a directory of their own. */
  async function unpack(): Promise<{ manifest: BackupManifest; dir: string }> {
    const dir = fresh('unpacked')
    const manifest = await extractArchive(archive, dir, () => {})
    return { manifest, dir }
  }

  it('refuses a file whose SHA-256 differs from the manifest', async () => {
    const { manifest, dir } = await unpack()
    const key = `pki/${CONTROLLER_PKI_FILES.serverKey}`
    const text = readFileSync(join(dir, key))
    text[40] = text[40] === 0x41 ? 0x42 : 0x41
    writeFileSync(join(dir, key), text)
    const forged = fresh('forged.tar.gz')
    await writeArchive(forged, manifest, dir)
    const target = fresh('from-forged')
    const r = await cli(['restore', '--from', forged, '--data', target])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${key} does not match the manifest`)
    expect(existsSync(target)).toBe(false)
  }, 30_000)

  it('refuses a backup of a newer schema version with a clear message, before writing anything', async () => {
    const { manifest, dir } = await unpack()
    const newer = fresh('newer.tar.gz')
    await writeArchive(newer, { ...manifest, schemaVersion: SCHEMA_VERSION + 1, edgeplaneVersion: '9.9.9' }, dir)
    const target = fresh('from-newer')
    const r = await cli(['restore', '--from', newer, '--data', target])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`schema version ${SCHEMA_VERSION + 1}`)
    expect(r.stderr).toContain(`understands up to ${SCHEMA_VERSION}: restore it with edgeplane 9.9.9 or newer`)
    expect(existsSync(target)).toBe(false)
  }, 30_000)

  it('refuses an archive without the controller PKI, and one that is not an edgeplane backup', async () => {
    const { manifest, dir } = await unpack()
    const noPki = fresh('no-pki.tar.gz')
    await writeArchive(noPki, { ...manifest, files: manifest.files.filter((f) => f.path !== `pki/${CONTROLLER_PKI_FILES.rootKey}`) }, dir)
    const r = await cli(['restore', '--from', noPki, '--data', fresh('from-no-pki')])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`lacks pki/${CONTROLLER_PKI_FILES.rootKey}`)
    const notTar = fresh('not-a-backup.tar.gz')
    writeFileSync(notTar, 'hello')
    const r2 = await cli(['restore', '--from', notTar, '--data', fresh('from-not-tar')])
    expect(r2.code).toBe(1)
    expect(r2.stderr).toContain('damaged or not a gzipped tar')
  }, 30_000)

  it('refuses a manifest naming a path outside the data directory, writing nothing there', async () => {
    const { manifest, dir } = await unpack()
    writeFileSync(join(dir, '..', 'outside.txt'), 'escape')
    const escaping = fresh('escaping.tar.gz')
    const extra = { path: '../outside.txt', size: 6, sha256: 'a'.repeat(64), mode: '0600' }
    await writeArchive(escaping, { ...manifest, files: [...manifest.files, extra] }, dir)
    const target = fresh('from-escaping')
    const r = await cli(['restore', '--from', escaping, '--data', target])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('manifest.json: /files/')
    expect(existsSync(target)).toBe(false)
  }, 30_000)

  it('exits 2 on a missing flag', async () => {
    expect((await cli(['backup', '--data', dataDir])).code).toBe(2)
    expect((await cli(['restore', '--from', archive])).code).toBe(2)
    expect((await cli(['status'])).code).toBe(2)
  }, 30_000)
})

describe('restore of a backup of an older schema version', () => {
  it('runs the migrations: a version 1 store gets the default auth policy', async () => {
    const dataDir = fresh('v1')
    const t = await startTestServer({ dataDir })
    await t.stop()
    const store = await openStore(dataDir)
    await store.commit([
      { db: 'meta', key: 'schemaVersion', value: 1 },
      { db: 'auth-policies', key: 'default', value: undefined },
    ])
    await store.close()
    const archive = fresh('v1.tar.gz')
    expect((await cli(['backup', '--data', dataDir, '--out', archive])).code).toBe(0)
    const target = fresh('v1-restored')
    const r = await cli(['restore', '--from', archive, '--data', target])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('schema version 1)')
    expect(r.stdout).toContain(`note: migrated the store from schema version 1 to ${SCHEMA_VERSION}`)
    const restored = await openStore(target, { readOnly: true })
    try {
      expect(restored.db('meta').get('schemaVersion')).toBe(SCHEMA_VERSION)
      expect(restored.db('auth-policies').get('default')).toBeDefined()
    } finally {
      await restored.close()
    }
  }, 30_000)
})

describe('backup and restore carry the sealing key of the MFA secrets', () => {
  it('the archive holds pki/secrets.key (0600); a restored controller verifies TOTP codes and reads the recovery codes', async () => {
    const dataDir = fresh('mfa')
    const clock = new FakeClock(TEST_EPOCH_MS)
    const t = await startTestServer({ dataDir, clock })
    const archive = fresh('mfa.tar.gz')
    const u = { username: 'mfa-backup-login', password: 'mfa-backup-pass' }
    let secret: string
    let recoveryCodes: string[]
    try {
      const id = await t.create('/identities', { name: 'mfa-backup', type: 'User', isAdmin: false })
      expectStatus(await t.mgmt.post('/authenticators', { identityId: id, method: 'updb', ...u }), 201)
      const c = t.as(await t.login(u.username, u.password, 'client'), 'client')
      expectStatus(await c.post('/current-identity/mfa', {}), 201)
      const view = (await c.get('/current-identity/mfa')).body.data
      secret = new URL(view.provisioningUrl).searchParams.get('secret')!
      recoveryCodes = view.recoveryCodes
      clock.advance(30_000)
      expectStatus(await c.post('/current-identity/mfa/verify', { code: totpAt(secret, clock) }), 200)
      const backup = await cli(['backup', '--data', dataDir, '--out', archive])
      expect([backup.code, backup.stderr]).toEqual([0, ''])
    } finally {
      await t.stop()
    }
    expect((await tarModes(archive)).get('pki/secrets.key')).toBe(0o600)

    const target = fresh('mfa-restored')
    const restore = await cli(['restore', '--from', archive, '--data', target])
    expect([restore.code, restore.stderr]).toEqual([0, ''])
    expect(readFileSync(join(target, 'pki', 'secrets.key')).equals(readFileSync(join(dataDir, 'pki', 'secrets.key')))).toBe(true)
    expect(statSync(join(target, 'pki', 'secrets.key')).mode & 0o777).toBe(0o600)
    const r = await startTestServer({ dataDir: target, clock })
    try {
      clock.advance(30_000)
      const partial = r.as(await r.login(u.username, u.password, 'client'), 'client')
      expectStatus(await partial.post('/authenticate/mfa', { code: totpAt(secret, clock) }), 200)
      clock.advance(30_000)
      const read = await partial.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': totpAt(secret, clock) } })
      expectStatus(read, 200)
      expect(read.body.data.recoveryCodes).toEqual(recoveryCodes)
    } finally {
      await r.stop()
    }

    // a backup whose key is not the store's is refused, and nothing is left of it
    const dir = fresh('mfa-unpacked')
    const manifest = await extractArchive(archive, dir, () => {})
    writeFileSync(join(dir, 'pki', 'secrets.key'), randomBytes(32))
    const { size, sha256 } = await hashFile(join(dir, 'pki', 'secrets.key'))
    const foreign = fresh('mfa-foreign-key.tar.gz')
    await writeArchive(foreign, { ...manifest, files: manifest.files.map((f) => (f.path === 'pki/secrets.key' ? { ...f, size, sha256 } : f)) }, dir)
    const refusedTarget = fresh('mfa-from-foreign-key')
    const refused = await cli(['restore', '--from', foreign, '--data', refusedTarget])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("is not the key the store's MFA secrets are sealed with")
    expect(existsSync(refusedTarget)).toBe(false)

    // and one without the key (schema 4 on) is refused from its manifest
    const keyless = fresh('mfa-keyless.tar.gz')
    await writeArchive(keyless, { ...manifest, files: manifest.files.filter((f) => f.path !== 'pki/secrets.key') }, dir)
    const r2 = await cli(['restore', '--from', keyless, '--data', fresh('mfa-from-keyless')])
    expect(r2.code).toBe(1)
    expect(r2.stderr).toContain('lacks pki/secrets.key')
  }, 60_000)
})
