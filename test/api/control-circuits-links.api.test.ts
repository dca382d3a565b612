// Circuits over links, with three emulated routers over real TLS (router-emulator-circuits.ts, router-emulator-links.ts):
// a dial on one router for a service hosted on another becomes one Route per router of the path, the first
// forwarding to the link and the last holding the egress; the path follows the links' costs (static cost and the
// latencies the routers' metrics report) and avoids a link an admin took down; no usable link is NO_PATH; a link
// that goes (faulted by a router, deleted by an admin) tears down the circuits over it at both ends; a router that
// leaves tears down its circuits once the offline grace is over. The fabric API and the route path show the path.
// @see router-control-plane.md §5.2-§5.4; ziti controller/network/network_path.go, router_messaging.go
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { DestType, FaultSubject } from '../../src/control/pb/ctrl_pb.ts'
import type { LinkRegistry } from '../../src/control/links/link-registry.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import { bindingSdk, bindRequest, createTerminator, type BindingSdk } from '../support/router-emulator-terminators.ts'
import { answerRoutes, dialV2, routesOf, unroutesOf, type DialAnswer } from '../support/router-emulator-circuits.ts'
import { dialedLink, linkListenersHeader, sendFault, sendLinkLatencies, sendRouterLinks, tlsListener } from '../support/router-emulator-links.ts'

const HOST_KEY = new Uint8Array(32).fill(9)
const OFFLINE_GRACE_MS = 400

let srv: TestServer
let links: LinkRegistry
let a: RouterIdentity
let b: RouterIdentity
let c: RouterIdentity
const emus = new Map<string, RouterEmulator>()

async function connect(r: RouterIdentity, port: number): Promise<RouterEmulator> {
  const opts = { port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id, helloHeaders: linkListenersHeader([tlsListener(port)]) }
  // a connection that just closed may still be leaving (the churn guard refuses while it is there)
  for (let i = 0; ; i++) {
    const o = await RouterEmulator.tryConnect(opts)
    if (o.ok) {
      answerRoutes(o.router, { peerData: new Map([[1003, HOST_KEY]]) })
      emus.set(r.id, o.router)
      await eventually(() => srv.server.control.registry.get(r.id)?.channel !== undefined)
      return o.router
    }
    if (i === 100) throw new Error(`router ${r.id} could not connect`)
    await Bun.sleep(50)
  }
}

async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const until = performance.now() + ms
  while (!check()) {
    if (performance.now() > until) throw new Error('the condition did not come true in time')
    await Bun.sleep(10)
  }
}

const emu = (r: RouterIdentity) => emus.get(r.id)!

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 }, circuits: { routeTimeoutMs: 2_000, offlineGraceMs: OFFLINE_GRACE_MS } })
  links = srv.server.control.links as LinkRegistry
  a = await enrollRouter(srv, 'cl-a')
  b = await enrollRouter(srv, 'cl-b')
  c = await enrollRouter(srv, 'cl-c')
  await connect(a, 10_181)
  await connect(b, 10_182)
  await connect(c, 10_183)
}, 30_000)
afterAll(async () => {
  for (const e of emus.values()) e.close()
  await srv.stop()
})

let n = 0
/** A service hosted through `host` (one terminator) and a dialer whose policies allow `dialer` only. */
async function service(host: RouterIdentity, dialer: RouterIdentity) {
  const name = `cl-svc-${++n}`
  const serviceId = await srv.create('/services', { name, encryptionRequired: true })
  const hosting = await bindingSdk(srv, { name: `${name}-host`, serviceId, routerIds: [host.id] })
  const terminatorId = `t-${name}`
  expect((await createTerminator(emu(host), bindRequest(hosting, terminatorId, { peerData: { 1003: HOST_KEY } }))).result).toBe(0)
  const dialing = await bindingSdk(srv, { name: `${name}-dialer`, serviceId, routerIds: [dialer.id], type: 'Dial' })
  return { serviceId, terminatorId, dialing }
}

const dial = (from: RouterIdentity, d: BindingSdk) => dialV2(emu(from), { sessionToken: d.sessionToken, apiSessionToken: d.apiSessionToken })

function ok(x: DialAnswer): Extract<DialAnswer, { ok: true }> {
  if (!x.ok) throw new Error(`the dial was refused: ${x.message}`)
  return x
}

/** Reports `id` dialed by `from` to `to` and waits until path selection may use it (at 65 s a side until measured). */
async function link(id: string, from: RouterIdentity, to: RouterIdentity, port: number, iteration = 1) {
  sendRouterLinks(emu(from), [dialedLink(id, to.id, port, iteration)])
  await eventually(() => links.isUsable(id))
}

