/**
 * The links this node knows: those the routers connected to it reported (RouterLinks), in memory only, as the real
 * controller keeps them (a cluster node holds the links of its own connections; every node hears every router that
 * connects to it). Pure: no channel, no timer; the links feature (links-feature.ts) feeds it what routers say and
 * sends what follows. Rules kept here:
 * - Only the dialing router reports a link; it is that link's source. A report replaces a known link only with a
 *   greater iteration (an equal or older one keeps it); a link another router reported is not taken over.
 * - A full refresh removes the reporter's links it does not list.
 * - A link fault (or duplicate) removes the link unless its iteration is older than the link's (0 on either side:
 *   not compared); only a router at one end of a link may fault it.
 * - When a router disconnects, the links it dialed go; those it was dialed on stay, unusable until it is back.
 * - A link is usable (path selection) when it is Connected, not down, and both its routers are connected here.
 * - Cost = static cost (1 unless an admin set it) + both latencies in whole milliseconds; latencies start at 65 s
 *   each and follow the routers' metrics.
 * - At most MAX_LINKS_PER_ROUTER links per source router, and bounded field sizes: a hostile report cannot grow it.
 * - Listeners hear every change after it is made; one that throws is logged, the others still hear it.
 * @see router-control-plane.md §5.4; ziti controller/model/link_manager.go RouterReportedLink, link_model.go,
 *   controller/network/network.go NotifyExistingLink, DisconnectRouter, LinkFaulted; handler_ctrl/router_link.go, fault.go
 */
import type { LinkConnection, LinkControl, LinkView } from '../../domain/fabric/fabric-types.ts'

/** The latency a link starts with at each end until its routers report one (the real controller's default). */
export const INITIAL_LATENCY_NS = 65_000_000_000
/** Links one router may have dialed here; reports past this are refused. */
export const MAX_LINKS_PER_ROUTER = 10_000
/** Field sizes of a reported link; a link with a larger one is refused. */
export const LINK_LIMITS = { id: 256, routerId: 512, protocol: 64, dialAddress: 1_024, connections: 64, connField: 512 } as const

/** A link as a router reports it (RouterLinks.RouterLink, decoded). */
export interface ReportedLink {
  id: string
  destRouterId: string
  linkProtocol: string
  dialAddress: string
  iteration: number
  connState?: ReportedConnState
}

/** A link's connections as a router reports them, numbered so an older report does not undo a newer one. */
export interface ReportedConnState {
  stateIteration: number
  conns: readonly LinkConnection[]
}

/** Why a link left. */
export type LinkRemoval =
  | 'fault' // a router at one end reported a LinkFault
  | 'duplicate' // reported as the loser of a duplicate pair (LinkDuplicate)
  | 'refresh' // its router's full refresh did not list it
  | 'replaced' // its router reported it again with a greater iteration (an `added` follows)
  | 'router-gone' // its dialing router disconnected, or one of its routers was deleted
  | 'deleted' // an admin deleted it

export type LinkEvent =
  | { type: 'added'; link: LinkView }
  /** Its view changed (cost, down, latency, connections), or one of its routers connected or disconnected here (isUsable tells). */
  | { type: 'changed'; link: LinkView; previous: LinkView }
  | { type: 'removed'; link: LinkView; reason: LinkRemoval }

/** What became of each link of a RouterLinks report. */
export interface ReportOutcome {
  added: LinkView[]
  /** Known with an equal or greater iteration: left as they were. */
  kept: number
  /** Removed by a full refresh. */
  removed: LinkView[]
  /** Refused: a field too large or empty, a link to itself, another router's link id, or past the per-router cap. */
  refused: number
}

export type FaultOutcome =
  | { kind: 'unknown' }
  | { kind: 'stale'; link: LinkView }
  /** The reporting router is at neither end of the link. */
  | { kind: 'refused'; link: LinkView }
  /** Removed; `otherRouterId` is the end that did not report it, `wasUsable` whether it was usable before. */
  | { kind: 'removed'; link: LinkView; wasUsable: boolean; otherRouterId: string }

