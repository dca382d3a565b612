// Numbered store migrations (src/store/store-migrations.ts): a new store and an older one both end at the current
// schema version, and the 1 → 2 step creates the default auth policy every identity of an older store names.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'lmdb'
import { openStore, storePathOf } from '../../../src/store/store-env.ts'
import { SCHEMA_VERSION } from '../../../src/store/store-migrations.ts'
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
})
