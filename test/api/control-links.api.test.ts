// Routers learning of each other and reporting links, with two and three emulated routers over real TLS
// (test/support/router-emulator.ts, router-emulator-links.ts): PeerStateChanges both ways with the hello's link
// listeners, on disconnect and on delete; VerifyRouter's success and refusals; RouterLinks (new links, full refresh, a
// displaced connection's links), link faults forwarded to the other router, links gone with their router, latencies
// and connections, an admin's delete, and the metrics.
// @see router-control-plane.md §5.4, §4.5, §7(e); ziti controller/network/router_messaging.go, network.go,
//   handler_ctrl/{router_link,verify_router,fault,link_state,update_link_listeners,metrics}.go
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import { FaultSubject, PeerState } from '../../src/control/pb/ctrl_pb.ts'
import { ChannelContentType } from '../../src/control/wire/control-frame.ts'
import type { LinkRegistry } from '../../src/control/links/link-registry.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, replyForOf, RouterEmulator, type EmulatorOptions, type RouterIdentity } from '../support/router-emulator.ts'
import {
  dialedLink,
  fingerprintOf,
  lastPeerState,
  linkFaultsReceived,
  linkListenersHeader,
  peerStateMessages,
  sendFault,
  sendLinkLatencies,
  sendLinkState,
  sendRouterLinks,
  sendUpdateLinkListeners,
  tlsListener,
  verifyRouter,
  waitLinkFault,
  waitPeerState,
} from '../support/router-emulator-links.ts'

let srv: TestServer
let ctrlPort: number
let caBundle: string
let links: LinkRegistry
let a: RouterIdentity
let b: RouterIdentity
let c: RouterIdentity
const open: RouterEmulator[] = []

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 } })
  ctrlPort = srv.server.control.port!
  caBundle = srv.server.pki.caBundlePem
  links = srv.server.control.links as LinkRegistry
  a = await enrollRouter(srv, 'lk-a')
  b = await enrollRouter(srv, 'lk-b')
  c = await enrollRouter(srv, 'lk-c', { fabric: true })
})
afterAll(async () => {
  await srv.stop()
})
// every test starts with no router connected (what one router is told depends on who else is)
afterEach(async () => {
  for (const r of open.splice(0)) r.close()
  await eventually(() => srv.server.control.registry.size === 0)
})

const listenPort = (r: RouterIdentity) => (r === a ? 10_081 : r === b ? 10_082 : 10_083)

async function connect(r: RouterIdentity, more: Partial<EmulatorOptions> = {}): Promise<RouterEmulator> {
  const opts: EmulatorOptions = { port: ctrlPort, caPem: caBundle, tls: { cert: r.cert, key: r.key }, routerId: r.id, helloHeaders: linkListenersHeader([tlsListener(listenPort(r))]), ...more }
  // a connection that just closed may still be leaving (the churn guard refuses while it is there)
  for (let i = 0; ; i++) {
    const o = await RouterEmulator.tryConnect(opts)
    if (o.ok) {
      open.push(o.router)
      await eventually(() => srv.server.control.registry.get(r.id)?.channel !== undefined)
      return o.router
    }
    if (i === 50) throw new Error(`router ${r.id} could not connect`)
    await Bun.sleep(50)
  }
}

async function eventually(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > until) throw new Error('the condition did not come true in time')
    await Bun.sleep(10)
  }
}

/** Waits until the controller has read everything `router` sent before (a ping's answer comes after it). */
async function settled(router: RouterEmulator): Promise<void> {
  const seq = router.send({ contentType: ChannelContentType.Ping })
  await router.waitFor((f) => replyForOf(f) === seq, 5_000, 'the ping answer')
}

const summary = (r: RouterEmulator) => peerStateMessages(r).map((m) => m.map((x) => `${x.id}:${PeerState[x.state]}`).sort())

