/**
 * The TOTP second factor of an identity (its MFA record) as stored, and the pure rules over it:
 * - one MFA record per identity; Started (`isVerified` false) until a TOTP code verifies it, then Verified
 * - the secret: 10 random bytes, base32 without padding; codes are HMAC-SHA1, 6 digits, 30 s steps (RFC 6238)
 * - a TOTP code matches within one step either side of now, and only at a step after the last one accepted: a code
 *   accepted once is refused afterwards, even inside its window (RFC 6238 §5.2)
 * - 20 recovery codes of 6 base32 characters, each working once (only on a Verified record); their text is held so
 *   the identity can read them again. The store seals the secret and the codes (identity-mfa-stored.ts). A record
 *   verified before schema 4 holds argon2id hashes of its codes instead (`recoveryCodeHashes`): they still work, and
 *   their text is gone, until the identity regenerates its codes
 * @see controller-behaviour.md §5; edge-api client.yml detailMfa
 */
import { timingSafeEqual } from 'node:crypto'
import { HOTP, Secret } from 'otpauth'
import type { DeepReadonly } from '../../lib/deep-readonly.ts'
import type { Tags } from './identity-types.ts'

/** A stored MFA record, keyed by its identity's id; replaced on every change. */
export type Mfa = DeepReadonly<{
  id: string
  identityId: string
  isVerified: boolean
  /** Base32 TOTP secret. */
  secret: string
  /** The unused recovery codes (sealed in the store); empty on a record that holds only legacy hashes. */
  recoveryCodes: string[]
  /**
   * Legacy: the hashes of the unused recovery codes of a record verified before schema 4 (auth/auth-recovery-code.ts),
   * lowercase hex; empty on every other record, and once the identity regenerates its codes.
   */
  recoveryCodeHashes: string[]
  /** The salt all of this record's legacy recovery-code hashes share, base64; empty on a record without them. */
  recoveryCodeSalt: string
  /** The time step (counter) of the last TOTP code accepted, or null before the first. */
  lastTotpStep: number | null
  tags: Tags
  createdAt: number
  updatedAt: number
}>

export const TOTP_PERIOD_SECONDS = 30
export const TOTP_DIGITS = 6
/** Steps either side of now at which a code still matches. */
export const TOTP_WINDOW_STEPS = 1
export const RECOVERY_CODE_COUNT = 20
export const RECOVERY_CODE_LENGTH = 6
export const RECOVERY_CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/**
 * The otpauth URL an authenticator app reads (usually from the QR code): `otpauth://totp/<issuer>:<name>?issuer=…&
 * secret=…`, query keys sorted as the real controller writes them. Issuer and name are percent-encoded (the real
 * controller leaves the name raw, so a name with `?`, `#` or `&` breaks its URL).
 */
export function provisioningUrl(issuer: string, identityName: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(identityName)}`
  return `otpauth://totp/${label}?issuer=${encodeURIComponent(issuer)}&secret=${secret}`
}

/** Whether an identity with this MFA record (or none) has MFA enabled: a verified record (`isMfaEnabled`). */
export function isMfaEnabled(mfa: Mfa | undefined): boolean {
  return mfa?.isVerified === true
}

/** The TOTP time step of `now` (epoch ms). */
export function totpStepAt(now: number): number {
  return Math.floor(now / 1000 / TOTP_PERIOD_SECONDS)
}

/** The code of `secret` at time step `step`. */
export function totpCodeAt(secret: string, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: TOTP_DIGITS, counter: step })
}

/**
 * The time step at which `code` is the record's TOTP code: within TOTP_WINDOW_STEPS of `now` and after the last step
 * accepted; undefined when there is none (a wrong, stale, replayed or malformed code).
 */
export function matchingTotpStep(mfa: Pick<Mfa, 'secret' | 'lastTotpStep'>, code: string, now: number): number | undefined {
  if (!/^[0-9]{6}$/.test(code)) return undefined
  const given = Buffer.from(code)
  const current = totpStepAt(now)
  for (let step = current - TOTP_WINDOW_STEPS; step <= current + TOTP_WINDOW_STEPS; step++) {
    if (mfa.lastTotpStep !== null && step <= mfa.lastTotpStep) continue
    if (timingSafeEqual(Buffer.from(totpCodeAt(mfa.secret, step)), given)) return step
  }
  return undefined
}

/** Whether `code` has the form of a recovery code (6 characters of the base32 alphabet, case-sensitive). */
export function isRecoveryCodeShaped(code: string): boolean {
  return code.length === RECOVERY_CODE_LENGTH && [...code].every((c) => RECOVERY_CODE_ALPHABET.includes(c))
}

/**
 * What proves a code against a record, worked out before the actor is asked (the actor decides again on the record it
 * holds): a TOTP at a time step, or a recovery code (with its legacy hash when the record holds hashes).
 */
export type MfaProof =
  | { readonly kind: 'totp'; readonly step: number }
  | { readonly kind: 'recovery'; readonly code: string; readonly hash?: string }

/** The index of `code` among `codes` (each compared in constant time), or -1. */
function indexOfCode(codes: readonly string[], code: string): number {
  const given = Buffer.from(code)
  let found = -1
  codes.forEach((c, i) => {
    const held = Buffer.from(c)
    if (held.length === given.length && timingSafeEqual(held, given) && found < 0) found = i
  })
  return found
}

/**
 * The record after `proof` is used on it, or undefined when the proof does not hold on this record: a TOTP step not
 * after the last accepted one (replay), or a recovery code it does not hold (unknown or used), by its text or, on a
 * record with legacy hashes, by its hash. Recovery codes count only on a Verified record (`allowRecovery` false
 * refuses them: verify takes TOTP only).
 */
export function applyProof(mfa: Mfa, proof: MfaProof, now: number, allowRecovery: boolean): Mfa | undefined {
  if (proof.kind === 'totp') {
    if (mfa.lastTotpStep !== null && proof.step <= mfa.lastTotpStep) return undefined
    return { ...mfa, lastTotpStep: proof.step, updatedAt: now }
  }
  if (!allowRecovery || !mfa.isVerified) return undefined
  const at = indexOfCode(mfa.recoveryCodes, proof.code)
  if (at >= 0) return { ...mfa, recoveryCodes: mfa.recoveryCodes.filter((_, i) => i !== at), updatedAt: now }
  const hash = proof.hash
  if (hash === undefined || !mfa.recoveryCodeHashes.includes(hash)) return undefined
  return { ...mfa, recoveryCodeHashes: mfa.recoveryCodeHashes.filter((h) => h !== hash), updatedAt: now }
}