export interface LinkRegistryOptions {
  now: () => number
  /** A listener threw. */
  warn: (msg: string, err: unknown) => void
  initialLatencyNs?: number
  maxLinksPerRouter?: number
}

export class LinkRegistry implements LinkControl {
  private readonly byId = new Map<string, LinkView>()
  /** Link ids by source router, and by destination router. */
  private readonly bySrc = new Map<string, Set<string>>()
  private readonly byDst = new Map<string, Set<string>>()
  /** The connections' state iteration last taken, per link. */
  private readonly connIteration = new Map<string, number>()
  private readonly connected = new Set<string>()
  private readonly listeners: Array<(e: LinkEvent) => void> = []
  private readonly initialLatencyNs: number
  private readonly maxPerRouter: number

  constructor(private readonly opts: LinkRegistryOptions) {
    this.initialLatencyNs = opts.initialLatencyNs ?? INITIAL_LATENCY_NS
    this.maxPerRouter = opts.maxLinksPerRouter ?? MAX_LINKS_PER_ROUTER
  }

  /** Subscribes to every link change; answers the unsubscribe. */
  on(fn: (e: LinkEvent) => void): () => void {
    this.listeners.push(fn)
    return () => {
      const i = this.listeners.indexOf(fn)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  all(): IterableIterator<LinkView> {
    return this.byId.values()
  }

  get(id: string): LinkView | undefined {
    return this.byId.get(id)
  }

  get size(): number {
    return this.byId.size
  }

  /** The links a router dialed or was dialed on. */
  linksOf(routerId: string): LinkView[] {
    const out: LinkView[] = []
    for (const index of [this.bySrc, this.byDst]) for (const id of index.get(routerId) ?? []) out.push(this.byId.get(id)!)
    return out
  }

  /** Whether path selection may use the link: Connected, not down, both routers connected to this node. */
  isUsable(id: string): boolean {
    const l = this.byId.get(id)
    return l !== undefined && this.usable(l)
  }

  /** The links path selection may use, with their costs. */
  usableLinks(): LinkView[] {
    const out: LinkView[] = []
    for (const l of this.byId.values()) if (this.usable(l)) out.push(l)
    return out
  }

  /** Counts for the metrics: usable, down (by an admin), and unreachable (a router at one end not connected here). */
  counts(): { usable: number; down: number; unreachable: number } {
    const c = { usable: 0, down: 0, unreachable: 0 }
    for (const l of this.byId.values()) {
      if (l.down) c.down++
      else if (this.usable(l)) c.usable++
      else c.unreachable++
    }
    return c
  }

  isConnected(routerId: string): boolean {
    return this.connected.has(routerId)
  }

  /** A router connected to this node: the links it was dialed on may be usable again. */
  routerConnected(routerId: string): void {
    if (this.connected.has(routerId)) return
    const before = this.snapshotUsable(routerId)
    this.connected.add(routerId)
    this.emitFlips(routerId, before)
  }

  /** A router's connection here ended: the links it dialed go (answered); those it was dialed on stay, unusable. */
  routerDisconnected(routerId: string): LinkView[] {
    const before = this.snapshotUsable(routerId)
    this.connected.delete(routerId)
    const removed: LinkView[] = []
    for (const id of [...(this.bySrc.get(routerId) ?? [])]) removed.push(this.drop(id, 'router-gone')!)
    this.emitFlips(routerId, before)
    return removed
  }

  /** A router was deleted: every link at either end of it goes (it can never connect again under its id). */
  routerDeleted(routerId: string): LinkView[] {
    const removed = this.routerDisconnected(routerId)
    for (const id of [...(this.byDst.get(routerId) ?? [])]) removed.push(this.drop(id, 'router-gone')!)
    return removed
  }

  /** Takes a RouterLinks report of `srcRouterId` (the caller checked it came from that router's current connection). */
  report(srcRouterId: string, links: readonly ReportedLink[], fullRefresh: boolean): ReportOutcome {
    const outcome: ReportOutcome = { added: [], kept: 0, removed: [], refused: 0 }
    if (fullRefresh) {
      const listed = new Set(links.map((l) => l.id))
      for (const id of [...(this.bySrc.get(srcRouterId) ?? [])]) if (!listed.has(id)) outcome.removed.push(this.drop(id, 'refresh')!)
    }
    for (const r of links) {
      if (!acceptable(srcRouterId, r)) {
        outcome.refused++
        continue
      }
      const known = this.byId.get(r.id)
      if (known && known.srcRouterId !== srcRouterId) {
        outcome.refused++
        continue
      }
      if (known && known.iteration >= r.iteration) {
        outcome.kept++
        continue
      }
      if (known) this.drop(r.id, 'replaced')
      else if ((this.bySrc.get(srcRouterId)?.size ?? 0) >= this.maxPerRouter) {
        outcome.refused++
        continue
      }
      outcome.added.push(this.add(srcRouterId, r))
    }
    return outcome
  }

  /** A LinkFault or LinkDuplicate from `reporterId`. */
  fault(reporterId: string, linkId: string, iteration: number, duplicate: boolean): FaultOutcome {
    const link = this.byId.get(linkId)
    if (!link) return { kind: 'unknown' }
    if (reporterId !== link.srcRouterId && reporterId !== link.dstRouterId) return { kind: 'refused', link }
    if (iteration !== 0 && link.iteration !== 0 && iteration < link.iteration) return { kind: 'stale', link }
    const wasUsable = this.usable(link)
    this.drop(linkId, duplicate ? 'duplicate' : 'fault')
    return { kind: 'removed', link, wasUsable, otherRouterId: reporterId === link.srcRouterId ? link.dstRouterId : link.srcRouterId }
  }

  /**
   * A LinkStateUpdate from `reporterId`: the link's connections, if it is at one end of the link, the iteration is the
   * link's, and the state is newer than the one taken. Answers whether it was taken.
   */
  connectionsReported(reporterId: string, linkId: string, linkIteration: number, state: ReportedConnState): boolean {
    const link = this.byId.get(linkId)
    if (!link || link.iteration !== linkIteration) return false
    if (reporterId !== link.srcRouterId && reporterId !== link.dstRouterId) return false
    if (state.stateIteration <= (this.connIteration.get(linkId) ?? -1)) return false
    const connections = boundedConnections(state.conns)
    if (connections === undefined) return false
    this.connIteration.set(linkId, state.stateIteration)
    this.replace(link, { ...link, connections })
    return true
  }

  /** Latency (ns) a router measured on one of its links: the link's latency at that router's end. */
  latencyReported(routerId: string, linkId: string, latencyNs: number): boolean {
    const link = this.byId.get(linkId)
    if (!link || !Number.isFinite(latencyNs) || latencyNs < 0) return false
    const ns = Math.min(Math.trunc(latencyNs), Number.MAX_SAFE_INTEGER)
    if (routerId === link.srcRouterId) {
      if (link.srcLatencyNs !== ns) this.replace(link, withCost({ ...link, srcLatencyNs: ns }))
    } else if (routerId === link.dstRouterId) {
      if (link.dstLatencyNs !== ns) this.replace(link, withCost({ ...link, dstLatencyNs: ns }))
    } else return false
    return true
  }

  /** An admin's change (the static cost an int32, as the real controller keeps it; the caller validated it). */
  update(id: string, change: { down?: boolean; staticCost?: number }): LinkView | undefined {
    const c = change.staticCost
    if (c !== undefined && !(Number.isInteger(c) && c >= -0x80000000 && c <= 0x7fffffff)) throw new TypeError(`a static cost is an int32, not ${c}`)
    const link = this.byId.get(id)
    if (!link) return undefined
    const next = withCost({ ...link, down: change.down ?? link.down, staticCost: change.staticCost ?? link.staticCost })
    if (next.down === link.down && next.staticCost === link.staticCost) return link
    this.replace(link, next)
    return next
  }

  /** Forgets the link (an admin's delete; the links feature tells both routers on the `removed` event). */
  remove(id: string): boolean {
    return this.drop(id, 'deleted') !== undefined
  }

  private usable(l: LinkView): boolean {
    return l.mode === 'Connected' && !l.down && this.connected.has(l.srcRouterId) && this.connected.has(l.dstRouterId)
  }

  private add(srcRouterId: string, r: ReportedLink): LinkView {
    const reported = r.connState ? boundedConnections(r.connState.conns) : undefined
    const connections = reported ?? []
    const link = withCost({
      id: r.id,
      srcRouterId,
      dstRouterId: r.destRouterId,
      protocol: r.linkProtocol,
      dialAddress: r.dialAddress,
      iteration: r.iteration,
      mode: 'Connected',
      down: false,
      staticCost: 1,
      srcLatencyNs: this.initialLatencyNs,
      dstLatencyNs: this.initialLatencyNs,
      cost: 0,
      connections,
      createdAt: this.opts.now(),
    })
    this.byId.set(link.id, link)
    if (r.connState && reported) this.connIteration.set(link.id, r.connState.stateIteration)
    indexAdd(this.bySrc, srcRouterId, link.id)
    indexAdd(this.byDst, link.dstRouterId, link.id)
    this.emit({ type: 'added', link })
    return link
  }

  private drop(id: string, reason: LinkRemoval): LinkView | undefined {
    const link = this.byId.get(id)
    if (!link) return undefined
    this.byId.delete(id)
    this.connIteration.delete(id)
    indexDelete(this.bySrc, link.srcRouterId, id)
    indexDelete(this.byDst, link.dstRouterId, id)
    this.emit({ type: 'removed', link, reason })
    return link
  }

  private replace(previous: LinkView, link: LinkView): void {
    this.byId.set(link.id, link)
    this.emit({ type: 'changed', link, previous })
  }

  /** The links at `routerId` and whether each is usable now (before its connection state flips). */
  private snapshotUsable(routerId: string): Map<string, boolean> {
    const out = new Map<string, boolean>()
    for (const l of this.linksOf(routerId)) out.set(l.id, this.usable(l))
    return out
  }

  private emitFlips(routerId: string, before: ReadonlyMap<string, boolean>): void {
    for (const l of this.linksOf(routerId)) {
      if (before.get(l.id) !== this.usable(l)) this.emit({ type: 'changed', link: l, previous: l })
    }
  }

  private emit(e: LinkEvent): void {
    for (const fn of [...this.listeners]) {
      try {
        fn(e)
      } catch (err) {
        this.opts.warn(`a listener of link ${e.type} failed`, err)
      }
    }
  }
}

/** A reported link this registry takes: ids and fields present and within LINK_LIMITS, not a link to itself. */
function acceptable(srcRouterId: string, r: ReportedLink): boolean {
  return (
    r.id.length > 0 &&
    r.id.length <= LINK_LIMITS.id &&
    r.destRouterId.length > 0 &&
    r.destRouterId.length <= LINK_LIMITS.routerId &&
    r.destRouterId !== srcRouterId &&
    r.linkProtocol.length <= LINK_LIMITS.protocol &&
    r.dialAddress.length <= LINK_LIMITS.dialAddress
  )
}

/** The connections as kept (copied), or undefined when there are too many or a field is too large. */
function boundedConnections(conns: readonly LinkConnection[]): LinkConnection[] | undefined {
  if (conns.length > LINK_LIMITS.connections) return undefined
  const max = LINK_LIMITS.connField
  if (conns.some((c) => c.type.length > max || c.localAddr.length > max || c.remoteAddr.length > max)) return undefined
  return conns.map((c) => ({ type: c.type, localAddr: c.localAddr, remoteAddr: c.remoteAddr }))
}

/** The link with its cost: static cost + both latencies in whole milliseconds (truncated, as the real controller's). */
function withCost(l: LinkView): LinkView {
  return { ...l, cost: l.staticCost + Math.trunc(l.srcLatencyNs / 1_000_000) + Math.trunc(l.dstLatencyNs / 1_000_000) }
}

function indexAdd(index: Map<string, Set<string>>, key: string, id: string): void {
  let s = index.get(key)
  if (!s) index.set(key, (s = new Set()))
  s.add(id)
}

function indexDelete(index: Map<string, Set<string>>, key: string, id: string): void {
  const s = index.get(key)
  if (!s) return
  s.delete(id)
  if (s.size === 0) index.delete(key)
}