/** Both routers of link `id` report it measured at `ms`; waits until its cost shows it. */
async function measure(id: string, ms: number) {
  const l = links.get(id)!
  for (const r of [l.srcRouterId, l.dstRouterId]) sendLinkLatencies(emus.get(r)!, r, { [id]: { latencyNs: ms * 1_000_000 } })
  await eventually(() => links.get(id)!.cost === l.staticCost + 2 * ms)
}

/** Runs `body` with link `id` taken down by an admin, and puts it back up whatever happens. */
async function withDown(id: string, body: () => Promise<void>) {
  expectStatus(await srv.fabric.patch(`/links/${id}`, { down: true }), 200)
  try {
    await body()
  } finally {
    expectStatus(await srv.fabric.patch(`/links/${id}`, { down: false }), 200)
  }
}

const routeFor = (r: RouterIdentity, circuitId: string) => routesOf(emu(r)).find((x) => x.circuitId === circuitId)

describe('a circuit over a link', () => {
  it('sends a Route to both routers: the dialer\'s forwards to the link, the host\'s holds the egress; the fabric API and the route path show both', async () => {
    await link('l-ab', a, b, 10_182)
    const s = await service(b, a)
    const d = ok(await dial(a, s.dialing))
    const first = routeFor(a, d.circuitId)!
    const last = routeFor(b, d.circuitId)!
    const ingress = first.forwards[0]!.srcAddress
    const egress = last.egress!.address
    expect(first.egress).toBeUndefined()
    expect(first.forwards).toEqual([
      expect.objectContaining({ srcAddress: ingress, dstAddress: 'l-ab', dstType: DestType.Link }),
      expect.objectContaining({ srcAddress: 'l-ab', dstAddress: ingress, dstType: DestType.Start }),
    ])
    expect(last.forwards).toEqual([
      expect.objectContaining({ srcAddress: egress, dstAddress: 'l-ab', dstType: DestType.Link }),
      expect.objectContaining({ srcAddress: 'l-ab', dstAddress: egress, dstType: DestType.End }),
    ])
    expect(last.egress).toMatchObject({ binding: 'edge', destination: s.terminatorId })
    // the dialer's router never holds the other router's route
    expect(routeFor(c, d.circuitId)).toBeUndefined()
    expect(d.address).toBe(ingress)
    expect(d.peerData.get(1003)).toEqual(HOST_KEY)
    const view = await srv.fabric.get(`/circuits/${d.circuitId}`)
    expectStatus(view, 200)
    expect(view.body.data.path).toMatchObject({ nodes: [{ id: a.id }, { id: b.id }], links: [{ id: 'l-ab' }] })
    const path = await srv.mgmt.get(`/sessions/${s.dialing.sessionId}/route-path`)
    expect(path.body.data.routePath).toEqual([a.id, b.id])
  })

  it('refuses a dial with NO_PATH when no usable link reaches the host\'s router, and builds it once one does', async () => {
    const s = await service(c, a)
    const refused = await dial(a, s.dialing)
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining(`no path from router ${a.id}`) })
    expect(srv.server.control.circuitFailures!()[0]).toMatchObject({ cause: 'NO_PATH', routerId: a.id, serviceId: s.serviceId })
    await link('l-bc', b, c, 10_183)
    // a -> b -> c: b is a transit router forwarding link to link both ways
    const d = ok(await dial(a, s.dialing))
    expect(routeFor(b, d.circuitId)!.forwards).toEqual([
      expect.objectContaining({ srcAddress: 'l-ab', dstAddress: 'l-bc', dstType: DestType.Link }),
      expect.objectContaining({ srcAddress: 'l-bc', dstAddress: 'l-ab', dstType: DestType.Link }),
    ])
    expect(routeFor(b, d.circuitId)!.egress).toBeUndefined()
    expect(routeFor(c, d.circuitId)!.egress).toMatchObject({ destination: s.terminatorId })
    expect((await srv.fabric.get(`/circuits/${d.circuitId}`)).body.data.path.links.map((l: { id: string }) => l.id)).toEqual(['l-ab', 'l-bc'])
  })

  it('takes the cheaper path by the links\' latencies and static costs, and keeps off a link an admin took down', async () => {
    // a direct link a -> c beside a -> b -> c; every link starts at 65 s a side, so the direct one is cheaper
    await link('l-ac', a, c, 10_183)
    const s = await service(c, a)
    const viaDirect = ok(await dial(a, s.dialing))
    expect(routeFor(b, viaDirect.circuitId)).toBeUndefined()
    expect(routeFor(a, viaDirect.circuitId)!.forwards[0]!.dstAddress).toBe('l-ac')
    // the routers measure l-ab and l-bc at 1 ms and l-ac at 900 ms: through b is cheaper now
    await measure('l-ab', 1)
    await measure('l-bc', 1)
    await measure('l-ac', 900)
    const viaB = ok(await dial(a, s.dialing))
    expect(routeFor(a, viaB.circuitId)!.forwards[0]!.dstAddress).toBe('l-ab')
    expect(routeFor(b, viaB.circuitId)).toBeDefined()
    // l-ab taken down by an admin: back to the direct link
    await withDown('l-ab', async () => {
      const aroundDown = ok(await dial(a, s.dialing))
      expect(routeFor(a, aroundDown.circuitId)!.forwards[0]!.dstAddress).toBe('l-ac')
    })
    // a static cost makes a measured-cheap link dear
    expectStatus(await srv.fabric.patch('/links/l-bc', { staticCost: 5_000 }), 200)
    try {
      const aroundCost = ok(await dial(a, s.dialing))
      expect(routeFor(a, aroundCost.circuitId)!.forwards[0]!.dstAddress).toBe('l-ac')
    } finally {
      expectStatus(await srv.fabric.patch('/links/l-bc', { staticCost: 1 }), 200)
    }
  })
})

