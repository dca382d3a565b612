// Numbered store migrations (src/store/store-migrations.ts): a new store and an older one both end at the current
// schema version, the 1 → 2 step creates the default auth policy every identity of an older store names, the 2 → 3
// step stores identities compact, and the 3 → 4 step seals the MFA secrets.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'lmdb'
import { openStore, storePathOf } from '../../../src/store/store-env.ts'
import { COMPACT_PENDING, SCHEMA_VERSION, SEAL_KEY_ID } from '../../../src/store/store-migrations.ts'
import { readSealKey, sealKeyPathOf } from '../../../src/store/store-seal.ts'
import { countRecords } from '../../../src/store/store-stats.ts'
import { DEFAULT_AUTH_POLICY_RULES } from '../../../src/domain/identity/identity-auth-policy.ts'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-migrate-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('store migrations', () => {
  it('a new store gets the current version and the default auth policy, stamped with the given time', async () => {
    const store = await openStore(dir, { now: 1234 })
    expect(store.db('meta').get('schemaVersion')).toBe(SCHEMA_VERSION)
    expect(store.db('auth-policies').get('default')).toEqual({ ...DEFAULT_AUTH_POLICY_RULES, name: 'Default', tags: {}, createdAt: 1234, updatedAt: 1234 })
    await store.close()
  })

  it('a version 1 store (before auth policies were stored) gets the default policy; an existing one is kept', async () => {
    const first = await openStore(dir, { now: 1 })
    await first.commit([
      { db: 'meta', key: 'schemaVersion', value: 1 },
      { db: 'auth-policies', key: 'default', value: undefined },
    ])
    await first.close()
    const upgraded = await openStore(dir, { now: 2 })
    expect(upgraded.db('meta').get('schemaVersion')).toBe(SCHEMA_VERSION)
    expect((upgraded.db('auth-policies').get('default') as { createdAt: number }).createdAt).toBe(2)
    await upgraded.commit([
      { db: 'meta', key: 'schemaVersion', value: 1 },
      { db: 'auth-policies', key: 'default', value: { ...DEFAULT_AUTH_POLICY_RULES, name: 'Site default', tags: {}, createdAt: 2, updatedAt: 2 } },
    ])
    await upgraded.close()
    const again = await openStore(dir, { now: 3 })
    expect((again.db('auth-policies').get('default') as { name: string }).name).toBe('Site default')
    await again.close()
  })

  it('a version 2 store (identities stored whole) gets its identities rewritten compact; they read back equal', async () => {
    const whole = {
      id: 'i1', name: 'old', typeId: 'Default', isAdmin: false, isDefaultAdmin: false, roleAttributes: ['a'], externalId: null,
      authPolicyId: 'default', appData: null, tags: {}, defaultHostingCost: 0, defaultHostingPrecedence: 'default',
      serviceHostingCosts: {}, serviceHostingPrecedences: {}, envInfo: { os: 'linux' }, sdkInfo: {}, disabledAt: null,
      disabledUntil: null, createdAt: 5, updatedAt: 6,
    }
    const first = await openStore(dir, { now: 1 })
    await first.close()
    // written as an edgeplane of schema version 2 wrote it: plain JSON, every member
    const raw = open({ path: storePathOf(dir), maxDbs: 64, encoding: 'json' })
    const rawIdentities = raw.openDB({ name: 'identities', encoding: 'json' })
    await raw.transaction(() => {
      rawIdentities.put('i1', whole)
      raw.openDB({ name: 'meta', encoding: 'json' }).put('schemaVersion', 2)
    })
    await raw.close()
    const upgraded = await openStore(dir, { now: 2 })
    expect(upgraded.db('meta').get('schemaVersion')).toBe(SCHEMA_VERSION)
    expect(upgraded.db('identities').get('i1')).toEqual(whole)
    await upgraded.close()
    const after = open({ path: storePathOf(dir), maxDbs: 64, encoding: 'json', readOnly: true })
    expect(after.openDB({ name: 'identities', encoding: 'json' }).get('i1')).toEqual({ id: 'i1', name: 'old', roleAttributes: ['a'], envInfo: { os: 'linux' }, createdAt: 5, updatedAt: 6 })
    await after.close()
  })

  it('a version 3 store (MFA secrets in plain text, no key) gets a key, its MFA records sealed and the file compacted; they read back equal', async () => {
    const plain = {
      id: 'm1', identityId: 'i1', isVerified: false, secret: 'PLAINSECRETBASE32', recoveryCodes: ['QWERTY', 'ASDFGH'],
      recoveryCodeHashes: [], recoveryCodeSalt: 'c2FsdA==', lastTotpStep: null, tags: {}, createdAt: 5, updatedAt: 6,
    }
    const first = await openStore(dir, { now: 1 })
    await first.close()
    rmSync(sealKeyPathOf(dir))
    // written as an edgeplane of schema version 3 wrote it: plain JSON, no key id
    const raw = open({ path: storePathOf(dir), maxDbs: 64, encoding: 'json' })
    await raw.transaction(() => {
      raw.openDB({ name: 'mfas', encoding: 'json' }).put('i1', plain)
      const meta = raw.openDB({ name: 'meta', encoding: 'json' })
      meta.put('schemaVersion', 3)
      meta.remove(SEAL_KEY_ID)
    })
    await raw.close()
    expect(readFileSync(storePathOf(dir)).includes('PLAINSECRETBASE32')).toBe(true)

    const upgraded = await openStore(dir, { now: 2 })
    const key = readSealKey(sealKeyPathOf(dir))!
    expect(upgraded.db('meta').get('schemaVersion')).toBe(SCHEMA_VERSION)
    expect(upgraded.db('meta').get(SEAL_KEY_ID)).toBe(key.id)
    expect(upgraded.db('mfas').get('i1')).toEqual(plain)
    await upgraded.close()
    const file = readFileSync(storePathOf(dir))
    for (const secret of ['PLAINSECRETBASE32', 'QWERTY', 'ASDFGH']) expect(file.includes(secret)).toBe(false)
    expect(readdirSync(dir).filter((n) => n.includes('compact'))).toEqual([])
    const after = await openStore(dir, { now: 3 })
    expect(after.db('meta').get(COMPACT_PENDING)).toBeUndefined()
    await after.close()
  })

  it('a store marked for compaction (a crash after the sealing migration, before compacting) is compacted at the next opening', async () => {
    const first = await openStore(dir, { now: 1 })
    await first.commit([{ db: 'configs', key: 'c1', value: { note: 'FREED-PAGE-MARKER' } }])
    await first.commit([{ db: 'configs', key: 'c1' }, { db: 'meta', key: COMPACT_PENDING, value: true }])
    await first.close()
    expect(readFileSync(storePathOf(dir)).includes('FREED-PAGE-MARKER')).toBe(true)
    const again = await openStore(dir, { now: 2 })
    expect(again.db('meta').get(COMPACT_PENDING)).toBeUndefined()
    await again.close()
    expect(readFileSync(storePathOf(dir)).includes('FREED-PAGE-MARKER')).toBe(false)
  })
  it('a store made before the revocations sub-db opens: read-only it counts none, the writable open adds it empty', async () => {
    const first = await openStore(dir, { now: 1 })
    await first.commit([{ db: 'revocations', key: 'r1', value: { id: 'r1' } }])
    await first.close()
    // as an edgeplane before revocations left it: no such sub-db in the file
    const raw = open({ path: storePathOf(dir), maxDbs: 64, encoding: 'json' })
    await raw.openDB({ name: 'revocations', encoding: 'json' }).drop()
    await raw.close()
    const readOnly = await openStore(dir, { readOnly: true })
    expect(readOnly.has('revocations')).toBe(false)
    expect(countRecords(readOnly).revocations).toBe(0)
    await readOnly.close()
    const store = await openStore(dir, { now: 2 })
    expect(store.db('meta').get('schemaVersion')).toBe(SCHEMA_VERSION)
    expect(store.db('revocations').getKeysCount()).toBe(0)
    await store.commit([{ db: 'revocations', key: 'r2', value: { id: 'r2' } }])
    expect(store.db('revocations').get('r2')).toEqual({ id: 'r2' })
    await store.close()
  })
})

