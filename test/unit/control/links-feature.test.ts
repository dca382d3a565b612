// The links feature (src/control/links/) and the fault dispatcher (src/control/faults/) on control channels over
// pipes, every frame they send decoded as a real router decodes it: PeerStateChanges (batched per turn, one message per
// router, Healthy/Unhealthy/Removed as of sending, nothing about itself, the pacing), a report from a displaced
// connection ignored, link faults forwarded, an admin's delete, listener updates bounded, metrics naming another router
// ignored, and the dispatcher's sinks.
// @see router-control-plane.md §5.4; ziti controller/network/router_messaging.go, handler_ctrl/fault.go
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf'
import { FakeClock } from '../../../src/lib/clock.ts'
import { createLogger } from '../../../src/lib/logger.ts'
import { MetricsRegistry } from '../../../src/lib/metrics.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { ControlChannel, type ControlHandler } from '../../../src/control/channel/control-channel.ts'
import { RouterRegistry, type ConnectedRouter, type LinkListenerInfo } from '../../../src/control/control-routers.ts'
import { SYNC_STATUS } from '../../../src/domain/router/router-presence.ts'
import { decodeFrame, type Frame } from '../../../src/control/wire/control-frame.ts'
import type { Router } from '../../../src/domain/policy/policy-types.ts'
import { LinkRegistry } from '../../../src/control/links/link-registry.ts'
import { createLinksFeature } from '../../../src/control/links/links-feature.ts'
import { MAX_LINK_LISTENERS } from '../../../src/control/links/handler-update-link-listeners.ts'
import { createFaultDispatcher, type FaultDispatcher } from '../../../src/control/faults/fault-dispatcher.ts'
import { bindRouterChannel } from '../../../src/control/handlers/control-bind.ts'
import type { ControlFeature } from '../../../src/control/control-feature.ts'
import {
  ContentType as CtrlType,
  FaultSchema,
  FaultSubject,
  ListenersSchema,
  PeerState,
  PeerStateChangesSchema,
  RouterLinksSchema,
  type Fault,
} from '../../../src/control/pb/ctrl_pb.ts'
import { MetricsMessageSchema } from '../../../src/control/pb/metrics_pb.ts'

const body = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toBinary(schema, create(schema, init))

let registry: RouterRegistry
let links: LinkRegistry
let faults: FaultDispatcher
let feature: ControlFeature
let bus: EventBus
let metrics: MetricsRegistry
let known: Set<string>
let logs: { level: string; msg: string }[]

function setup(peerStatesMinGapMs = 0) {
  registry = new RouterRegistry(() => {})
  links = new LinkRegistry({ now: () => 0, warn: () => {} })
  metrics = new MetricsRegistry()
  bus = new EventBus()
  logs = []
  const logger = createLogger({ level: 'debug', write: (line: string) => void logs.push(JSON.parse(line)) })
  faults = createFaultDispatcher({ logger, metrics })
  known = new Set(['r1', 'r2', 'r3', 'r4'])
  const router = (id: string) => (known.has(id) ? ({ id, name: id, fingerprint: 'f', disabled: false } as unknown as Router) : undefined)
  feature = createLinksFeature({ links, faults, router, bus, peerStatesMinGapMs }, { registry, clock: new FakeClock(0), logger, metrics })
}

beforeEach(() => setup())
afterEach(async () => {
  await feature.stop?.()
  registry.closeAll('test over')
})

const listener = (port: number): LinkListenerInfo => ({ address: `tls:127.0.0.1:${port}`, protocol: 'tls', groups: ['default'], localBinding: '' })

/** A connected router on a pipe, bound as the control plane binds it; `say` hands it a frame as if the router sent it. */
function connect(id: string, linkListeners: LinkListenerInfo[] = [listener(10_000 + Number(id.slice(1)))]) {
  const received: Frame[] = []
  let seq = 0
  const channel = new ControlChannel({
    label: id,
    transport: { write: (b) => void received.push(decodeFrame(b)), bufferedBytes: () => 0, close: () => {} },
    log: () => {},
    monotonicMs: () => 0,
  })
  const router: ConnectedRouter = {
    id, name: id, isEdge: false, channel, connectedAt: 0, fingerprint: 'f', remoteAddress: '127.0.0.1',
    versionInfo: { version: `v1.0.${id.slice(1)}`, revision: 'local', buildDate: '', os: 'linux', arch: 'amd64' }, capabilities: 0n,
    linkListeners, ctrlChanListeners: {}, hostname: '', supportedProtocols: {}, dataModel: { supported: false, index: 0n }, syncStatus: SYNC_STATUS.New,
  }
  channel.bind(bindRouterChannel(router, { registry, log: () => {}, synchronize: async () => {}, features: [feature, faults] }))
  registry.add(router)
  const say = (contentType: number, b: Uint8Array) => channel.receive({ contentType, sequence: ++seq, headers: new Map(), body: b })
  return { router, received, say }
}

