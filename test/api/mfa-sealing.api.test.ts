// MFA secrets sealed at rest (issue 21, part 3): the store migration 3 → 4 seals the TOTP secrets (and the plain
// recovery codes of a Started enrollment) of an older data directory, keeps its argon2id-hashed recovery codes working
// until they are regenerated, and leaves no secret in the LMDB file, freed pages included; the sealing key
// (pki/secrets.key) is refused by name when it is missing, damaged, open to others or not the store's; a sealed
// secret moved into another identity's record does not open.
// An older data directory is made from a current one: its MFA records are written back in the schema 3 form (plain
// secret, recovery codes as argon2id hashes once verified), its schema version set to 3 and its key file removed.
import { TEST_EPOCH_MS } from '../support/test-epoch.ts'
import { afterAll, describe, expect, it } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { open } from 'lmdb'
import { Secret, TOTP } from 'otpauth'
import { AUTH_MFA_401_OFF_SPEC, expectError, expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'
import { hashRecoveryCodes, newRecoveryCodeSalt } from '../../src/auth/auth-recovery-code.ts'
import { FakeClock } from '../../src/lib/clock.ts'
import { SCHEMA_VERSION, SEAL_KEY_ID } from '../../src/store/store-migrations.ts'

const work = mkdtempSync(join(tmpdir(), 'edgeplane-mfa-sealing-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))
let seq = 0
const freshDir = () => join(work, `data-${++seq}`)
const STEP_MS = 30_000
const keyPath = (dataDir: string) => join(dataDir, 'pki', 'secrets.key')

/** A controller on `dataDir` with one clock for all its starts (so a TOTP step accepted once stays used). */
function controller(dataDir: string) {
  const clock = new FakeClock(TEST_EPOCH_MS)
  return { clock, start: () => startTestServer({ dataDir, clock }) }
}

interface Enrolled {
  id: string
  username: string
  password: string
  secret: string
  recoveryCodes: string[]
}

const totp = (t: TestServer, secret: string) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now() })

async function login(t: TestServer, u: Pick<Enrolled, 'username' | 'password'>): Promise<ApiClient> {
  const res = await t.raw.post('/edge/client/v1/authenticate?method=password', { username: u.username, password: u.password })
  expectStatus(res, 200)
  return t.as(res.body.data.token, 'client')
}

/** A new identity with a password and a Started MFA (`verify` false) or a Verified one. */
async function withMfa(t: TestServer, name: string, verify: boolean): Promise<Enrolled> {
  const id = await t.create('/identities', { name, type: 'User', isAdmin: false })
  const u = { username: `${name}-login`, password: 'sealing-pass-1' }
  expectStatus(await t.mgmt.post('/authenticators', { identityId: id, method: 'updb', ...u }), 201)
  const c = await login(t, u)
  expectStatus(await c.post('/current-identity/mfa', {}), 201)
  const view = (await c.get('/current-identity/mfa')).body.data
  const secret = new URL(view.provisioningUrl).searchParams.get('secret')!
  if (verify) {
    t.clock.advance(STEP_MS)
    expectStatus(await c.post('/current-identity/mfa/verify', { code: totp(t, secret) }), 200)
  }
  return { id, ...u, secret, recoveryCodes: view.recoveryCodes }
}

/**
 * Rewrites the stopped controller's data directory as edgeplane wrote it at schema 3: each MFA record with its plain
 * secret, a Verified one with argon2id hashes of `recoveryCodes` (its codes' text dropped), a Started one with its
 * plain codes; no sealing key id in meta, no key file.
 */
async function downgradeToSchema3(dataDir: string, records: { u: Enrolled; verified: boolean }[]): Promise<void> {
  const env = open({ path: join(dataDir, 'edgeplane.mdb'), encoding: 'json', maxDbs: 64 })
  const mfas = env.openDB<Record<string, unknown>, string>({ name: 'mfas', encoding: 'json' })
  const meta = env.openDB<unknown, string>({ name: 'meta', encoding: 'json' })
  const legacy: { key: string; value: Record<string, unknown> }[] = []
  for (const { u, verified } of records) {
    const { sealedSecret: _s, sealedRecoveryCodes: _c, ...rest } = mfas.get(u.id)!
    const salt = newRecoveryCodeSalt()
    legacy.push({
      key: u.id,
      value: verified
        ? { ...rest, secret: u.secret, recoveryCodes: [], recoveryCodeHashes: await hashRecoveryCodes(u.recoveryCodes, salt), recoveryCodeSalt: salt }
        : { ...rest, secret: u.secret, recoveryCodes: u.recoveryCodes, recoveryCodeHashes: [], recoveryCodeSalt: salt },
    })
  }
  await env.transaction(() => {
    for (const { key, value } of legacy) mfas.put(key, value)
    meta.put('schemaVersion', 3)
    meta.remove(SEAL_KEY_ID)
  })
  await env.close()
  unlinkSync(keyPath(dataDir))
}

/** Whether the LMDB file holds `u`'s secret (base32 or raw bytes) or one of its recovery codes standing alone. */
function fileHoldsSecretsOf(dataDir: string, u: Enrolled): string[] {
  const bytes = readFileSync(join(dataDir, 'edgeplane.mdb'))
  const text = bytes.toString('latin1')
  const found: string[] = []
  if (text.includes(u.secret)) found.push('secret (base32)')
  if (bytes.indexOf(Buffer.from(Secret.fromBase32(u.secret).bytes)) >= 0) found.push('secret (bytes)')
  for (const code of u.recoveryCodes) {
    if (new RegExp(`(?<![A-Za-z0-9+/])${code}(?![A-Za-z0-9+/=])`).test(text)) found.push(`recovery code ${code}`)
  }
  return found
}

async function expectStartRefused(dataDir: string, clock: FakeClock, message: string): Promise<void> {
  let error: unknown
  try {
    const t = await startTestServer({ dataDir, clock })
    await t.stop()
  } catch (e) {
    error = e
  }
  expect(String(error)).toContain(message)
}

describe('migration 3 → 4 of a data directory with MFA records', () => {
  it('seals the secrets: TOTP still verifies, hashed codes still log in (until regenerated), and the file holds no secret', async () => {
    const dataDir = freshDir()
    const { clock, start } = controller(dataDir)
    let t = await start()
    const verified = await withMfa(t, 'legacy-verified', true)
    const started = await withMfa(t, 'legacy-started', false)
    await t.stop()
    await downgradeToSchema3(dataDir, [{ u: verified, verified: true }, { u: started, verified: false }])
    // the older directory holds its secrets in plain text, as edgeplane stored them
    expect(fileHoldsSecretsOf(dataDir, verified)).toContain('secret (base32)')
    expect(fileHoldsSecretsOf(dataDir, started).length).toBeGreaterThan(20)

    t = await start()
    try {
      const raw = open({ path: join(dataDir, 'edgeplane.mdb'), encoding: 'json', maxDbs: 64, readOnly: true })
      expect(raw.openDB({ name: 'meta', encoding: 'json' }).get('schemaVersion')).toBe(SCHEMA_VERSION)
      await raw.close()
      // a copy of the file alone reveals nothing, freed pages included
      expect(fileHoldsSecretsOf(dataDir, verified)).toEqual([])
      expect(fileHoldsSecretsOf(dataDir, started)).toEqual([])
      const key = statSync(keyPath(dataDir))
      expect([key.size, (key.mode & 0o777).toString(8)]).toEqual([32, '600'])

      // the TOTP secret still verifies
      clock.advance(STEP_MS)
      expectStatus(await (await login(t, verified)).post('/authenticate/mfa', { code: totp(t, verified.secret) }), 200)
      // a hashed recovery code still logs in, once
      const partial = await login(t, verified)
      expectStatus(await partial.post('/authenticate/mfa', { code: verified.recoveryCodes[4] }), 200)
      const again = await login(t, verified)
      expectError(await again('POST', '/authenticate/mfa', { body: { code: verified.recoveryCodes[4] }, offSpec: AUTH_MFA_401_OFF_SPEC }), 401, 'MFA_INVALID_TOKEN')
      // their text is gone: the GET answers none until they are regenerated
      clock.advance(STEP_MS)
      const read = await partial.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': totp(t, verified.secret) } })
      expectStatus(read, 200)
      expect(read.body.data.recoveryCodes).toEqual([])
      clock.advance(STEP_MS)
      const regenerated = await partial.post('/current-identity/mfa/recovery-codes', { code: totp(t, verified.secret) })
      expectStatus(regenerated, 200)
      const fresh = regenerated.body.data.recoveryCodes as string[]
      clock.advance(STEP_MS)
      const reread = await partial.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': totp(t, verified.secret) } })
      expect(reread.body.data.recoveryCodes).toEqual(fresh)
      // the old hashed codes are gone with the regeneration, the new ones work
      const after = await login(t, verified)
      expectError(await after('POST', '/authenticate/mfa', { body: { code: verified.recoveryCodes[5] }, offSpec: AUTH_MFA_401_OFF_SPEC }), 401, 'MFA_INVALID_TOKEN')
      expectStatus(await after.post('/authenticate/mfa', { code: fresh[0] }), 200)

      // the Started enrollment keeps its secret and its codes
      const s = await login(t, started)
      expect((await s.get('/current-identity/mfa')).body.data.recoveryCodes).toEqual(started.recoveryCodes)
      clock.advance(STEP_MS)
      expectStatus(await s.post('/current-identity/mfa/verify', { code: totp(t, started.secret) }), 200)
      expectStatus(await (await login(t, started)).post('/authenticate/mfa', { code: started.recoveryCodes[0] }), 200)

      // the integrity check reads the sealed records (from a copy, without the key) and finds nothing wrong
      expectStatus(await t.mgmt.post('/database/check-data-integrity'), 202)
      let integrity = (await t.mgmt.get('/database/data-integrity-results')).body.data
      while (integrity.inProgress) {
        await Bun.sleep(5)
        integrity = (await t.mgmt.get('/database/data-integrity-results')).body.data
      }
      expect([integrity.error, integrity.results]).toEqual(['', []])

      // and all of it survives a restart (the sealed form reads back)
      await t.restart()
      clock.advance(STEP_MS)
      expectStatus(await (await login(t, verified)).post('/authenticate/mfa', { code: totp(t, verified.secret) }), 200)
      expectStatus(await (await login(t, verified)).post('/authenticate/mfa', { code: fresh[1] }), 200)
    } finally {
      await t.stop()
    }
  }, 60_000)
})

describe('the sealing key pki/secrets.key', () => {
  it('is made at the first start and kept; a missing, damaged, foreign or open key stops the start with an error naming it', async () => {
    const dataDir = freshDir()
    const { clock, start } = controller(dataDir)
    let t = await start()
    const u = await withMfa(t, 'key-owner', true)
    await t.stop()
    const path = keyPath(dataDir)
    const key = readFileSync(path)
    t = await start()
    await t.stop()
    expect(readFileSync(path).equals(key)).toBe(true)

    unlinkSync(path)
    await expectStartRefused(dataDir, clock, `${path} is missing, and the store's MFA secrets are sealed with it`)
    writeFileSync(path, key.subarray(0, 16), { mode: 0o600 })
    await expectStartRefused(dataDir, clock, `${path} (the sealing key) holds 16 bytes, not 32`)
    writeFileSync(path, randomBytes(32), { mode: 0o600 })
    await expectStartRefused(dataDir, clock, `${path} is not the key the store's MFA secrets are sealed with`)
    unlinkSync(path)
    mkdirSync(path)
    await expectStartRefused(dataDir, clock, `${path} is not a regular file`)
    rmSync(path, { recursive: true })
    // a start makes the data directory private (with a warning); a key behind a link it cannot, and refuses it
    const outside = join(work, `outside-key-${seq}`)
    writeFileSync(outside, key)
    chmodSync(outside, 0o644)
    symlinkSync(outside, path)
    await expectStartRefused(dataDir, clock, `${path} (the sealing key) has mode 0644: it must be private to its owner`)
    unlinkSync(path)

    // the key put back (open to the group: the start makes it private again, and says so): everything reads again
    writeFileSync(path, key, { mode: 0o640 })
    chmodSync(path, 0o640)
    const log: string[] = []
    t = await startTestServer({ dataDir, clock, log: (line) => log.push(line) })
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(log.some((line) => line.includes(`${path} was open to other users (mode 0640); now 0600`))).toBe(true)
    try {
      clock.advance(STEP_MS)
      expectStatus(await (await login(t, u)).post('/authenticate/mfa', { code: totp(t, u.secret) }), 200)
    } finally {
      await t.stop()
    }
  }, 60_000)

  it('binds each sealed value to its record: a secret moved into another identity\'s MFA record does not open', async () => {
    const dataDir = freshDir()
    const { clock, start } = controller(dataDir)
    const t = await start()
    const a = await withMfa(t, 'moved-from', true)
    const b = await withMfa(t, 'moved-to', true)
    await t.stop()
    const env = open({ path: join(dataDir, 'edgeplane.mdb'), encoding: 'json', maxDbs: 64 })
    const mfas = env.openDB<Record<string, unknown>, string>({ name: 'mfas', encoding: 'json' })
    await mfas.put(b.id, { ...mfas.get(b.id)!, sealedSecret: mfas.get(a.id)!.sealedSecret })
    await env.close()
    await expectStartRefused(dataDir, clock, `the sealed value of edgeplane/mfas/${b.id}/`)
  }, 60_000)
})
