/**
 * The control plane of one node, wired: the router registry, the listener (its own port when `listen` is set, and
 * the sockets the API listener hands over), admission against the policy graph's routers and the controller's CAs,
 * the binding of each admitted router's channel, the edge handshake, the metrics, and the disconnects the graph asks
 * for (a router deleted, disabled, or sent back to enrollment). boot/boot-control.ts calls startControlPlane and nothing else
 * of this folder.
 */
import { arch as osArch, platform } from 'node:os'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { Counter, Gauge, type MetricsRegistry } from '../lib/metrics.ts'
import type { EventBus } from '../actors/runtime/event-bus.ts'
import type { PolicyGraphEvent } from '../actors/policy-graph/policy-graph-messages.ts'
import type { Router } from '../domain/policy/policy-types.ts'
import type { LinkControl } from '../domain/fabric/fabric-types.ts'
import { formatVersionInfo, SYNC_STATUS, type RouterVersionInfo } from '../domain/router/router-presence.ts'
import { admitRouter, CHURN_LIMIT_MS } from './control-admission.ts'
import { createControlListener, CONTROL_LIMIT_DEFAULTS, type ControlLimits } from './control-listener.ts'
import { RouterRegistry, type ConnectedRouter, type LinkListenerInfo } from './control-routers.ts'
import { contentTypeName, decodeHeaderMessage } from './control-messages.ts'
import { routerSenders } from './control-senders.ts'
import { bindRouterChannel } from './handlers/control-bind.ts'
import { ListenersSchema, CtrlChanListenersSchema, ControlHeaders } from './pb/ctrl_pb.ts'
import { ChannelHeader, type HeaderMap } from './wire/control-frame.ts'
import { decodeCapabilities, encodeCapabilities, encodeString } from './wire/control-headers.ts'
import type { HeartbeatOptions } from './channel/control-heartbeat.ts'
import type { ControlFeature, FeatureFactory } from './control-feature.ts'
import type { CircuitControl, CircuitFailureView } from '../domain/fabric/fabric-types.ts'
import type tls from 'node:tls'

/** Controller capability bit 6, SupportsJWTLegacySessions: without it a v2 router refuses the channel. */
export const CONTROLLER_CAPABILITY_BITS = [6] as const

export interface ControlPlaneDeps {
  /** The routers as the policy graph holds them. */
  routers: { get(id: string): Router | undefined }
  bus: EventBus
  /** The controller's CA certificates (PEM): what a router's client certificate must chain to. */
  trustAnchors: () => string[]
  clock: Clock
  logger: Logger
  metrics: MetricsRegistry
  /** This node's id in the hello answer (header 8): the cluster node name, or the server certificate's name. */
  controllerId: string
  /** This controller's version, revision and build date (header 4 adds the OS and architecture). */
  version: { version: string; revision: string; buildDate: string }
  /** A listener of its own (`--ctrl-listen`), with the server certificate. */
  listen?: { host: string; port: number; tls: { key: string; cert: string; ca?: string } }
  limits?: Partial<ControlLimits>
  heartbeat?: Partial<HeartbeatOptions>
  churnLimitMs?: number
  /** The features that handle what routers send and sync them (control-feature.ts); none: the handshake alone. */
  features?: FeatureFactory
}

export interface ControlPlane {
  readonly registry: RouterRegistry
  /** The port of the control plane's own listener, when it has one. */
  readonly port: number | undefined
  /** Takes a socket that negotiated `ziti-ctrl` on the API listener. */
  acceptSocket(socket: tls.TLSSocket): void
  /** Connections not yet admitted (tests, diagnostics). */
  pendingCount(): number
  /** The router data model's position, when it runs (tests, diagnostics). */
  dataModel?: { index(): bigint; timelineId(): string }
  /** The circuits this node holds, for the fabric API and the console, when the circuits feature runs. */
  circuits?: CircuitControl
  /** The latest circuit requests this node refused or could not build, the newest first. */
  circuitFailures?: () => readonly CircuitFailureView[]
  /** The links routers reported to this node, when the links feature runs (control/links/; the fabric API's). */
  links?: LinkControl
  stop(): Promise<void>
}

