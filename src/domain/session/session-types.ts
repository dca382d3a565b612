/**
 * API sessions as stored: keyed by the SHA-256 of their token; the token itself is never stored.
 * @see edge-api management.yml apiSessionDetail, currentApiSessionDetail
 */
import { createHash } from 'node:crypto'
import type { DeepReadonly } from '../../lib/deep-readonly.ts'

/** A stored API session: replaced on every change (activity marks too), never mutated, hence deeply read-only. */
export type ApiSession = DeepReadonly<{
  id: string
  /** Lowercase hex SHA-256 of the token. */
  tokenHash: string
  identityId: string
  authenticatorId: string
  configTypes: string[]
  ipAddress: string
  isMfaRequired: boolean
  isMfaComplete: boolean
  /** Epoch ms of the last successful TOTP or recovery code on this session; null when none (read by MFA posture checks). */
  mfaCompletedAt: number | null
  isCertExtendable: boolean
  tags: Record<string, unknown>
  createdAt: number
  updatedAt: number
  lastActivityAt: number
}>

/** SHA-256 of a session token, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** True once `timeoutMs` has passed since the session's last activity. */
export function isExpired(s: ApiSession, now: number, timeoutMs: number): boolean {
  return now - s.lastActivityAt >= timeoutMs
}

/**
 * A certificate issued to an API session (`POST /current-api-session/certificates`, the seed's "Ephemeral
 * certificate"): it logs its identity in by certificate while its API session lives, and is removed with it.
 * @see edge-api client.yml currentApiSessionCertificateDetail
 */
export type ApiSessionCertificate = DeepReadonly<{
  id: string
  apiSessionId: string
  identityId: string
  /** The certificate's subject, e.g. `CN=<identity id>`. */
  subject: string
  /** SHA-1 of the certificate's DER, lowercase hex. */
  fingerprint: string
  certPem: string
  validFrom: number
  validTo: number
  createdAt: number
  updatedAt: number
}>
