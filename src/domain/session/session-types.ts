/**
 * API sessions: keyed by the SHA-256 of their token. The record never holds the token; the session registry keeps it
 * beside the record for the edge routers, sealed at rest (session-stored.ts).
 * @see edge-api management.yml apiSessionDetail, currentApiSessionDetail
 */
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
  /**
   * When this session last answered a TOTP or recovery code (`POST /authenticate/mfa`, or verifying the enrollment
   * on it), epoch ms; null before. Records stored before it existed read as null.
   */
  mfaCompletedAt: number | null
  isCertExtendable: boolean
  tags: Record<string, unknown>
  createdAt: number
  updatedAt: number
  lastActivityAt: number
}>

/** SHA-256 of a session token, hex. */
export function hashToken(token: string): string {
  // Bun's one-shot SHA-256: a few times cheaper than node:crypto's createHash, and it runs on every request
  return Bun.SHA256.hash(token, 'hex')
}

/**
 * True once `timeoutMs` has passed since the session's last activity: its record's, or a later one this node saw and
 * has not shared yet (`SessionReads.activityOf`, a cluster node).
 */
export function isExpired(s: ApiSession, now: number, timeoutMs: number, lastActivityAt = s.lastActivityAt): boolean {
  return now - lastActivityAt >= timeoutMs
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
