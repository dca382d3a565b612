/**
 * What the session registry shows everyone but its own actor: API sessions (by token hash, by id, by identity) and
 * service sessions. Routes and flows read through this (the actor's snapshot), never through the state class and its
 * mutators. Records are deeply read-only and replaced on every change (an activity mark too).
 */
import type { ServiceSession } from './service-session-types.ts'
import type { ApiSession, ApiSessionCertificate } from './session-types.ts'

/** The session registry's reads: what the session-registry actor's `snapshot()` answers. */
export interface SessionReads {
  /** API sessions by the SHA-256 of their token (authentication). */
  readonly byTokenHash: ReadonlyMap<string, ApiSession>
  /** API sessions by id (management). */
  readonly byId: ReadonlyMap<string, ApiSession>
  /** Service sessions by id. */
  readonly serviceSessions: ReadonlyMap<string, ServiceSession>
  /** The API sessions of an identity. */
  sessionsOf(identityId: string): readonly ApiSession[]
  /**
   * The session's last activity as this node knows it: its record's, or a later mark of this node's not yet shared
   * with the cluster (a cluster node shares its marks at most once a minute per session).
   */
  activityOf(s: ApiSession): number
  /**
   * The token of a session as edge routers hold it (the control plane's pushes); undefined for a session stored
   * before tokens were kept. A secret: never logged, never answered on an API.
   */
  routerTokenOf(s: Pick<ApiSession, 'tokenHash'>): string | undefined
  /** Whether the identity has at least one API session. */
  hasSession(identityId: string): boolean
  /** The service sessions of one API session. */
  serviceSessionsOf(apiSessionId: string): readonly ServiceSession[]
  /** Every service session in ascending id order. */
  serviceSessionsById(): readonly ServiceSession[]
  /** API-session certificates by id. */
  readonly sessionCertificates: ReadonlyMap<string, ApiSessionCertificate>
  /** The certificates of one API session, in ascending id order. */
  sessionCertificatesOf(apiSessionId: string): readonly ApiSessionCertificate[]
  /** The API-session certificate with a SHA-1 fingerprint (lowercase hex of its DER). */
  sessionCertificateByFingerprint(fingerprint: string): ApiSessionCertificate | undefined
}