describe('PeerStateChanges', () => {
  it('tells a router that connects about those connected (with their listeners), and them about it', async () => {
    const ra = await connect(a)
    // alone: nothing to tell it
    await Bun.sleep(150)
    expect(peerStateMessages(ra)).toEqual([])
    const rb = await connect(b)
    const aboutB = await waitPeerState(ra, b.id, PeerState.Healthy)
    expect(aboutB.version).toBe('v0.0.0')
    expect(aboutB.listeners.map((l) => ({ address: l.address, protocol: l.protocol, groups: l.groups }))).toEqual([{ address: 'tls:127.0.0.1:10082', protocol: 'tls', groups: ['default'] }])
    const aboutA = await waitPeerState(rb, a.id, PeerState.Healthy)
    expect(aboutA.listeners.map((l) => l.address)).toEqual(['tls:127.0.0.1:10081'])
    // the third gets one message naming both
    const rc = await connect(c)
    await waitPeerState(rc, b.id, PeerState.Healthy)
    expect(summary(rc)).toEqual([[`${a.id}:Healthy`, `${b.id}:Healthy`].sort()])
    await waitPeerState(ra, c.id, PeerState.Healthy)
    await waitPeerState(rb, c.id, PeerState.Healthy)
    expect(summary(ra)).toEqual([[`${b.id}:Healthy`], [`${c.id}:Healthy`]])
  })

  it('announces a router that disconnects Unhealthy (no version, no listeners) to the others, and Healthy again when it is back', async () => {
    const ra = await connect(a)
    const rb = await connect(b)
    await waitPeerState(ra, b.id, PeerState.Healthy)
    rb.close()
    const gone = await waitPeerState(ra, b.id, PeerState.Unhealthy)
    expect(gone).toMatchObject({ version: '', listeners: [] })
    const again = await connect(b)
    await waitPeerState(ra, b.id, PeerState.Healthy)
    await waitPeerState(again, a.id, PeerState.Healthy)
  })

  it('re-announces a router that sends UpdateLinkListeners with its new listeners', async () => {
    const ra = await connect(a)
    const rb = await connect(b)
    await waitPeerState(rb, a.id, PeerState.Healthy)
    sendUpdateLinkListeners(ra, [tlsListener(20_081, ['east']), { address: 'tls:10.1.1.1:20082', protocol: 'tls', groups: ['default'], localBinding: 'eth0' }])
    await rb.waitFor(() => lastPeerState(rb, a.id)?.listeners.length === 2, 5_000, 'the new listeners')
    const now = lastPeerState(rb, a.id)!
    expect(now.listeners.map((l) => [l.address, l.groups, l.localBinding])).toEqual([
      ['tls:127.0.0.1:20081', ['east'], ''],
      ['tls:10.1.1.1:20082', ['default'], 'eth0'],
    ])
  })

  it('announces a deleted router Removed, whether it was connected or not', async () => {
    const d = await enrollRouter(srv, 'lk-deleted', { fabric: true })
    const e = await enrollRouter(srv, 'lk-deleted-offline')
    const ra = await connect(a)
    const rd = await connect(d, { helloHeaders: {} })
    open.splice(open.indexOf(rd), 1)
    await waitPeerState(ra, d.id, PeerState.Healthy)
    expectStatus(await srv.mgmt.del(`/routers/${d.id}`), 200)
    expect(await rd.waitClosed()).toBe(true)
    await waitPeerState(ra, d.id, PeerState.Removed)
    expectStatus(await srv.mgmt.del(`/edge-routers/${e.id}`), 200)
    await waitPeerState(ra, e.id, PeerState.Removed)
  })
})

describe('VerifyRouter', () => {
  it('verifies a router by its enrolled certificate\'s fingerprint, among others presented', async () => {
    const ra = await connect(a)
    expect(await verifyRouter(ra, b.id, [fingerprintOf(b.cert)])).toEqual({ success: true, text: 'router verified', errorCode: undefined })
    expect((await verifyRouter(ra, b.id, ['00'.repeat(20), fingerprintOf(b.cert)])).success).toBe(true)
    // a fabric router, and the router itself
    expect((await verifyRouter(ra, c.id, [fingerprintOf(c.cert)])).success).toBe(true)
    expect((await verifyRouter(ra, a.id, [fingerprintOf(a.cert)])).success).toBe(true)
  })

  it('refuses another router\'s fingerprint, none, an unknown router, one not enrolled yet, and a disabled one', async () => {
    const ra = await connect(a)
    expect(await verifyRouter(ra, b.id, [fingerprintOf(a.cert)])).toMatchObject({ success: false, text: `could not verify fingerprint for router ${b.id}` })
    expect(await verifyRouter(ra, b.id, [])).toMatchObject({ success: false })
    expect(await verifyRouter(ra, b.id, [fingerprintOf(b.cert).toUpperCase()])).toMatchObject({ success: false })
    expect(await verifyRouter(ra, 'no-such-router', [fingerprintOf(b.cert)])).toMatchObject({ success: false, text: 'router with id no-such-router not found' })
    const pending = await srv.create('/routers', { name: 'lk-not-enrolled' })
    expect(await verifyRouter(ra, pending, ['ab'.repeat(20)])).toMatchObject({ success: false, text: `invalid router ${pending}, not yet enrolled` })
    const off = await enrollRouter(srv, 'lk-disabled', { fabric: true })
    expectStatus(await srv.mgmt.patch(`/routers/${off.id}`, { disabled: true }), 200)
    expect(await verifyRouter(ra, off.id, [fingerprintOf(off.cert)])).toMatchObject({ success: false, text: `router ${off.id} is disabled` })
    const text = (await srv.raw('GET', '/metrics', { session: await srv.login('admin', 'admin-pass-1'), offSpec: 'GET /metrics is Prometheus text' })).text
    expect(text).toMatch(/edgeplane_control_router_verifications_total\{result="mismatch"\} [3-9]/)
    expect(text).toContain('edgeplane_control_router_verifications_total{result="disabled"}')
  })
})

