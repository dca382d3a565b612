/**
 * The TOTP second factor of an identity (its MFA record) as stored, and the pure rules over it:
 * - one MFA record per identity; Started (`isVerified` false) until a TOTP code verifies it, then Verified
 * - the secret: 10 random bytes, base32 without padding; codes are HMAC-SHA1, 6 digits, 30 s steps (RFC 6238)
 * - a TOTP code matches within one step either side of now, and only at a step after the last one accepted: a code
 *   accepted once is refused afterwards, even inside its window (RFC 6238 §5.2)
 * - 20 recovery codes of 6 base32 characters; their plain text is kept only while Started (they are no credential
 *   before verification); once Verified only their hashes are stored, and each one works once
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
  /** The recovery codes in plain text while Started; empty once Verified. */
  recoveryCodes: string[]
  /** Once Verified: the hashes of the unused recovery codes (auth/auth-recovery-code.ts), lowercase hex. */
  recoveryCodeHashes: string[]
  /** The salt all of this record's recovery-code hashes share, base64. */
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
 * holds): a TOTP at a time step, or a recovery code by its hash.
 */
export type MfaProof = { readonly kind: 'totp'; readonly step: number } | { readonly kind: 'recovery'; readonly hash: string }

/**
 * The record after `proof` is used on it, or undefined when the proof does not hold on this record: a TOTP step not
 * after the last accepted one (replay), or a recovery hash it does not hold (unknown or used). Recovery codes count
 * only on a Verified record (`allowRecovery` false refuses them: verify takes TOTP only).
 */
export function applyProof(mfa: Mfa, proof: MfaProof, now: number, allowRecovery: boolean): Mfa | undefined {
  if (proof.kind === 'totp') {
    if (mfa.lastTotpStep !== null && proof.step <= mfa.lastTotpStep) return undefined
    return { ...mfa, lastTotpStep: proof.step, updatedAt: now }
  }
  if (!allowRecovery || !mfa.isVerified || !mfa.recoveryCodeHashes.includes(proof.hash)) return undefined
  return { ...mfa, recoveryCodeHashes: mfa.recoveryCodeHashes.filter((h) => h !== proof.hash), updatedAt: now }
}