/** Go's names of the architectures Bun runs on (the version header's last field, as a Go binary reports it). */
const GO_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm' }

export async function startControlPlane(deps: ControlPlaneDeps): Promise<ControlPlane> {
  const { logger } = deps
  const log = (level: 'debug' | 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string) => logger[level](fields, msg)
  const registry = new RouterRegistry((msg, err) => logger.warn({ err: String(err) }, msg))
  const ownVersion: RouterVersionInfo = { ...deps.version, os: platform(), arch: GO_ARCH[osArch()] ?? osArch() }
  const answerHeaders: HeaderMap = new Map<number, Uint8Array>([
    [ChannelHeader.HelloVersion, encodeString(formatVersionInfo(ownVersion))],
    [ControlHeaders.CapabilitiesHeader, encodeCapabilities(CONTROLLER_CAPABILITY_BITS)],
    [ChannelHeader.Id, encodeString(deps.controllerId)],
  ])
  const metrics = controlMetrics(deps.metrics, registry)
  const features: readonly ControlFeature[] = deps.features?.({ registry, clock: deps.clock, logger, metrics: deps.metrics }) ?? []
  // each feature's part of a router's sync, in order; the first that fails ends it (the router shows SYNC_ERROR)
  const synchronize = async (router: ConnectedRouter) => {
    for (const f of features) {
      if (f.synchronize && !router.channel.isClosed) await f.synchronize(router)
    }
  }
  registry.on('disconnected', (e) => {
    for (const f of features) {
      try {
        f.disconnected?.(e.router, e.reason)
      } catch (err) {
        logger.warn({ feature: f.name, routerId: e.router.id, err: String(err) }, 'a control feature failed on a router disconnect')
      }
    }
  })

  const listener = createControlListener({
    limits: { ...CONTROL_LIMIT_DEFAULTS, ...deps.limits },
    heartbeat: deps.heartbeat,
    observer: metrics.observer,
    refused: metrics.refused,
    log,
    answerHeaders: () => answerHeaders,
    admit: (hello, chain) =>
      admitRouter(hello, chain, {
        router: (id) => deps.routers.get(id),
        connectedSince: (id) => registry.get(id)?.connectedAt,
        trustAnchors: deps.trustAnchors,
        now: () => deps.clock.now(),
        churnLimitMs: deps.churnLimitMs ?? CHURN_LIMIT_MS,
      }),
    open({ channel, admission, hello, remoteAddress }) {
      const { router: record, fingerprint, versionInfo } = admission
      const router: ConnectedRouter = {
        id: record.id,
        name: record.name,
        isEdge: record.isEdge,
        channel,
        connectedAt: deps.clock.now(),
        fingerprint,
        remoteAddress,
        versionInfo,
        capabilities: decodeCapabilities(hello.headers.get(ControlHeaders.CapabilitiesHeader)),
        linkListeners: linkListenersOf(hello.headers, log, record.id),
        ctrlChanListeners: ctrlChanListenersOf(hello.headers, log, record.id),
        hostname: '',
        supportedProtocols: {},
        dataModel: { supported: false, index: 0n },
        syncStatus: SYNC_STATUS.New,
      }
      channel.bind(bindRouterChannel(router, { registry, log, synchronize, features }))
      registry.add(router)
      logger.info({ routerId: router.id, routerName: router.name, remoteAddress, version: versionInfo.version }, 'router connected')
      channel.onClose((reason) => logger.info({ routerId: router.id, reason }, 'router disconnected'))
      if (router.isEdge) {
        registry.setSyncStatus(router, SYNC_STATUS.Hello)
        routerSenders(channel).serverHello(deps.version.version)
      }
    },
  })

  // the graph decides who may stay: a router deleted, disabled or sent back to enrollment loses its channel
  const unsubscribe = [
    deps.bus.subscribe<Extract<PolicyGraphEvent, { type: 'graph.router.put' }>>('graph.router.put', (e) => {
      const r = e.router
      if (r.disabled) registry.disconnect(r.id, 'the router was disabled')
      else if (r.fingerprint === null) registry.disconnect(r.id, 'the router was sent back to enrollment')
    }),
    deps.bus.subscribe<Extract<PolicyGraphEvent, { type: 'graph.router.deleted' }>>('graph.router.deleted', (e) => registry.forget(e.router.id, 'the router was deleted')),
  ]

  const port = deps.listen ? await listener.listen(deps.listen.host, deps.listen.port, deps.listen.tls) : undefined

  return {
    registry,
    port,
    acceptSocket: (socket) => listener.acceptSocket(socket),
    pendingCount: () => listener.pendingCount(),
    async stop() {
      for (const u of unsubscribe) u()
      for (const f of features) await f.stop?.()
      await listener.close()
      registry.closeAll('the controller is stopping')
    },
  }
}