const turn = () => Bun.sleep(5)
const peerMessages = (received: Frame[]) => received.filter((f) => f.contentType === CtrlType.PeerStateChangeRequestType).map((f) => fromBinary(PeerStateChangesSchema, f.body).changes)
const faultsOf = (received: Frame[]): Fault[] => received.filter((f) => f.contentType === CtrlType.FaultType).map((f) => fromBinary(FaultSchema, f.body))
const summary = (received: Frame[]) => peerMessages(received).map((m) => m.map((c) => `${c.id}:${PeerState[c.state]}`).sort())

describe('PeerStateChanges', () => {
  it('sends nothing to a router that connects alone', async () => {
    const a = connect('r1')
    await turn()
    expect(peerMessages(a.received)).toEqual([])
  })

  it('tells the others of a router that connects (Healthy, its version and listeners), and it one entry per connected router, in one message', async () => {
    const a = connect('r1')
    const b = connect('r2')
    await turn()
    const c = connect('r3', [listener(13_000), { address: 'tls:10.0.0.3:13001', protocol: 'tls', groups: ['east', 'default'], localBinding: 'eth1' }])
    await turn()
    expect(summary(a.received)).toEqual([['r2:Healthy'], ['r3:Healthy']])
    expect(summary(b.received)).toEqual([['r1:Healthy'], ['r3:Healthy']])
    expect(summary(c.received)).toEqual([['r1:Healthy', 'r2:Healthy']])
    const aboutC = peerMessages(a.received)[1]![0]!
    expect(aboutC).toMatchObject({ id: 'r3', version: 'v1.0.3', state: PeerState.Healthy })
    expect(aboutC.listeners.map((l) => ({ address: l.address, protocol: l.protocol, groups: l.groups, localBinding: l.localBinding }))).toEqual([
      { address: 'tls:127.0.0.1:13000', protocol: 'tls', groups: ['default'], localBinding: '' },
      { address: 'tls:10.0.0.3:13001', protocol: 'tls', groups: ['east', 'default'], localBinding: 'eth1' },
    ])
  })

  it('batches what happened in one turn: a router that came and went is announced once, as it is when sent', async () => {
    const a = connect('r1')
    await turn()
    const b = connect('r2')
    b.router.channel.close('gone again')
    await turn()
    expect(summary(a.received)).toEqual([['r2:Unhealthy']])
    // an Unhealthy entry carries no version and no listeners
    expect(peerMessages(a.received)[0]![0]).toMatchObject({ version: '', listeners: [] })
    // and nothing was sent to the one that left
    expect(peerMessages(b.received)).toEqual([])
  })

  it('announces a deleted router Removed, connected here or not', async () => {
    const a = connect('r1')
    const b = connect('r2')
    await turn()
    known.delete('r2')
    b.router.channel.close('deleted')
    bus.publish({ type: 'graph.router.deleted', router: { id: 'r2' } as Router } as never)
    known.delete('r4')
    bus.publish({ type: 'graph.router.deleted', router: { id: 'r4' } as Router } as never)
    await turn()
    expect(summary(a.received)).toEqual([['r2:Healthy'], ['r2:Removed', 'r4:Removed']])
  })

  it('re-announces a router that updates its listeners, and tells it of the others', async () => {
    const a = connect('r1')
    const b = connect('r2')
    await turn()
    a.say(CtrlType.UpdateLinkListenersType, body(ListenersSchema, { listeners: [{ address: 'tls:127.0.0.1:19999', protocol: 'tls', groups: ['x'] }] }))
    await turn()
    expect(a.router.linkListeners).toEqual([{ address: 'tls:127.0.0.1:19999', protocol: 'tls', groups: ['x'], localBinding: '' }])
    const last = peerMessages(b.received).at(-1)!
    expect(last.map((c) => [c.id, c.listeners.map((l) => l.address)])).toEqual([['r1', ['tls:127.0.0.1:19999']]])
    expect(summary(a.received)).toEqual([['r2:Healthy'], ['r2:Healthy']])
  })

  it('keeps at most 64 listeners of bounded size from an update', async () => {
    const a = connect('r1')
    const many = Array.from({ length: 500 }, (_, i) => ({ address: i === 0 ? `tls:${'h'.repeat(5_000)}:1` : `tls:127.0.0.1:${i}`, protocol: 'tls', groups: [] }))
    a.say(CtrlType.UpdateLinkListenersType, body(ListenersSchema, { listeners: many }))
    expect(a.router.linkListeners).toHaveLength(MAX_LINK_LISTENERS - 1)
    expect(a.router.linkListeners[0]!.address).toBe('tls:127.0.0.1:1')
  })

  it('paces a flood of listener updates: one message per gap to each peer, the last listeners in it', async () => {
    await feature.stop?.()
    registry.closeAll('again')
    setup(100)
    const a = connect('r1')
    const b = connect('r2')
    await Bun.sleep(120)
    const before = peerMessages(b.received).length
    // 40 updates over some 200 ms, each in a turn of its own
    const started = performance.now()
    for (let i = 0; i < 40; i++) {
      a.say(CtrlType.UpdateLinkListenersType, body(ListenersSchema, { listeners: [{ address: `tls:127.0.0.1:${i}`, protocol: 'tls' }] }))
      await Bun.sleep(5)
    }
    await Bun.sleep(150)
    const after = peerMessages(b.received).slice(before)
    expect(after.length).toBeGreaterThanOrEqual(1)
    expect(after.length).toBeLessThanOrEqual(Math.ceil((performance.now() - started) / 100) + 1)
    expect(after.at(-1)![0]!.listeners[0]!.address).toBe('tls:127.0.0.1:39')
  })

  it('counts the messages and their entries', async () => {
    connect('r1')
    connect('r2')
    await turn()
    const text = metrics.render()
    expect(text).toContain('edgeplane_control_peer_state_messages_total 2')
    expect(text).toContain('edgeplane_control_peer_state_changes_total{state="Healthy"} 2')
  })
})

