/** Messages of the session-registry actor. Tokens never travel in messages: only their hashes. */
import type { ChangeContext } from '../runtime/actor-runtime.ts'
import type { ApiSession, ApiSessionCertificate } from '../../domain/session/session-types.ts'
import type { ServiceSession } from '../../domain/session/service-session-types.ts'

export type SessionRegistryMsg =
  | { type: 'apiSession.create'; session: Omit<ApiSession, 'id' | 'createdAt' | 'updatedAt' | 'lastActivityAt' | 'mfaCompletedAt'>; change: ChangeContext }
  | { type: 'apiSession.delete'; id: string; change: ChangeContext }
  /** Ends every API session of an identity: deleted (the default reason) or disabled. */
  | { type: 'apiSession.deleteForIdentity'; identityId: string; reason?: 'identity-deleted' | 'identity-disabled'; change: ChangeContext }
  | { type: 'apiSession.touch'; tokenHash: string; at: number }
  /**
   * The session answered its TOTP query (again, for a prompt): `isMfaRequired` and `isMfaComplete` become true (the
   * real controller's SetMfaPassed), `mfaCompletedAt` is now. 401 UNAUTHORIZED when the session is gone.
   */
  | { type: 'apiSession.completeMfa'; id: string; change: ChangeContext }
  /** Single node: writes the activity marks to LMDB. Cluster node: answers the marks to share (writes nothing). */
  | { type: 'apiSession.flushActivity' }
  /** A cluster node's coalesced activity marks (token hash, time): a command, so every node's records agree. */
  | { type: 'apiSession.touchMany'; marks: ReadonlyArray<readonly [string, number]> }
  | { type: 'apiSession.sweep' }
  /** Stores a service session for a live API session; answers the existing one for the same (API session, service, type). */
  | { type: 'session.create'; session: Omit<ServiceSession, 'createdAt' | 'updatedAt'>; change: ChangeContext }
  | { type: 'session.delete'; id: string; change: ChangeContext }
  /** Service sessions whose identity lost access to their service. */
  | { type: 'session.deleteMany'; ids: string[]; change: ChangeContext }
  /**
   * Stores a certificate issued to a live API session (401 UNAUTHORIZED when the session is gone meanwhile); it is
   * removed with its API session.
   */
  | { type: 'apiSessionCert.create'; certificate: Omit<ApiSessionCertificate, 'id' | 'createdAt' | 'updatedAt'>; change: ChangeContext }
  /** Deletes a certificate of `apiSessionId` (404 NOT_FOUND for an unknown id or another session's). */
  | { type: 'apiSessionCert.delete'; id: string; apiSessionId: string; change: ChangeContext }
  /** Repairs found by the integrity fix (flows/integrity/integrity-run.ts); the reply counts those that changed something. */
  | { type: 'integrity.repair'; repairs: SessionRepair[]; change: ChangeContext }

/**
 * One repair of the integrity fix (idempotent). Service sessions and certificates whose API session is gone are not
 * loaded at start, so they are removed from the store by id whether or not they are in memory:
 * - `apiSessions.removeForIdentity`: the API sessions of an identity that is gone, with their sessions and certificates;
 * - `session.remove`: a service session whose API session, service or identity is gone;
 * - `apiSessionCert.remove`: a certificate whose API session is gone.
 */
export type SessionRepair =
  | { kind: 'apiSessions.removeForIdentity'; identityId: string }
  | { kind: 'session.remove'; id: string }
  | { kind: 'apiSessionCert.remove'; id: string; apiSessionId: string }

export interface SessionRegistryReplies {
  'apiSession.create': { id: string; session: ApiSession }
  'apiSession.delete': void
  'apiSession.deleteForIdentity': void
  'apiSession.touch': void
  'apiSession.completeMfa': { session: ApiSession }
  'apiSession.flushActivity': { share: Array<[string, number]> }
  'apiSession.touchMany': void
  'apiSession.sweep': { removed: number }
  'session.create': { session: ServiceSession; existing: boolean }
  'session.delete': void
  'session.deleteMany': void
  'apiSessionCert.create': ApiSessionCertificate
  'apiSessionCert.delete': void
  'integrity.repair': number
}

export type SessionRegistryEvent =
  | { type: 'apiSession.created'; session: ApiSession }
  | { type: 'apiSession.deleted'; session: ApiSession; reason: 'logout' | 'admin' | 'timeout' | 'identity-deleted' | 'identity-disabled' }
