/**
 * In-memory API sessions: by token hash (authentication), by id (management), by identity (hasApiSession, cascades),
 * and the tokens edge routers need (kept beside the records, never in them: a record handed out, mapped or logged
 * carries no token). Others see it through `actor.snapshot()` as SessionReads; only the actor's handlers call the
 * put/remove methods.
 */
import type { ApiSession, ApiSessionCertificate } from '../../domain/session/session-types.ts'
import type { ServiceSession } from '../../domain/session/service-session-types.ts'
import type { SessionReads } from '../../domain/session/session-reads.ts'

export class SessionRegistryState implements SessionReads {
  readonly byTokenHash = new Map<string, ApiSession>()
  readonly byId = new Map<string, ApiSession>()
  private readonly byIdentity = new Map<string, Set<string>>()
  /** Tokens by token hash, for the sessions that have one kept (session-stored.ts). */
  private readonly tokens = new Map<string, string>()
  /** Sessions whose lastActivityAt moved since the last flush to LMDB. */
  readonly dirty = new Set<string>()
  /**
   * A cluster node's activity marks by token hash, newer than the record's `lastActivityAt`, not yet shared (the
   * records change only through the log, so they stay equal on every node).
   */
  readonly localActivity = new Map<string, number>()
  /** Service sessions by id, and per API session. */
  readonly serviceSessions = new Map<string, ServiceSession>()
  private readonly byApiSession = new Map<string, Set<string>>()
  private sortedServiceSessions: ServiceSession[] | null = null
  /** API-session certificates by id, by fingerprint, and per API session. */
  readonly sessionCertificates = new Map<string, ApiSessionCertificate>()
  private readonly certByFingerprint = new Map<string, string>()
  private readonly certsByApiSession = new Map<string, Set<string>>()

  put(s: ApiSession): void {
    this.byTokenHash.set(s.tokenHash, s)
    this.byId.set(s.id, s)
    let set = this.byIdentity.get(s.identityId)
    if (!set) this.byIdentity.set(s.identityId, (set = new Set()))
    set.add(s.id)
  }

  /** Keeps the token of a session (its hash is the session's `tokenHash`). */
  putToken(tokenHash: string, token: string): void {
    this.tokens.set(tokenHash, token)
  }

  routerTokenOf(s: Pick<ApiSession, 'tokenHash'>): string | undefined {
    return this.tokens.get(s.tokenHash)
  }

  remove(s: ApiSession): void {
    this.tokens.delete(s.tokenHash)
    this.byTokenHash.delete(s.tokenHash)
    this.byId.delete(s.id)
    this.dirty.delete(s.tokenHash)
    this.localActivity.delete(s.tokenHash)
    const set = this.byIdentity.get(s.identityId)
    set?.delete(s.id)
    if (set && set.size === 0) this.byIdentity.delete(s.identityId)
  }

  activityOf(s: ApiSession): number {
    const mark = this.localActivity.get(s.tokenHash)
    return mark !== undefined && mark > s.lastActivityAt ? mark : s.lastActivityAt
  }

  sessionsOf(identityId: string): ApiSession[] {
    return [...(this.byIdentity.get(identityId) ?? [])].map((id) => this.byId.get(id)!).filter(Boolean)
  }

  hasSession(identityId: string): boolean {
    return (this.byIdentity.get(identityId)?.size ?? 0) > 0
  }

  putServiceSession(s: ServiceSession): void {
    if (!this.serviceSessions.has(s.id)) this.sortedServiceSessions = null
    this.serviceSessions.set(s.id, s)
    let set = this.byApiSession.get(s.apiSessionId)
    if (!set) this.byApiSession.set(s.apiSessionId, (set = new Set()))
    set.add(s.id)
  }

  removeServiceSession(s: ServiceSession): void {
    if (!this.serviceSessions.delete(s.id)) return
    this.sortedServiceSessions = null
    const set = this.byApiSession.get(s.apiSessionId)
    set?.delete(s.id)
    if (set && set.size === 0) this.byApiSession.delete(s.apiSessionId)
  }

  /** Service sessions of one API session. */
  serviceSessionsOf(apiSessionId: string): ServiceSession[] {
    return [...(this.byApiSession.get(apiSessionId) ?? [])].map((id) => this.serviceSessions.get(id)!).filter(Boolean)
  }

  /** Every service session in id order. */
  serviceSessionsById(): readonly ServiceSession[] {
    if (!this.sortedServiceSessions) this.sortedServiceSessions = [...this.serviceSessions.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return this.sortedServiceSessions
  }

  putSessionCertificate(c: ApiSessionCertificate): void {
    this.sessionCertificates.set(c.id, c)
    this.certByFingerprint.set(c.fingerprint, c.id)
    let set = this.certsByApiSession.get(c.apiSessionId)
    if (!set) this.certsByApiSession.set(c.apiSessionId, (set = new Set()))
    set.add(c.id)
  }

  removeSessionCertificate(c: ApiSessionCertificate): void {
    if (!this.sessionCertificates.delete(c.id)) return
    if (this.certByFingerprint.get(c.fingerprint) === c.id) this.certByFingerprint.delete(c.fingerprint)
    const set = this.certsByApiSession.get(c.apiSessionId)
    set?.delete(c.id)
    if (set && set.size === 0) this.certsByApiSession.delete(c.apiSessionId)
  }

  sessionCertificatesOf(apiSessionId: string): ApiSessionCertificate[] {
    return [...(this.certsByApiSession.get(apiSessionId) ?? [])]
      .sort()
      .map((id) => this.sessionCertificates.get(id)!)
      .filter(Boolean)
  }

  sessionCertificateByFingerprint(fingerprint: string): ApiSessionCertificate | undefined {
    const id = this.certByFingerprint.get(fingerprint)
    return id ? this.sessionCertificates.get(id) : undefined
  }
}