describe('links and faults', () => {
  const report = (r: { say: (ct: number, b: Uint8Array) => void }, ids: [string, string][], fullRefresh = false) =>
    r.say(CtrlType.RouterLinksType, body(RouterLinksSchema, { links: ids.map(([id, dst]) => ({ id, destRouterId: dst, linkProtocol: 'tls', dialAddress: 'tls:127.0.0.1:1', iteration: 1 })), fullRefresh }))

  it('ignores a report from a connection that is no longer the router\'s current one', () => {
    const a = connect('r1')
    connect('r2')
    // a connection of r1 that the registry no longer holds (displaced), whose channel still hands frames on
    const stale = a.router
    registry.add({ ...a.router, channel: new ControlChannel({ label: 'r1b', transport: { write: () => {}, bufferedBytes: () => 0, close: () => {} }, log: () => {} }) })
    report({ say: (ct, b) => [...feature.handlers!(stale)].find(([t]) => t === ct)![1]({ contentType: ct, sequence: 1, headers: new Map(), body: b }, stale.channel) }, [['l1', 'r2']])
    expect(links.get('l1')).toBeUndefined()
    expect(metrics.render()).toContain('edgeplane_control_link_reports_total{outcome="ignored"} 1')
  })

  it('forwards a LinkFault to the other router of a usable link (as LinkFault even for a duplicate), with the reported iteration', () => {
    const a = connect('r1')
    const b = connect('r2')
    report(a, [['l1', 'r2'], ['l2', 'r2']])
    b.say(CtrlType.FaultType, body(FaultSchema, { subject: FaultSubject.LinkFault, id: 'l1', iteration: 1 }))
    a.say(CtrlType.FaultType, body(FaultSchema, { subject: FaultSubject.LinkDuplicate, id: 'l2', iteration: 0 }))
    expect(links.size).toBe(0)
    expect(faultsOf(a.received)).toMatchObject([{ subject: FaultSubject.LinkFault, id: 'l1', iteration: 1 }])
    expect(faultsOf(b.received)).toMatchObject([{ subject: FaultSubject.LinkFault, id: 'l2', iteration: 0 }])
    const text = metrics.render()
    expect(text).toContain('edgeplane_control_link_faults_total{subject="LinkFault",outcome="removed"} 1')
    expect(text).toContain('edgeplane_control_link_faults_total{subject="LinkDuplicate",outcome="removed"} 1')
    expect(text).toContain('edgeplane_control_faults_total{subject="LinkFault"} 1')
  })

  it('forwards nothing for a link that was not usable (down), and takes no fault from a router at neither end', () => {
    const a = connect('r1')
    const b = connect('r2')
    const c = connect('r3')
    report(a, [['l1', 'r2'], ['l2', 'r2']])
    links.update('l1', { down: true })
    b.say(CtrlType.FaultType, body(FaultSchema, { subject: FaultSubject.LinkFault, id: 'l1', iteration: 1 }))
    c.say(CtrlType.FaultType, body(FaultSchema, { subject: FaultSubject.LinkFault, id: 'l2', iteration: 1 }))
    expect(links.get('l1')).toBeUndefined()
    expect(links.get('l2')).toBeDefined()
    expect(faultsOf(a.received)).toEqual([])
  })

  it('sends a LinkFault with the link\'s iteration to both its routers when an admin deletes it', () => {
    const a = connect('r1')
    const b = connect('r2')
    a.say(CtrlType.RouterLinksType, body(RouterLinksSchema, { links: [{ id: 'l1', destRouterId: 'r2', linkProtocol: 'tls', dialAddress: 'x', iteration: 7 }] }))
    expect(links.remove('l1')).toBe(true)
    expect(faultsOf(a.received)).toMatchObject([{ subject: FaultSubject.LinkFault, id: 'l1', iteration: 7 }])
    expect(faultsOf(b.received)).toMatchObject([{ subject: FaultSubject.LinkFault, id: 'l1', iteration: 7 }])
  })

  it('takes link latencies from the router\'s own metrics report, and ignores one naming another router', () => {
    const a = connect('r1')
    connect('r2')
    report(a, [['l1', 'r2']])
    const metricsOf = (sourceId: string, mean: number) => body(MetricsMessageSchema, { sourceId, histograms: { 'link.l1.latency': { count: 1n, mean }, 'link.l1.queue_time': { count: 1n, mean: 500_000 } } })
    a.say(CtrlType.MetricsType, metricsOf('r2', 9_000_000))
    expect(links.get('l1')!.srcLatencyNs).toBe(65_000_000_000)
    a.say(CtrlType.MetricsType, metricsOf('r1', 3_000_000))
    expect(links.get('l1')).toMatchObject({ srcLatencyNs: 3_500_000, cost: 1 + 3 + 65_000 })
  })
})

