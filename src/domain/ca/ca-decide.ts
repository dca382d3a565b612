/**
 * Pure checks for what the controller CA issues. Each throws; none signs.
 * - a certificate is valid from `backdateMs` before now until now + its time to live, never past its issuer's
 *   notAfter; a CA past its notAfter issues nothing
 * - a certificate needs a subject CN; a server certificate needs at least one DNS name or IP address
 */
import { ApiError } from '../../errors/api-error.ts'

/** The validity window (epoch ms) of a certificate issued at `now`. @throws TypeError for a time to live ≤ 0 (a bug). */
export function decideValidity(now: number, ttlMs: number, backdateMs: number, issuerNotAfter: number): { notBefore: number; notAfter: number } {
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) throw new TypeError(`a certificate's time to live must be positive, got ${ttlMs}`)
  if (issuerNotAfter <= now) throw new Error(`the signing CA expired at ${new Date(issuerNotAfter).toISOString()}; it issues nothing`)
  return { notBefore: now - backdateMs, notAfter: Math.min(now + ttlMs, issuerNotAfter) }
}

/** The subject of a certificate to issue: a non-empty CN, and for a server certificate at least one SAN. */
export function decideSubject(purpose: 'client' | 'server', commonName: string, sans: { dnsNames: readonly string[]; ipAddresses: readonly string[] }): void {
  if (commonName.trim() === '') throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'the certificate request has no common name')
  if (purpose === 'server' && sans.dnsNames.length === 0 && sans.ipAddresses.length === 0) {
    throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'a server certificate request must name at least one DNS name or IP address')
  }
}
