/**
 * The terminators this node still has to validate with their routers, and the deletes the answers called for; memory
 * only, per node, as the real controller's RouterMessaging keeps them (ziti controller/network/router_messaging.go).
 * No I/O and no clock of its own: the feature passes the time in and sends what `requests` answers. Rules kept here:
 * - a terminator is queued when it is created and, with all of its router's, when the router connects; each queued
 *   one gets a fresh non-zero marker the router echoes, so an answer to an older request cannot settle a newer one
 * - a router's queued terminators are asked about once they are older than 5 s (`minAgeMs`), in one request per
 *   router, never two at once: a request unanswered for 3 min (`retryAfterMs`) may be sent again
 * - a router that is not connected here loses its queue (its next connect queues everything again)
 * - terminators this node may not validate (`mayValidate`: a cluster node validates its own) leave the queue
 * - an answer settles the terminators it names with their marker (or marker 0); the invalid ones are to be deleted,
 *   the others are done; ones it does not name stay queued and go out again with the next request
 * - deletes are taken in batches of at most 100 (`deleteBatch`), and only of terminators that still exist
 */

/** What validating a terminator needs of it. */
export interface ValidatedTerminator {
  id: string
  routerId: string
  binding: string
  address: string
  /** Epoch ms. */
  createdAt: number
  sourceCtrl: string
}

/** One request to send: a router and the terminators to ask it about, with their markers. */
export interface ValidationRequest {
  routerId: string
  terminators: { id: string; binding: string; address: string; marker: bigint }[]
}

/** What a router said of one terminator. */
export interface ValidationState {
  valid: boolean
  marker: bigint
}

export interface ValidationSettings {
  minAgeMs: number
  retryAfterMs: number
  deleteBatch: number
}

export const VALIDATION_DEFAULTS: ValidationSettings = { minAgeMs: 5_000, retryAfterMs: 3 * 60_000, deleteBatch: 100 }

interface Pending {
  items: Map<string, ValidatedTerminator & { marker: bigint }>
  /** When the request now unanswered was sent (epoch ms); undefined when none is out. */
  sentAt: number | undefined
}

export class TerminatorValidations {
  private readonly pending = new Map<string, Pending>()
  private readonly deletes = new Set<string>()
  private marker = 0n

  constructor(private readonly settings: ValidationSettings = VALIDATION_DEFAULTS) {}

  /** Queues terminators for validation (again, with new markers, when they are queued already). */
  queue(terminators: Iterable<ValidatedTerminator>): void {
    for (const t of terminators) {
      let p = this.pending.get(t.routerId)
      if (!p) this.pending.set(t.routerId, (p = { items: new Map(), sentAt: undefined }))
      this.marker = BigInt.asUintN(64, this.marker + 1n) || 1n
      p.items.set(t.id, { ...t, marker: this.marker })
    }
  }

  /** The requests due at `now`; each is marked sent. */
  requests(now: number, isConnected: (routerId: string) => boolean, mayValidate: (t: ValidatedTerminator) => boolean): ValidationRequest[] {
    const out: ValidationRequest[] = []
    for (const [routerId, p] of this.pending) {
      if (!isConnected(routerId)) {
        this.pending.delete(routerId)
        continue
      }
      if (p.sentAt !== undefined && now - p.sentAt < this.settings.retryAfterMs) continue
      p.sentAt = undefined
      const terminators: ValidationRequest['terminators'] = []
      for (const [id, t] of p.items) {
        if (!mayValidate(t)) p.items.delete(id)
        else if (now - t.createdAt > this.settings.minAgeMs) terminators.push({ id, binding: t.binding, address: t.address, marker: t.marker })
      }
      if (p.items.size === 0) this.pending.delete(routerId)
      if (terminators.length === 0) continue
      p.sentAt = now
      out.push({ routerId, terminators })
    }
    return out
  }

  /** A router's answer: settles what it names; answers the ids it found invalid (queued for deletion). */
  answered(routerId: string, states: ReadonlyMap<string, ValidationState>): string[] {
    const p = this.pending.get(routerId)
    if (!p) return []
    p.sentAt = undefined
    const invalid: string[] = []
    for (const [id, state] of states) {
      const t = p.items.get(id)
      if (!t || (state.marker !== 0n && state.marker !== t.marker)) continue
      if (!state.valid) {
        invalid.push(id)
        this.deletes.add(id)
      }
      p.items.delete(id)
    }
    if (p.items.size === 0) this.pending.delete(routerId)
    return invalid
  }

  /** A request could not be sent: its router may be asked again at once. */
  unsent(routerId: string): void {
    const p = this.pending.get(routerId)
    if (p) p.sentAt = undefined
  }

  /** The router left this node: its queue goes. */
  routerGone(routerId: string): void {
    this.pending.delete(routerId)
  }

  /** The next batch of deletes: ids that still exist; the others leave the queue. */
  nextDeletes(exists: (id: string) => boolean): string[] {
    const batch: string[] = []
    for (const id of this.deletes) {
      if (!exists(id)) this.deletes.delete(id)
      else if (batch.length < this.settings.deleteBatch) batch.push(id)
    }
    return batch
  }

  /** These deletes were made. */
  deleted(ids: Iterable<string>): void {
    for (const id of ids) this.deletes.delete(id)
  }

  /** Queued terminators by router (inspection, tests). */
  queued(): Map<string, string[]> {
    return new Map([...this.pending].map(([routerId, p]) => [routerId, [...p.items.keys()]]))
  }

  get pendingDeletes(): number {
    return this.deletes.size
  }
}
