/**
 * MFA records → wire details: the enrollment data (provisioning URL, recovery codes) only while Started; the
 * recovery codes of a Verified record only on the TOTP-guarded recovery-codes routes. The secret never leaves the
 * server except inside the provisioning URL of a Started record; legacy recovery-code hashes never.
 */
import type { Mfa } from '../../domain/identity/identity-mfa.ts'
import { iso } from './common-mapper.ts'

/** The current identity's MFA lives at one fixed path, not under its id. */
export const MFA_LINKS = { self: { href: './current-identity/mfa' } } as const

function baseOf(m: Mfa) {
  return { id: m.id, createdAt: iso(m.createdAt), updatedAt: iso(m.updatedAt), _links: MFA_LINKS, tags: m.tags ?? {} }
}

/** `provisioningUrl` is the Started record's URL (flows/authenticate/auth-mfa.ts makes it). */
export function toMfaDetail(m: Mfa, provisioningUrl: string | undefined) {
  if (m.isVerified) return { ...baseOf(m), isVerified: true }
  return { ...baseOf(m), isVerified: false, provisioningUrl, recoveryCodes: [...m.recoveryCodes] }
}

export function toMfaRecoveryCodesDetail(m: Mfa, recoveryCodes: readonly string[]) {
  return { ...baseOf(m), recoveryCodes: [...recoveryCodes] }
}