describe('RouterLinks', () => {
  it('records the links a router dialed, usable at once with the initial cost, and drops on a full refresh those it no longer lists', async () => {
    const ra = await connect(a)
    await connect(b)
    sendRouterLinks(ra, [dialedLink('lk-1', b.id, 10_082), dialedLink('lk-2', b.id, 10_082)])
    await settled(ra)
    expect(links.get('lk-1')).toMatchObject({ srcRouterId: a.id, dstRouterId: b.id, protocol: 'tls', dialAddress: 'tls:127.0.0.1:10082', iteration: 1, mode: 'Connected', cost: 130_001 })
    expect(links.usableLinks().map((l) => l.id).sort()).toEqual(['lk-1', 'lk-2'])
    sendRouterLinks(ra, [dialedLink('lk-2', b.id, 10_082), dialedLink('lk-3', b.id, 10_082, 4)], true)
    await settled(ra)
    expect([...links.all()].map((l) => l.id).sort()).toEqual(['lk-2', 'lk-3'])
    // an older or equal iteration keeps the link; a greater one replaces it
    sendRouterLinks(ra, [dialedLink('lk-3', b.id, 10_099, 3)])
    await settled(ra)
    expect(links.get('lk-3')).toMatchObject({ iteration: 4, dialAddress: 'tls:127.0.0.1:10082' })
  })

  it('drops the links a router dialed when it disconnects (those it was dialed on stay, unusable), and takes them again from its full refresh', async () => {
    const ra = await connect(a)
    const rb = await connect(b)
    sendRouterLinks(ra, [dialedLink('lk-out', b.id, 10_082)])
    sendRouterLinks(rb, [dialedLink('lk-in', a.id, 10_081)])
    await settled(ra)
    await settled(rb)
    ra.close()
    await eventually(() => links.get('lk-out') === undefined)
    expect(links.get('lk-in')).toBeDefined()
    expect(links.isUsable('lk-in')).toBe(false)
    const again = await connect(a)
    expect(links.isUsable('lk-in')).toBe(true)
    sendRouterLinks(again, [dialedLink('lk-out', b.id, 10_082, 2)], true)
    await settled(again)
    expect(links.get('lk-out')).toMatchObject({ iteration: 2 })
  })

  it('drops a displaced connection\'s links with it; the new connection reports them again', async () => {
    const first = await connect(a)
    await connect(b)
    sendRouterLinks(first, [dialedLink('lk-d', b.id, 10_082)])
    await settled(first)
    srv.clock.advance(61_000)
    const second = await connect(a)
    expect(await first.waitClosed()).toBe(true)
    expect(links.get('lk-d')).toBeUndefined()
    sendRouterLinks(second, [dialedLink('lk-d', b.id, 10_082)], true)
    await settled(second)
    expect(links.get('lk-d')!.srcRouterId).toBe(a.id)
  })

  it('drops every link of a deleted router', async () => {
    const d = await enrollRouter(srv, 'lk-doomed', { fabric: true })
    const ra = await connect(a)
    const rd = await connect(d, { helloHeaders: {} })
    open.splice(open.indexOf(rd), 1)
    sendRouterLinks(ra, [dialedLink('lk-to-doomed', d.id, 10_090)])
    sendRouterLinks(rd, [dialedLink('lk-from-doomed', a.id, 10_081)])
    await settled(ra)
    await settled(rd)
    expectStatus(await srv.mgmt.del(`/routers/${d.id}`), 200)
    await eventually(() => links.get('lk-to-doomed') === undefined && links.get('lk-from-doomed') === undefined)
  })

  it('takes the latencies of the routers\' metrics and the connections of LinkStateUpdate', async () => {
    const ra = await connect(a)
    const rb = await connect(b)
    sendRouterLinks(ra, [dialedLink('lk-m', b.id, 10_082, 2)])
    await settled(ra)
    sendLinkLatencies(ra, a.id, { 'lk-m': { latencyNs: 4_000_000, queueNs: 1_000_000 } })
    sendLinkLatencies(rb, b.id, { 'lk-m': { latencyNs: 2_999_999 } })
    sendLinkState(rb, 'lk-m', 2, 1, [{ type: 'single', localAddr: 'tcp:127.0.0.1:10082', remoteAddr: 'tcp:127.0.0.1:51000' }])
    await settled(ra)
    await settled(rb)
    expect(links.get('lk-m')).toMatchObject({ srcLatencyNs: 5_000_000, dstLatencyNs: 2_999_999, cost: 1 + 5 + 2, connections: [{ type: 'single', localAddr: 'tcp:127.0.0.1:10082', remoteAddr: 'tcp:127.0.0.1:51000' }] })
  })
})

