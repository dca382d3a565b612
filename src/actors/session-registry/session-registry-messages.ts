/**
 * Messages of the session-registry actor. Tokens travel in one message only: `apiSession.create` carries the new
 * session's token, which the registry keeps (sealed at rest) for the edge routers; a cluster node's command log holds
 * it sealed too (cluster/cluster-seal.ts). Every other message names a session by its token's hash or its id.
 */
import type { ChangeContext } from '../runtime/actor-runtime.ts'
import type { ApiSession, ApiSessionCertificate } from '../../domain/session/session-types.ts'
import type { ServiceSession } from '../../domain/session/service-session-types.ts'

export type SessionRegistryMsg =
  /**
   * Opens an API session. `token` is the session's token (its SHA-256 must be `session.tokenHash`): kept for the
   * edge routers, which look SDKs up by it. Without it the session works on the REST APIs and is never pushed.
   */
  | { type: 'apiSession.create'; session: Omit<ApiSession, 'id' | 'createdAt' | 'updatedAt' | 'lastActivityAt' | 'mfaCompletedAt'>; token?: string; change: ChangeContext }
  | { type: 'apiSession.delete'; id: string; change: ChangeContext }
  /** Ends every API session of an identity: deleted (the default reason) or disabled. */
  | { type: 'apiSession.deleteForIdentity'; identityId: string; reason?: 'identity-deleted' | 'identity-disabled'; change: ChangeContext }
  | { type: 'apiSession.touch'; tokenHash: string; at: number }
  /** Activity marks of many sessions at once (an edge router's heartbeat naming the tokens it holds), node-local as a touch. */
  | { type: 'apiSession.touchBatch'; tokenHashes: readonly string[]; at: number }
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
  'apiSession.touchBatch': void
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

/**
 * What the registry tells the bus (control/sessions/ pushes them to edge routers). Certificate events are told for a
 * certificate's own create and delete, not for those that go with their API session; `session.deleted` is told for
 * every service session removed, those that go with their API session included (before its `apiSession.deleted`).
 */
export type SessionRegistryEvent =
  | { type: 'apiSession.created'; session: ApiSession }
  /** The session answered its TOTP query: fully authenticated now. */
  | { type: 'apiSession.mfaCompleted'; session: ApiSession }
  /** `token`: the token the registry kept for the routers (absent for a session without one); a secret, never logged. */
  | { type: 'apiSession.deleted'; session: ApiSession; reason: 'logout' | 'admin' | 'timeout' | 'identity-deleted' | 'identity-disabled'; token?: string }
  | { type: 'apiSessionCert.created'; certificate: ApiSessionCertificate }
  | { type: 'apiSessionCert.deleted'; certificate: ApiSessionCertificate }
  | { type: 'session.deleted'; sessions: readonly ServiceSession[] }
