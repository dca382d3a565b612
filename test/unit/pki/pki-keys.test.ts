/** src/pki/pki-keys.ts: key generation, PKCS#8/SPKI export and import, EC P-256/P-384 and RSA. */
import { describe, expect, it } from 'bun:test'
import { decodePem, encodePem } from '../../../src/lib/pem.ts'
import {
  exportPrivateKeyPem,
  exportPublicKeyPem,
  exportPublicKeySpki,
  generateKeyPair,
  importPrivateKeyPem,
  importPublicKeyPem,
  importPublicKeySpki,
  isKeyPairOf,
  publicKeyFromPrivateKey,
  signingHashFor,
  toPublicKeyAlgorithm,
} from '../../../src/pki/pki-keys.ts'
import { hasOpenssl, runOpenssl } from '../../support/pki.ts'

const p256 = await generateKeyPair()
const p384 = await generateKeyPair('ec-p384')
const rsa = await generateKeyPair('rsa-2048')

describe('generateKeyPair', () => {
  it('makes an extractable ECDSA P-256 pair by default', () => {
    expect(p256.privateKey.algorithm).toMatchObject({ name: 'ECDSA', namedCurve: 'P-256' })
    expect(p256.privateKey.extractable).toBe(true)
    expect(p256.privateKey.usages).toContain('sign')
  })

  it('makes P-384 and RSA 2048 pairs on request', () => {
    expect(p384.privateKey.algorithm).toMatchObject({ namedCurve: 'P-384' })
    expect(rsa.privateKey.algorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048 })
  })
})

describe('exportPrivateKeyPem and importPrivateKeyPem', () => {
  for (const [name, pair] of [['P-256', p256], ['P-384', p384], ['RSA', rsa]] as const) {
    it(`round-trips a ${name} key through PKCS#8 PEM`, async () => {
      const pem = await exportPrivateKeyPem(pair.privateKey)
      expect(decodePem(pem)[0].type).toBe('PRIVATE KEY')
      const back = await importPrivateKeyPem(pem)
      expect(back.algorithm.name).toBe(pair.privateKey.algorithm.name)
      expect(await isKeyPairOf(back, await exportPublicKeySpki(pair.publicKey))).toBe(true)
    })
  }

  it('rejects text with no private key block', async () => {
    await expect(importPrivateKeyPem('nothing here')).rejects.toThrow('no PRIVATE KEY')
    await expect(importPrivateKeyPem(encodePem('CERTIFICATE', new Uint8Array([1])))).rejects.toThrow('no PRIVATE KEY')
  })

  it('rejects an encrypted private key', async () => {
    await expect(importPrivateKeyPem(encodePem('ENCRYPTED PRIVATE KEY', new Uint8Array([48, 0])))).rejects.toThrow('encrypted')
  })

  it('rejects a PRIVATE KEY block whose DER is garbage', async () => {
    await expect(importPrivateKeyPem(encodePem('PRIVATE KEY', new Uint8Array([1, 2, 3])))).rejects.toThrow('malformed')
  })

  it.skipIf(!hasOpenssl)('imports the legacy SEC1 and PKCS#1 keys openssl writes', async () => {
    const ec = await runOpenssl(['ecparam', '-name', 'secp384r1', '-genkey', '-noout'])
    expect(decodePem(ec.stdout)[0].type).toBe('EC PRIVATE KEY')
    expect((await importPrivateKeyPem(ec.stdout)).algorithm).toMatchObject({ name: 'ECDSA', namedCurve: 'P-384' })
    const pkcs1 = await runOpenssl(['rsa', '-traditional'], await exportPrivateKeyPem(rsa.privateKey))
    expect(decodePem(pkcs1.stdout)[0].type).toBe('RSA PRIVATE KEY')
    const imported = await importPrivateKeyPem(pkcs1.stdout)
    expect(await isKeyPairOf(imported, await exportPublicKeySpki(rsa.publicKey))).toBe(true)
  })

  it.skipIf(!hasOpenssl)('writes PKCS#8 that openssl reads', async () => {
    const out = await runOpenssl(['pkey', '-noout', '-text'], await exportPrivateKeyPem(p256.privateKey))
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('P-256')
  })
})

describe('public keys', () => {
  it('round-trips SPKI DER and PEM for EC and RSA keys', async () => {
    for (const pair of [p256, p384, rsa]) {
      const spki = await exportPublicKeySpki(pair.publicKey)
      expect(await exportPublicKeySpki(await importPublicKeySpki(spki))).toEqual(spki)
      const pem = await exportPublicKeyPem(pair.publicKey)
      expect(await exportPublicKeySpki(await importPublicKeyPem(pem))).toEqual(spki)
    }
  })

  it('derives the public key from a private key', async () => {
    for (const pair of [p256, rsa]) {
      const derived = await publicKeyFromPrivateKey(pair.privateKey)
      expect(await exportPublicKeySpki(derived)).toEqual(await exportPublicKeySpki(pair.publicKey))
    }
  })

  it('names the algorithm of an SPKI and says unknown for garbage', async () => {
    expect(toPublicKeyAlgorithm(await exportPublicKeySpki(p256.publicKey))).toBe('ec-p256')
    expect(toPublicKeyAlgorithm(await exportPublicKeySpki(p384.publicKey))).toBe('ec-p384')
    expect(toPublicKeyAlgorithm(await exportPublicKeySpki(rsa.publicKey))).toBe('rsa')
    expect(toPublicKeyAlgorithm(new Uint8Array([1, 2, 3]))).toBe('unknown')
  })
})

describe('isKeyPairOf', () => {
  it('is true for the two halves of a pair and false across pairs or algorithms', async () => {
    const other = await generateKeyPair()
    expect(await isKeyPairOf(p256.privateKey, await exportPublicKeySpki(p256.publicKey))).toBe(true)
    expect(await isKeyPairOf(p256.privateKey, await exportPublicKeySpki(other.publicKey))).toBe(false)
    expect(await isKeyPairOf(p256.privateKey, await exportPublicKeySpki(rsa.publicKey))).toBe(false)
  })
})

describe('signingHashFor', () => {
  it('matches the hash to the key: SHA-384 for P-384, SHA-256 for P-256 and RSA', () => {
    expect(signingHashFor(p256.privateKey)).toBe('SHA-256')
    expect(signingHashFor(p384.privateKey)).toBe('SHA-384')
    expect(signingHashFor(rsa.privateKey)).toBe('SHA-256')
  })
})
