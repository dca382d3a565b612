/**
 * MFA records as stored (schema 4): the TOTP secret and the recovery codes sealed (store/store-seal.ts), everything
 * else as it is. Each sealed member is bound to its record and member (the associated data names the identity, the
 * MFA record's id and the member), so a sealed secret moved to another identity, another record of the same identity
 * or into the recovery codes does not open.
 * A record of schema 3 or older (plain `secret`) reads as it is: migration 3 → 4 reads and writes each one again.
 */
import type { Mfa } from './identity-mfa.ts'

/** What seals and opens a value for a context (store/store-seal.ts SealKey). */
export interface Sealer {
  seal(plain: string, context: string): string
  open(sealed: string, context: string): string
}

/** An MFA record in the store: its secret and recovery codes sealed. */
export type StoredMfa = Omit<Mfa, 'secret' | 'recoveryCodes'> & {
  /** The sealed base32 TOTP secret. */
  readonly sealedSecret: string
  /** The sealed JSON array of the unused recovery codes. */
  readonly sealedRecoveryCodes: string
}

/** The associated data of a sealed member of an MFA record. */
export function mfaSealContext(m: Pick<Mfa, 'identityId' | 'id'>, member: 'secret' | 'recoveryCodes'): string {
  return `edgeplane/mfas/${m.identityId}/${m.id}/${member}`
}

/** The stored form of `m`: secret and recovery codes sealed under fresh nonces. */
export function toStoredMfa(m: Mfa, sealer: Sealer): StoredMfa {
  const { secret, recoveryCodes, ...rest } = m
  return {
    ...rest,
    sealedSecret: sealer.seal(secret, mfaSealContext(m, 'secret')),
    sealedRecoveryCodes: sealer.seal(JSON.stringify(recoveryCodes), mfaSealContext(m, 'recoveryCodes')),
  }
}

/** Whether a stored value has the sealed form (a record of schema 3 or older holds a plain `secret`). */
export function isSealedMfa(value: unknown): value is StoredMfa {
  return typeof (value as Partial<StoredMfa> | null)?.sealedSecret === 'string'
}

/** The record a stored value holds: a sealed one opened (an Error when it does not open), an older one as it is. */
export function fromStoredMfa(value: unknown, sealer: Sealer): Mfa {
  if (!isSealedMfa(value)) return value as Mfa
  const { sealedSecret, sealedRecoveryCodes, ...rest } = value
  const recoveryCodes: unknown = JSON.parse(sealer.open(sealedRecoveryCodes, mfaSealContext(value, 'recoveryCodes')))
  if (!Array.isArray(recoveryCodes) || !recoveryCodes.every((c) => typeof c === 'string')) {
    throw new Error(`the recovery codes of ${mfaSealContext(value, 'recoveryCodes')} are not a list of codes`)
  }
  return { ...rest, secret: sealer.open(sealedSecret, mfaSealContext(value, 'secret')), recoveryCodes }
}
