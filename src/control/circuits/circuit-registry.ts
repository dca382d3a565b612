/**
 * The circuits this node built, in memory (as the real controller keeps them): by id, with the routers each crosses.
 * Rules kept here:
 * - An id is reserved while its circuit is being built, so two builds never share one; a reservation that is not
 *   completed is released.
 * - Listeners hear `added` once a circuit is built and `removed` once it is gone (with why).
 * - Reads are the fabric API's and the console's (`CircuitReads`); removal by an admin goes through the circuits
 *   feature, which unroutes first (`CircuitControl.remove` is given by it).
 */
import type { CircuitReads, CircuitView } from '../../domain/fabric/fabric-types.ts'

/** A circuit as this node keeps it: the view, and what tearing it down needs. */
export interface Circuit extends CircuitView {
  /** The terminator's router (the egress). */
  readonly terminatorRouterId: string
  /** The service's strategy, told when the circuit goes (its dynamic costs). */
  readonly strategy: string
}

export type CircuitRemovalCause = 'ingress-fault' | 'egress-fault' | 'forward-fault' | 'link-fault' | 'router-offline' | 'admin' | 'unknown-to-router'

export type CircuitEvent = { type: 'added'; circuit: Circuit } | { type: 'removed'; circuit: Circuit; cause: CircuitRemovalCause }

export class CircuitRegistry implements CircuitReads {
  private readonly byId = new Map<string, Circuit>()
  private readonly reserved = new Set<string>()
  private readonly byRouter = new Map<string, Set<string>>()
  private readonly byLink = new Map<string, Set<string>>()
  private readonly listeners: ((e: CircuitEvent) => void)[] = []

  constructor(private readonly warn: (msg: string, err: unknown) => void) {}

  on(fn: (e: CircuitEvent) => void): () => void {
    this.listeners.push(fn)
    return () => {
      const i = this.listeners.indexOf(fn)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  get size(): number {
    return this.byId.size
  }

  all(): IterableIterator<Circuit> {
    return this.byId.values()
  }

  get(id: string): Circuit | undefined {
    return this.byId.get(id)
  }

  /** Whether `id` is taken (built or being built). */
  isTaken(id: string): boolean {
    return this.byId.has(id) || this.reserved.has(id)
  }

  /** Reserves `id` for a circuit being built; false when it is taken. */
  reserve(id: string): boolean {
    if (this.isTaken(id)) return false
    this.reserved.add(id)
    return true
  }

  release(id: string): void {
    this.reserved.delete(id)
  }

  /** Adds a built circuit (its id reserved before). */
  add(c: Circuit): void {
    this.reserved.delete(c.id)
    this.byId.set(c.id, c)
    for (const r of c.path.nodes) index(this.byRouter, r, c.id)
    for (const l of c.path.links) index(this.byLink, l, c.id)
    this.emit({ type: 'added', circuit: c })
  }

  /** Removes a circuit; answers it, or undefined when this node holds none of that id. */
  remove(id: string, cause: CircuitRemovalCause): Circuit | undefined {
    const c = this.byId.get(id)
    if (!c) return undefined
    this.byId.delete(id)
    for (const r of c.path.nodes) unindex(this.byRouter, r, id)
    for (const l of c.path.links) unindex(this.byLink, l, id)
    this.emit({ type: 'removed', circuit: c, cause })
    return c
  }

  /** The circuits crossing a router. */
  ofRouter(routerId: string): Circuit[] {
    return [...(this.byRouter.get(routerId) ?? [])].flatMap((id) => this.byId.get(id) ?? [])
  }

  /** The circuits over a link. */
  ofLink(linkId: string): Circuit[] {
    return [...(this.byLink.get(linkId) ?? [])].flatMap((id) => this.byId.get(id) ?? [])
  }

  private emit(e: CircuitEvent): void {
    for (const fn of [...this.listeners]) {
      try {
        fn(e)
      } catch (err) {
        this.warn(`a listener of circuit ${e.type} failed`, err)
      }
    }
  }
}

function index(m: Map<string, Set<string>>, key: string, id: string): void {
  const s = m.get(key)
  if (s) s.add(id)
  else m.set(key, new Set([id]))
}

function unindex(m: Map<string, Set<string>>, key: string, id: string): void {
  const s = m.get(key)
  s?.delete(id)
  if (s?.size === 0) m.delete(key)
}
