// The sealing key and sealed values (src/store/store-seal.ts) and the store's sealed MFA records (store-codecs.ts):
// AES-256-GCM under a fresh nonce per value, bound to its context; the key file made once, private, and refused when
// damaged; an MFA record written through the store is sealed on disk, reads back whole, and a read-only opening (no
// key) sees it sealed.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSealKey, readSealKey, sealKeyOf, sealKeyPathOf } from '../../../src/store/store-seal.ts'
import { openStore } from '../../../src/store/store-env.ts'
import { SEAL_KEY_ID } from '../../../src/store/store-migrations.ts'
import type { Mfa } from '../../../src/domain/identity/identity-mfa.ts'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-seal-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('sealed values', () => {
  const key = sealKeyOf(randomBytes(32), '/nowhere/secrets.key')

  it('open to what was sealed, for the same context; each sealing has its own nonce', () => {
    const a = key.seal('JBSWY3DPEHPK3PXP', 'ctx/1')
    const b = key.seal('JBSWY3DPEHPK3PXP', 'ctx/1')
    expect(a).not.toBe(b)
    expect(a.startsWith('v1:')).toBe(true)
    expect(a).not.toContain('JBSWY3DPEHPK3PXP')
    expect([key.open(a, 'ctx/1'), key.open(b, 'ctx/1')]).toEqual(['JBSWY3DPEHPK3PXP', 'JBSWY3DPEHPK3PXP'])
  })

  it('do not open for another context, with another key, altered or malformed', () => {
    const sealed = key.seal('secret', 'ctx/1')
    expect(() => key.open(sealed, 'ctx/2')).toThrow('the sealed value of ctx/2 does not open with the key in /nowhere/secrets.key')
    expect(() => sealKeyOf(randomBytes(32), 'other').open(sealed, 'ctx/1')).toThrow('does not open')
    const bytes = Buffer.from(sealed.slice(3), 'base64')
    bytes[14]! ^= 1
    expect(() => key.open(`v1:${bytes.toString('base64')}`, 'ctx/1')).toThrow('does not open')
    expect(() => key.open('secret', 'ctx/1')).toThrow('the sealed value of ctx/1 is malformed')
  })

  it('a key has 32 bytes, and its id is a hash, not the key', () => {
    expect(() => sealKeyOf(randomBytes(16), 'k')).toThrow('a sealing key has 32 bytes, not 16')
    const bytes = randomBytes(32)
    const k = sealKeyOf(bytes, 'k')
    expect(k.id).toMatch(/^[0-9a-f]{32}$/)
    expect(k.id).not.toContain(bytes.toString('hex').slice(0, 32))
    expect(sealKeyOf(bytes, 'k').id).toBe(k.id)
  })
})

describe('the key file', () => {
  it('is made once, 32 bytes and 0600, and read back as the same key; stale temporaries go', () => {
    const path = sealKeyPathOf(dir)
    expect(readSealKey(path)).toBeNull()
    const made = createSealKey(path)
    expect(statSync(path).size).toBe(32)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readSealKey(path)!.id).toBe(made.id)
    expect(() => createSealKey(path)).toThrow('appeared while the sealing key was being created')
    expect(readdirSync(join(dir, 'pki'))).toEqual(['secrets.key'])
  })

  it('is refused when it holds another number of bytes', () => {
    const path = sealKeyPathOf(dir)
    createSealKey(path)
    writeFileSync(path, randomBytes(33))
    expect(() => readSealKey(path)).toThrow(`${path} (the sealing key) holds 33 bytes, not 32`)
  })
})

describe('MFA records in the store', () => {
  const record: Mfa = {
    id: 'mfa1',
    identityId: 'id1',
    isVerified: true,
    secret: 'JBSWY3DPEHPK3PXPJBSW',
    recoveryCodes: ['ABCDEF', 'GHIJKL'],
    recoveryCodeHashes: [],
    recoveryCodeSalt: '',
    lastTotpStep: 7,
    tags: { a: 'b' },
    createdAt: 1,
    updatedAt: 2,
  }

  it('are written sealed, read back whole, and seen sealed by an opening without the key', async () => {
    const store = await openStore(dir)
    const key = readSealKey(sealKeyPathOf(dir))!
    expect(store.db('meta').get(SEAL_KEY_ID)).toBe(key.id)
    await store.commit([{ db: 'mfas', key: record.identityId, value: record }])
    expect(store.db('mfas').get(record.identityId)).toEqual(record)
    await store.close()

    const readOnly = await openStore(dir, { readOnly: true })
    const stored = readOnly.db('mfas').get(record.identityId) as Record<string, unknown>
    await readOnly.close()
    expect(Object.keys(stored).sort()).toEqual(
      ['createdAt', 'id', 'identityId', 'isVerified', 'lastTotpStep', 'recoveryCodeHashes', 'recoveryCodeSalt', 'sealedRecoveryCodes', 'sealedSecret', 'tags', 'updatedAt'],
    )
    expect(JSON.stringify(stored)).not.toContain(record.secret)
    expect(JSON.stringify(stored)).not.toContain('ABCDEF')
    expect(key.open(stored.sealedSecret as string, 'edgeplane/mfas/id1/mfa1/secret')).toBe(record.secret)

    const again = await openStore(dir)
    expect(again.db('mfas').get(record.identityId)).toEqual(record)
    await again.close()
  })
})
