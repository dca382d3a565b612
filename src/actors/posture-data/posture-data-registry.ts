/**
 * The volatile posture store: posture data per API session and refused service requests per identity, in memory
 * only, as the real controller keeps them ("volatile posture data"): a restart or the end of an API session forgets
 * them, and clients report their posture again. It owns no sub-db. Changes are synchronous (no mailbox is needed:
 * nothing here awaits or touches LMDB); an API session's data goes with the session, an identity's failures with the
 * identity (session-registry and identity events).
 */
import type { EventBus } from '../runtime/event-bus.ts'
import type { IdentityEvent } from '../identity/identity-messages.ts'
import type { SessionRegistryEvent } from '../session-registry/session-registry-messages.ts'
import { MAX_FAILED_REQUESTS, type PostureDataReads } from '../../domain/posture/posture-reads.ts'
import { NO_POSTURE_DATA, type FailedServiceRequest, type PostureData, type PostureResponse, type ProcessData } from '../../domain/posture/posture-types.ts'


export class PostureDataRegistry implements PostureDataReads {
  private readonly data = new Map<string, PostureData>()
  private readonly failed = new Map<string, FailedServiceRequest[]>()

  dataOf(apiSessionId: string): PostureData | undefined {
    return this.data.get(apiSessionId)
  }

  failedRequestsOf(identityId: string): readonly FailedServiceRequest[] {
    return this.failed.get(identityId) ?? []
  }

  /** Applies posture responses of one API session at `now`; answers the data before and after. */
  apply(apiSessionId: string, responses: readonly PostureResponse[], now: number): { before: PostureData | undefined; after: PostureData } {
    const before = this.data.get(apiSessionId)
    let next = { ...(before ?? NO_POSTURE_DATA), processes: { ...(before ?? NO_POSTURE_DATA).processes } } as { -readonly [K in keyof PostureData]: PostureData[K] }
    const processes = next.processes as Record<string, ProcessData>
    for (const r of responses) {
      switch (r.typeId) {
        case 'OS':
          next.os = { postureCheckId: r.id, type: r.type, version: r.version, build: r.build, at: now }
          break
        case 'DOMAIN':
          next.domain = { postureCheckId: r.id, name: r.domain, at: now }
          break
        case 'MAC':
          next.mac = { postureCheckId: r.id, addresses: r.macAddresses, at: now }
          break
        case 'PROCESS':
          processes[r.path.toLowerCase()] = { postureCheckId: r.id, path: r.path, isRunning: r.isRunning, hash: r.hash, signerFingerprints: r.signerFingerprints, at: now }
          break
        case 'ENDPOINT_STATE':
          if (r.woken) next.wokenAt = now
          if (r.unlocked) next.unlockedAt = now
          break
      }
    }
    next = { ...next, version: (before?.version ?? 0) + 1 }
    this.data.set(apiSessionId, next)
    return { before, after: next }
  }

  /** Records a refused service request; the oldest goes once the identity has MAX_FAILED_REQUESTS. */
  recordFailure(identityId: string, request: FailedServiceRequest): void {
    const list = this.failed.get(identityId) ?? []
    list.push(request)
    if (list.length > MAX_FAILED_REQUESTS) list.splice(0, list.length - MAX_FAILED_REQUESTS)
    this.failed.set(identityId, list)
  }

  forgetSession(apiSessionId: string): void {
    this.data.delete(apiSessionId)
  }

  forgetIdentity(identityId: string): void {
    this.failed.delete(identityId)
  }
}

/** The store, kept in step with API session and identity deletions. */
export function startPostureDataRegistry(bus: EventBus): { registry: PostureDataRegistry; stop(): void } {
  const registry = new PostureDataRegistry()
  const subs = [
    bus.subscribe<Extract<SessionRegistryEvent, { type: 'apiSession.deleted' }>>('apiSession.deleted', (e) => registry.forgetSession(e.session.id)),
    bus.subscribe<Extract<IdentityEvent, { type: 'identity.deleted' }>>('identity.deleted', (e) => registry.forgetIdentity(e.identity.id)),
  ]
  return {
    registry,
    stop: () => {
      for (const unsub of subs) unsub()
    },
  }
}