describe('link faults', () => {
  it('drops a link one of its routers faults and tells the other router', async () => {
    const ra = await connect(a)
    const rb = await connect(b)
    sendRouterLinks(ra, [dialedLink('lk-f1', b.id, 10_082, 3), dialedLink('lk-f2', b.id, 10_082)])
    await settled(ra)
    sendFault(rb, FaultSubject.LinkFault, 'lk-f1', 3)
    expect(await waitLinkFault(ra, 'lk-f1')).toMatchObject({ subject: FaultSubject.LinkFault, iteration: 3 })
    expect(links.get('lk-f1')).toBeUndefined()
    // a duplicate reported by the dialer: the listener is told as a LinkFault
    sendFault(ra, FaultSubject.LinkDuplicate, 'lk-f2', 1)
    expect(await waitLinkFault(rb, 'lk-f2')).toMatchObject({ subject: FaultSubject.LinkFault, iteration: 1 })
    expect(links.size).toBe(0)
  })

  it('ignores a fault older than the link, one from a router at neither end, and one for an unknown link', async () => {
    const ra = await connect(a)
    const rb = await connect(b)
    const rc = await connect(c)
    sendRouterLinks(ra, [dialedLink('lk-s', b.id, 10_082, 5)])
    await settled(ra)
    sendFault(rb, FaultSubject.LinkFault, 'lk-s', 4)
    sendFault(rc, FaultSubject.LinkFault, 'lk-s', 5)
    sendFault(rb, FaultSubject.LinkFault, 'lk-nobody', 1)
    await settled(rb)
    await settled(rc)
    expect(links.get('lk-s')).toBeDefined()
    expect(linkFaultsReceived(ra)).toEqual([])
  })

  it('takes circuit faults naming no circuit of this node without harm: the channel goes on', async () => {
    const ra = await connect(a)
    for (const s of [FaultSubject.IngressFault, FaultSubject.EgressFault, FaultSubject.ForwardFault, FaultSubject.UnknownOwnerForwardFault]) sendFault(ra, s, 'c-1 c-2')
    await settled(ra)
    expect(ra.isClosed).toBe(false)
  })

  it('sends a LinkFault to both routers of a link an admin deletes', async () => {
    const ra = await connect(a)
    const rb = await connect(b)
    sendRouterLinks(ra, [dialedLink('lk-admin', b.id, 10_082, 6)])
    await settled(ra)
    expect(links.remove('lk-admin')).toBe(true)
    expect(await waitLinkFault(ra, 'lk-admin')).toMatchObject({ subject: FaultSubject.LinkFault, iteration: 6 })
    expect(await waitLinkFault(rb, 'lk-admin')).toMatchObject({ subject: FaultSubject.LinkFault, iteration: 6 })
  })

  it('shows links by state, faults and peer states in the metrics', async () => {
    const ra = await connect(a)
    await connect(b)
    sendRouterLinks(ra, [dialedLink('lk-x', b.id, 10_082)])
    await settled(ra)
    const text = (await srv.raw('GET', '/metrics', { session: await srv.login('admin', 'admin-pass-1'), offSpec: 'GET /metrics is Prometheus text' })).text
    expect(text).toMatch(/^edgeplane_control_links\{state="usable"\} 1$/m)
    expect(text).toMatch(/^edgeplane_control_link_faults_total\{subject="LinkFault",outcome="removed"\} [1-9]/m)
    expect(text).toMatch(/^edgeplane_control_peer_state_messages_total [1-9]/m)
    expect(text).toMatch(/^edgeplane_control_peer_state_changes_total\{state="Unhealthy"\} [1-9]/m)
    expect(text).toMatch(/^edgeplane_control_faults_total\{subject="IngressFault"\} [1-9]/m)
  })
})
