/**
 * Legacy: MFA records verified before schema 4 hold their recovery codes only as hashes (newer ones hold them sealed,
 * domain/identity/identity-mfa-stored.ts). A code has 30 bits, so a fast hash would fall to an offline search of a
 * stolen database; each was hashed with argon2id under a salt its MFA record's codes share, so checking a code costs
 * one hash, however many codes are left. Such hashes keep working until the identity regenerates its codes.
 */
import { randomBytes } from 'node:crypto'
import { Algorithm, hashRaw } from '@node-rs/argon2'

/** Lighter than passwords' (ARGON2_PARAMS): a regeneration hashes 20 codes in one request. */
const RECOVERY_ARGON2 = { algorithm: Algorithm.Argon2id, memoryCost: 4096, timeCost: 2, parallelism: 1, outputLen: 32 } as const

/** A fresh salt for a record's recovery codes, base64. */
export function newRecoveryCodeSalt(): string {
  return randomBytes(16).toString('base64')
}

/** The stored form of a recovery code: argon2id under `salt` (base64), lowercase hex. */
export async function hashRecoveryCode(code: string, salt: string): Promise<string> {
  return (await hashRaw(code, { ...RECOVERY_ARGON2, salt: Buffer.from(salt, 'base64') })).toString('hex')
}

/** The hashes of `codes` under `salt`, in order. */
export function hashRecoveryCodes(codes: readonly string[], salt: string): Promise<string[]> {
  return Promise.all(codes.map((c) => hashRecoveryCode(c, salt)))
}
