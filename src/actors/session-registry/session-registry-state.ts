/** In-memory API sessions: by token hash (authentication), by id (management), by identity (hasApiSession, cascades). */
import type { ApiSession } from '../../domain/session/session-types.ts'

export class SessionRegistryState {
  readonly byTokenHash = new Map<string, ApiSession>()
  readonly byId = new Map<string, ApiSession>()
  private readonly byIdentity = new Map<string, Set<string>>()
  /** Sessions whose lastActivityAt moved since the last flush to LMDB. */
  readonly dirty = new Set<string>()

  put(s: ApiSession): void {
    this.byTokenHash.set(s.tokenHash, s)
    this.byId.set(s.id, s)
    let set = this.byIdentity.get(s.identityId)
    if (!set) this.byIdentity.set(s.identityId, (set = new Set()))
    set.add(s.id)
  }

  remove(s: ApiSession): void {
    this.byTokenHash.delete(s.tokenHash)
    this.byId.delete(s.id)
    this.dirty.delete(s.tokenHash)
    const set = this.byIdentity.get(s.identityId)
    set?.delete(s.id)
    if (set && set.size === 0) this.byIdentity.delete(s.identityId)
  }

  sessionsOf(identityId: string): ApiSession[] {
    return [...(this.byIdentity.get(identityId) ?? [])].map((id) => this.byId.get(id)!).filter(Boolean)
  }

  hasSession(identityId: string): boolean {
    return (this.byIdentity.get(identityId)?.size ?? 0) > 0
  }
}