describe('the fault dispatcher', () => {
  it('hands circuit subjects to the one sink registered, drops them at debug before, and refuses a second sink', () => {
    const a = connect('r1')
    a.say(CtrlType.FaultType, body(FaultSchema, { subject: FaultSubject.IngressFault, id: 'c1' }))
    expect(logs.some((l) => l.msg === 'fault dropped: nothing handles its subject' && l.level === 'debug')).toBe(true)
    const seen: string[] = []
    const off = faults.onCircuitFault((r, f) => seen.push(`${r.id}:${FaultSubject[f.subject]}:${f.id}`))
    expect(() => faults.onCircuitFault(() => {})).toThrow(TypeError)
    expect(() => faults.onLinkFault(() => {})).toThrow(TypeError)
    for (const subject of [FaultSubject.IngressFault, FaultSubject.EgressFault, FaultSubject.ForwardFault, FaultSubject.UnknownOwnerForwardFault]) {
      a.say(CtrlType.FaultType, body(FaultSchema, { subject, id: 'c1 c2' }))
    }
    // an unknown subject goes to nobody
    a.say(CtrlType.FaultType, body(FaultSchema, { subject: 42 as FaultSubject, id: 'x' }))
    expect(seen).toEqual(['r1:IngressFault:c1 c2', 'r1:EgressFault:c1 c2', 'r1:ForwardFault:c1 c2', 'r1:UnknownOwnerForwardFault:c1 c2'])
    off()
    a.say(CtrlType.FaultType, body(FaultSchema, { subject: FaultSubject.EgressFault, id: 'c3' }))
    expect(seen).toHaveLength(4)
    expect(metrics.render()).toContain('edgeplane_control_faults_total{subject="other"} 1')
  })

  it('logs a sink that throws, and the channel goes on', () => {
    const a = connect('r1')
    faults.onCircuitFault(() => {
      throw new Error('boom')
    })
    a.say(CtrlType.FaultType, body(FaultSchema, { subject: FaultSubject.IngressFault, id: 'c1' }))
    expect(logs.some((l) => l.msg === 'a fault sink failed')).toBe(true)
    expect(a.router.channel.isClosed).toBe(false)
  })

  it('takes content type 1004 alone: a feature that takes it too cannot be bound', () => {
    const other: ControlFeature = { name: 'other', handlers: () => [[CtrlType.FaultType, (() => {}) as ControlHandler]] }
    const a = connect('r1')
    expect(() => bindRouterChannel(a.router, { registry, log: () => {}, synchronize: async () => {}, features: [faults, other] })).toThrow(/1004 is taken by faults/)
  })
})
