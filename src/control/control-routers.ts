/**
 * The routers connected to this node: one control channel per router id, what its hello and ClientHello said, and
 * its sync status. Memory only, per node (in a cluster a router connects to every node it knows, and each node
 * answers for its own connections, as the real controllers do). Rules kept here:
 * - At most one connection per router: a newer one that was admitted displaces the older (which is closed).
 * - A channel that closes leaves the registry at once (offline the moment it closes), and only if it is still the
 *   router's current one (a displaced channel's close does not take its successor offline).
 * - Listeners hear `connected` after a router is registered (its hello answered), `hello` after its ClientHello,
 *   and `disconnected` after it left; a listener that throws is logged, the others still run.
 * - What a router reported of itself (capabilities, version) is kept after it disconnects, until it is forgotten
 *   (deleted), for the views that show it while offline.
 */
import type { ControlChannel } from './channel/control-channel.ts'
import {
  capabilityNames,
  OFFLINE,
  SYNC_STATUS,
  type RouterPresence,
  type RouterPresenceReads,
  type RouterVersionInfo,
  type SyncStatus,
} from '../domain/router/router-presence.ts'

/** One link listener a router announced in its hello (header 1000) or later (UpdateLinkListeners). */
export interface LinkListenerInfo {
  address: string
  protocol: string
  groups: string[]
  /** The local binding it listens on (empty when unset), passed on to the other routers as the router sent it. */
  localBinding: string
}

/** A router with an open control channel on this node. */
export interface ConnectedRouter {
  readonly id: string
  readonly name: string
  readonly isEdge: boolean
  readonly channel: ControlChannel
  /** When the channel was admitted (the node's clock, epoch ms): the churn guard reads it. */
  readonly connectedAt: number
  /** SHA-1 of the client certificate it connected with. */
  readonly fingerprint: string
  readonly remoteAddress: string
  readonly versionInfo: RouterVersionInfo
  /** The capability mask of its hello (header 1002). */
  readonly capabilities: bigint
  /** Its link listeners: the hello's, replaced by each UpdateLinkListeners (control/links/). */
  linkListeners: readonly LinkListenerInfo[]
  readonly ctrlChanListeners: Readonly<Record<string, readonly string[]>>
  /** From its ClientHello (edge routers). */
  hostname: string
  supportedProtocols: Record<string, string>
  /** Whether its ClientHello said it keeps a router data model, and at which index. */
  dataModel: { supported: boolean; index: bigint }
  syncStatus: SyncStatus
}

export type RouterRegistryEvent =
  | { type: 'connected'; router: ConnectedRouter }
  | { type: 'hello'; router: ConnectedRouter }
  | { type: 'disconnected'; router: ConnectedRouter; reason: string }

type Listener<T extends RouterRegistryEvent['type']> = (e: Extract<RouterRegistryEvent, { type: T }>) => void

/** What a router last said of itself. */
interface Reported {
  capabilities: readonly string[]
  version: string
}

export class RouterRegistry implements RouterPresenceReads {
  private readonly byId = new Map<string, ConnectedRouter>()
  private readonly reported = new Map<string, Reported>()
  private readonly listeners: { [T in RouterRegistryEvent['type']]: Listener<T>[] } = { connected: [], hello: [], disconnected: [] }

  constructor(private readonly warn: (msg: string, err: unknown) => void) {}

  /** Subscribes to one kind of event; answers the unsubscribe. */
  on<T extends RouterRegistryEvent['type']>(type: T, fn: Listener<T>): () => void {
    const list = this.listeners[type] as Listener<T>[]
    list.push(fn)
    return () => {
      const i = list.indexOf(fn)
      if (i >= 0) list.splice(i, 1)
    }
  }

  get(id: string): ConnectedRouter | undefined {
    return this.byId.get(id)
  }

  all(): IterableIterator<ConnectedRouter> {
    return this.byId.values()
  }

  get size(): number {
    return this.byId.size
  }

  /** Registers an admitted router; an older connection of the same router is closed first. */
  add(router: ConnectedRouter): void {
    const prev = this.byId.get(router.id)
    if (prev && prev.channel !== router.channel) prev.channel.close('displaced by a newer connection of the same router')
    this.byId.set(router.id, router)
    this.reported.set(router.id, { capabilities: capabilityNames(router.capabilities), version: router.versionInfo.version })
    router.channel.onClose((reason) => this.remove(router, reason))
    this.emit({ type: 'connected', router })
  }

  /** Records the ClientHello of a connected router and tells the listeners. */
  helloReceived(router: ConnectedRouter): void {
    if (this.byId.get(router.id) !== router) return
    this.emit({ type: 'hello', router })
  }

  setSyncStatus(router: ConnectedRouter, status: SyncStatus): void {
    if (this.byId.get(router.id) === router) router.syncStatus = status
  }

  /** Closes router `id`'s channel, if it has one here (it then leaves through its close). */
  disconnect(id: string, reason: string): boolean {
    const r = this.byId.get(id)
    if (!r) return false
    r.channel.close(reason)
    return true
  }

  /** Forgets what a deleted router reported of itself (and closes its channel). */
  forget(id: string, reason: string): void {
    this.disconnect(id, reason)
    this.reported.delete(id)
  }

  presenceOf(routerId: string): RouterPresence {
    const r = this.byId.get(routerId)
    const reported = this.reported.get(routerId)
    if (!r) return reported ? { ...OFFLINE, capabilities: reported.capabilities } : OFFLINE
    return {
      isOnline: true,
      hostname: r.hostname,
      supportedProtocols: r.supportedProtocols,
      syncStatus: r.syncStatus,
      versionInfo: r.versionInfo,
      capabilities: reported?.capabilities ?? [],
      ctrlChanListeners: r.ctrlChanListeners,
      linkListeners: r.linkListeners,
    }
  }

  /** Closes every channel (the node stops). */
  closeAll(reason: string): void {
    for (const r of [...this.byId.values()]) r.channel.close(reason)
  }

  private remove(router: ConnectedRouter, reason: string): void {
    if (this.byId.get(router.id) !== router) return
    this.byId.delete(router.id)
    router.syncStatus = SYNC_STATUS.Disconnected
    this.emit({ type: 'disconnected', router, reason })
  }

  private emit(e: RouterRegistryEvent): void {
    for (const fn of [...(this.listeners[e.type] as Listener<typeof e.type>[])]) {
      try {
        ;(fn as (e: RouterRegistryEvent) => void)(e)
      } catch (err) {
        this.warn(`a listener of router ${e.type} failed`, err)
      }
    }
  }
}

