/**
 * What is known of a router's control channel on this node, as the APIs render it: whether it is connected, what it
 * said in its hello and ClientHello, and how far the controller got in synchronizing it. Memory only: a router
 * that is not connected here is offline, with an empty hostname, no protocols and SYNC_UNKNOWN, as the real
 * controller renders a router it holds no sender for.
 * @see router-control-plane.md §4.1; ziti controller/env/sync.go, controller/internal/routes/edge_router_api_model.go
 */

/** The sync statuses of the real controller (controller/env/sync.go). */
export const SYNC_STATUS = {
  New: 'SYNC_NEW',
  Queued: 'SYNC_QUEUED',
  Hello: 'SYNC_HELLO',
  HelloWait: 'SYNC_HELLO_WAIT',
  ResyncWait: 'SYNC_RESYNC_WAIT',
  InProgress: 'SYNC_IN_PROGRESS',
  Done: 'SYNC_DONE',
  Unknown: 'SYNC_UNKNOWN',
  Disconnected: 'SYNC_DISCONNECTED',
  HelloTimeout: 'SYNC_HELLO_TIMEOUT',
  Error: 'SYNC_ERROR',
} as const
export type SyncStatus = (typeof SYNC_STATUS)[keyof typeof SYNC_STATUS]

/** The five fields of a version header (`version|revision|buildDate|os|arch`). @see management.yml versionInfo */
export interface RouterVersionInfo {
  version: string
  revision: string
  buildDate: string
  os: string
  arch: string
}

export const NO_VERSION: Readonly<RouterVersionInfo> = Object.freeze({ version: '', revision: '', buildDate: '', os: '', arch: '' })

/** A link listener a router announced in its hello: where other routers dial it, over which protocol, for which groups. */
export interface RouterLinkListener {
  readonly address: string
  readonly protocol: string
  readonly groups: readonly string[]
}

/** A router's presence as the REST views read it. */
export interface RouterPresence {
  readonly isOnline: boolean
  readonly hostname: string
  /** Protocol → URL an SDK dials (`tls` → `tls://host:3022`): `supportedProtocols` and the deprecated `urls`. */
  readonly supportedProtocols: Readonly<Record<string, string>>
  readonly syncStatus: SyncStatus
  readonly versionInfo: Readonly<RouterVersionInfo>
  /** Names of the router capabilities it reported (kept after it disconnects, until the router is deleted). */
  readonly capabilities: readonly string[]
  /** Its own control listeners (address → groups), from its hello. */
  readonly ctrlChanListeners: Readonly<Record<string, readonly string[]>>
  /** Its link listeners, from its hello (the fabric API's `listenerAddresses`); none while offline. */
  readonly linkListeners: readonly RouterLinkListener[]
}

export const OFFLINE: RouterPresence = Object.freeze({
  isOnline: false,
  hostname: '',
  supportedProtocols: Object.freeze({}),
  syncStatus: SYNC_STATUS.Unknown,
  versionInfo: NO_VERSION,
  capabilities: Object.freeze([]),
  ctrlChanListeners: Object.freeze({}),
  linkListeners: Object.freeze([]),
})

/** The read the HTTP views depend on (the control plane's router registry answers it). */
export interface RouterPresenceReads {
  presenceOf(routerId: string): RouterPresence
}

/** No control plane: every router offline (unit tests of views). */
export const NO_PRESENCE: RouterPresenceReads = { presenceOf: () => OFFLINE }

/** A version header's five `|`-separated fields; undefined when it has another number of fields. */
export function parseVersionInfo(text: string): RouterVersionInfo | undefined {
  const parts = text.split('|')
  if (parts.length !== 5) return undefined
  const [version, revision, buildDate, os, arch] = parts
  return { version, revision, buildDate, os, arch }
}

export function formatVersionInfo(v: RouterVersionInfo): string {
  return [v.version, v.revision, v.buildDate, v.os, v.arch].join('|')
}

/**
 * Router capability bits the REST API names (bit → name; ziti controller/internal/routes/edge_router_router.go).
 * Other bits (62, RouterDataModel, among them) are not rendered.
 */
export const ROUTER_CAPABILITY_NAMES: ReadonlyMap<number, string> = new Map([
  [1, 'MULTICHANNEL'],
  [2, 'CONNECTV2'],
  [4, 'SERVICESUBSCRIPTIONS'],
  [5, 'POSTURECHECKS'],
  [6, 'BINDSUCCESS'],
])

/** The names of the capabilities set in `mask` (bits 0-62, as the real controller keeps them), by bit. */
export function capabilityNames(mask: bigint): string[] {
  const out: string[] = []
  for (const [bit, name] of ROUTER_CAPABILITY_NAMES) if (((mask >> BigInt(bit)) & 1n) === 1n) out.push(name)
  return out
}

/** One edge listener of a ClientHello, as far as the URL of it goes. */
export interface EdgeListenerAdvert {
  protocol: string
  hostname: string
  port: number
}

/**
 * `supportedProtocols` from a ClientHello: one `protocol://host:port` per advertised protocol (the last listener of a
 * protocol wins); a router that lists no listeners is read the old way, from hostname + protocols[i] +
 * protocolPorts[i].
 */
export function supportedProtocolsOf(
  listeners: readonly EdgeListenerAdvert[],
  legacy: { hostname: string; protocols: readonly string[]; protocolPorts: readonly string[] },
): Record<string, string> {
  // a Map, then own properties: a protocol named `__proto__` is a key like any other
  const out = new Map<string, string>()
  if (listeners.length > 0) {
    for (const l of listeners) out.set(l.protocol, `${l.protocol}://${l.hostname}:${l.port}`)
  } else if (legacy.hostname !== '') {
    legacy.protocols.forEach((p, i) => {
      if (i < legacy.protocolPorts.length) out.set(p, `${p}://${legacy.hostname}:${legacy.protocolPorts[i]}`)
    })
  }
  return Object.fromEntries(out)
}