describe('a link that goes takes its circuits with it', () => {
  it('a router\'s LinkFault tears down the circuits over the link at both ends (Unroute), and the dial finds another path', async () => {
    // a second direct link a -> b, the only one while l-ab is down
    await link('l-xb', a, b, 10_182, 1)
    await measure('l-xb', 1)
    const s = await service(b, a)
    await withDown('l-ab', async () => {
      const d = ok(await dial(a, s.dialing))
      expect(routeFor(a, d.circuitId)!.forwards[0]!.dstAddress).toBe('l-xb')
      sendFault(emu(a), FaultSubject.LinkFault, 'l-xb', 1)
      await emu(a).waitFor(() => unroutesOf(emu(a)).some((u) => u.circuitId === d.circuitId), 3_000, 'the dialer\'s Unroute')
      await emu(b).waitFor(() => unroutesOf(emu(b)).some((u) => u.circuitId === d.circuitId), 3_000, 'the host\'s Unroute')
      expectStatus(await srv.fabric.get(`/circuits/${d.circuitId}`), 404)
      expect(links.get('l-xb')).toBeUndefined()
      // a -> c -> b remains
      const again = ok(await dial(a, s.dialing))
      expect(routeFor(a, again.circuitId)!.forwards[0]!.dstAddress).toBe('l-ac')
      expect(routeFor(c, again.circuitId)!.forwards[0]!.srcAddress).toBe('l-ac')
    })
  })

  it('an admin\'s DELETE /links/{id} faults the link at both routers and tears down its circuits', async () => {
    await link('l-yb', a, b, 10_182, 3)
    await measure('l-yb', 1)
    const s = await service(b, a)
    await withDown('l-ab', async () => {
      const d = ok(await dial(a, s.dialing))
      expect(routeFor(a, d.circuitId)!.forwards[0]!.dstAddress).toBe('l-yb')
      expectStatus(await srv.fabric.del('/links/l-yb'), 200)
      await emu(b).waitFor(() => unroutesOf(emu(b)).some((u) => u.circuitId === d.circuitId), 3_000, 'the host\'s Unroute')
      await emu(a).waitFor(() => unroutesOf(emu(a)).some((u) => u.circuitId === d.circuitId), 3_000, 'the dialer\'s Unroute')
      expectStatus(await srv.fabric.get('/links/l-yb'), 404)
    })
  })
})

describe('a router that leaves', () => {
  it('keeps the circuits through it for the offline grace, then tears them down at the routers still here', async () => {
    const s = await service(b, a)
    const d = ok(await dial(a, s.dialing))
    // over l-ab, which a dialed: it outlives b's leaving (unusable), so only the grace ends the circuit
    expect(routeFor(a, d.circuitId)!.forwards[0]!.dstAddress).toBe('l-ab')
    const leftAt = performance.now()
    emu(b).close()
    await eventually(() => srv.server.control.registry.get(b.id)?.channel === undefined)
    // within the grace the circuit is still there (its data plane may still carry it)
    expectStatus(await srv.fabric.get(`/circuits/${d.circuitId}`), 200)
    await emu(a).waitFor(() => unroutesOf(emu(a)).some((u) => u.circuitId === d.circuitId), 5_000, 'the dialer\'s Unroute')
    expect(performance.now() - leftAt).toBeGreaterThanOrEqual(OFFLINE_GRACE_MS - 50)
    expectStatus(await srv.fabric.get(`/circuits/${d.circuitId}`), 404)
    // b's links are unusable while it is away: a dial for its service has no path (its terminator's router is offline)
    const refused = await dial(a, s.dialing)
    expect(refused.ok).toBe(false)
  })
})