function linkListenersOf(headers: HeaderMap, log: (level: 'warn', f: Record<string, unknown>, m: string) => void, routerId: string): LinkListenerInfo[] {
  const value = headers.get(ControlHeaders.ListenersHeader)
  if (value === undefined) return []
  try {
    return decodeHeaderMessage(ListenersSchema, value).listeners.map((l) => ({ address: l.address, protocol: l.protocol, groups: l.groups, localBinding: l.localBinding }))
  } catch (e) {
    log('warn', { routerId, err: String(e) }, 'the link listeners of a router hello do not decode; ignored')
    return []
  }
}

function ctrlChanListenersOf(headers: HeaderMap, log: (level: 'warn', f: Record<string, unknown>, m: string) => void, routerId: string): Record<string, string[]> {
  const value = headers.get(ControlHeaders.CtrlChanListenersHeader)
  if (value === undefined) return {}
  try {
    return Object.fromEntries(decodeHeaderMessage(CtrlChanListenersSchema, value).listeners.map((l) => [l.address, l.groups]))
  } catch (e) {
    log('warn', { routerId, err: String(e) }, 'the control listeners of a router hello do not decode; ignored')
    return {}
  }
}

/** The control plane's series: routers connected, frames by direction and type, refusals by reason, sync statuses. */
function controlMetrics(reg: MetricsRegistry, registry: RouterRegistry) {
  reg.register(new Gauge('edgeplane_control_routers_connected', 'Routers with an open control channel to this node', [], () => [[[], registry.size]]))
  reg.register(
    new Gauge('edgeplane_control_routers_sync_status', 'Connected edge routers by sync status', ['status'], () => {
      const counts = new Map<string, number>()
      for (const r of registry.all()) if (r.isEdge) counts.set(r.syncStatus, (counts.get(r.syncStatus) ?? 0) + 1)
      return [...counts].map(([s, n]) => [[s], n] as const)
    }),
  )
  const messages = reg.register(new Counter('edgeplane_control_messages_total', 'Control channel frames by direction and content type (unknown types as other)', ['direction', 'type']))
  const unhandled = reg.register(new Counter('edgeplane_control_unhandled_total', 'Received control frames no handler took, by content type', ['type']))
  const refusals = reg.register(new Counter('edgeplane_control_refused_total', 'Control connections closed before admission, by reason', ['reason']))
  // one series per label set, made once (the names are a closed set: the enums' and `other`)
  const series = new Map<string, { inc(): void }>()
  const inc = (counter: Counter, ...labels: string[]) => {
    const key = `${counter.name}\u0000${labels.join('\u0000')}`
    let s = series.get(key)
    if (!s) series.set(key, (s = counter.labels(...labels)))
    s.inc()
  }
  return {
    observer: {
      received: (ct: number) => inc(messages, 'in', contentTypeName(ct)),
      sent: (ct: number) => inc(messages, 'out', contentTypeName(ct)),
      unhandled: (ct: number) => inc(unhandled, contentTypeName(ct)),
    },
    refused: (reason: string) => inc(refusals, reason),
  }
}
