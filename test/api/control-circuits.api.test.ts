// Circuits through one emulated edge router (test/support/router-emulator-circuits.ts) over real TLS: a legacy SDK's
// dial (CreateCircuitV2) becomes a Route with the egress and the answer carries the circuit id, the path's ingress id,
// the host's peer data and the tags; an OIDC SDK's (CreateCircuitV3) the same, with the circuit id its router chose;
// every refusal as the real controller words it (API session, session type, edge router policy, no terminator, an
// encryption key missing, a router error, a route timeout); terminator strategies, precedence and cost, addressable
// terminators; faults and teardown (Unroute), circuit confirmations of live and unknown circuits, an admin's view of
// the route path, and the metrics.
// @see router-control-plane.md §4.4-§5.3, traps 9 and 12
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { DestType } from '../../src/control/pb/ctrl_pb.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import { bindingSdk, bindRequest, createTerminator, updateTerminator, type BindingSdk } from '../support/router-emulator-terminators.ts'
import { ContentType as EdgeType } from '../../src/control/pb/edge_ctrl_pb.ts'
import { answerRoutes, dialV2, dialV3, DIALER_KEY, routesOf, sendConfirmation, unroutesOf, type RouteAnswers } from '../support/router-emulator-circuits.ts'
import { sendFault } from '../support/router-emulator-links.ts'
import { oidcSdk } from '../support/oidc-sdk.ts'

let srv: TestServer
let r1: RouterIdentity
let emu: RouterEmulator
const HOST_KEY = new Uint8Array(32).fill(9)
const answers: RouteAnswers = { peerData: new Map([[1003, HOST_KEY]]) }

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 }, circuits: { routeTimeoutMs: 1_500 } })
  r1 = await enrollRouter(srv, 'circ-r1')
  emu = await RouterEmulator.connect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r1.cert, key: r1.key }, routerId: r1.id })
  answerRoutes(emu, {
    get peerData() {
      return answers.peerData
    },
    fail: (route) => answers.fail?.(route),
    silent: (route) => answers.silent?.(route) ?? false,
  })
}, 30_000)
afterAll(async () => {
  emu?.close()
  await srv.stop()
})

let n = 0
/** A service with one host bound through r1 (terminator id `t-<name>`), and a dialer. */
async function service(o: { strategy?: string; encryptionRequired?: boolean; staticKey?: boolean; terminators?: { cost?: number; precedence?: number; instanceId?: string }[] } = {}) {
  const name = `svc-${++n}`
  const serviceId = await srv.create('/services', { name, encryptionRequired: o.encryptionRequired ?? true, terminatorStrategy: o.strategy ?? 'smartrouting' })
  const host = await bindingSdk(srv, { name: `${name}-host`, serviceId, routerIds: [r1.id] })
  const ids: string[] = []
  for (const [i, t] of (o.terminators ?? [{}]).entries()) {
    const id = `t-${name}-${i}`
    const res = await createTerminator(emu, bindRequest(host, id, { cost: t.cost ?? 0, precedence: t.precedence ?? 0, instanceId: t.instanceId ?? '', peerData: o.staticKey === false ? {} : { 1003: HOST_KEY } }))
    expect(res.result).toBe(0)
    ids.push(id)
  }
  const dialer = await bindingSdk(srv, { name: `${name}-dialer`, serviceId, routerIds: [r1.id], type: 'Dial' })
  return { serviceId, host, dialer, terminatorIds: ids }
}

const dial = (d: BindingSdk, more: { instanceId?: string; peerData?: ReadonlyMap<number, Uint8Array> } = {}) =>
  dialV2(emu, { sessionToken: d.sessionToken, apiSessionToken: d.apiSessionToken, ...more })

describe('CreateCircuitV2 (a legacy SDK\'s dial)', () => {
  it('sends the router one Route with both forwards and the egress, and answers the circuit id, the ingress id, the host\'s peer data and the tags', async () => {
    const s = await service()
    const before = routesOf(emu).length
    const a = await dial(s.dialer)
    if (!a.ok) throw new Error(`refused: ${a.message}`)
    const route = routesOf(emu).slice(before).find((r) => r.circuitId === a.circuitId)!
    expect(route.attempt).toBe(0)
    const ingress = route.forwards.find((f) => f.dstType === DestType.End)!.srcAddress
    const egress = route.forwards.find((f) => f.dstType === DestType.End)!.dstAddress
    expect(route.forwards).toEqual([
      expect.objectContaining({ srcAddress: ingress, dstAddress: egress, dstType: DestType.End }),
      expect.objectContaining({ srcAddress: egress, dstAddress: ingress, dstType: DestType.Start }),
    ])
    expect(route.egress).toMatchObject({ binding: 'edge', address: egress, destination: s.terminatorIds[0] })
    expect(route.egress!.peerData[1003]).toEqual(DIALER_KEY.get(1003)!)
    // nanoseconds left until the 1.5 s deadline (trap 12)
    expect(route.timeout).toBeGreaterThan(1_000_000_000n)
    expect(route.timeout).toBeLessThanOrEqual(1_500_000_000n)
    expect(a.address).toBe(ingress)
    expect(a.peerData.get(1003)).toEqual(HOST_KEY)
    expect(Object.fromEntries(a.tags)).toEqual({ serviceId: s.serviceId, clientId: s.dialer.identityId, hostId: s.host.identityId })
    // an admin sees the session's route path
    const path = await srv.mgmt.get(`/sessions/${s.dialer.sessionId}/route-path`)
    expectStatus(path, 200)
    expect(path.body.data.routePath).toEqual([r1.id])
  })

  it('refuses an unknown API session, a Bind session, and a dialer without an edge router policy, as the real controller words them', async () => {
    const s = await service()
    const bad = await dialV2(emu, { sessionToken: s.dialer.sessionToken, apiSessionToken: 'not-a-token' })
    expect(bad).toMatchObject({ ok: false, code: 2, message: 'invalid api session' })
    const bind = await dialV2(emu, { sessionToken: s.host.sessionToken, apiSessionToken: s.host.apiSessionToken })
    expect(bind).toMatchObject({ ok: false, code: 4, message: 'incorrect session type' })
    // a dialer whose policies name another router
    const r2 = await enrollRouter(srv, `circ-other-${n}`)
    const far = await bindingSdk(srv, { name: `far-${n}`, serviceId: s.serviceId, routerIds: [r2.id], type: 'Dial' })
    expect(await dial(far)).toMatchObject({ ok: false, code: 5, message: 'invalid edge router for session' })
  })

  it('refuses a dial of an encryption-requiring service without the dialer\'s key, and one whose host sends none', async () => {
    // a host whose terminator has no key of its own, and whose router sends none at route time
    const s = await service({ encryptionRequired: true, staticKey: false })
    expect(await dial(s.dialer, { peerData: new Map() })).toMatchObject({ ok: false, code: 11, retryHint: 2 })
    answers.peerData = new Map()
    try {
      const before = unroutesOf(emu).length
      const a = await dial(s.dialer)
      expect(a).toMatchObject({ ok: false, code: 11 })
      // the circuit built meanwhile is torn down at once
      expect(a.ok ? '' : a.circuitId).toBeTruthy()
      await emu.waitFor(() => unroutesOf(emu).slice(before).some((u) => !a.ok && u.circuitId === a.circuitId && u.now), 3_000, 'the Unroute')
    } finally {
      answers.peerData = new Map([[1003, HOST_KEY]])
    }
  })

  it('answers NO_TERMINATORS with the circuit id when nothing hosts the service, and counts the failure', async () => {
    const serviceId = await srv.create('/services', { name: `svc-bare-${++n}`, encryptionRequired: false })
    const d = await bindingSdk(srv, { name: `bare-dialer-${n}`, serviceId, routerIds: [r1.id], type: 'Dial' })
    const a = await dial(d)
    expect(a.ok).toBe(false)
    if (a.ok) return
    expect(a.code).toBe(1)
    expect(a.message).toContain('has no terminators')
    expect(a.circuitId).toBeTruthy()
    const metrics = await srv.raw('GET', '/metrics', { session: await srv.login('admin', 'admin-pass-1'), offSpec: 'GET /metrics is Prometheus text, not an edge API answer' })
    expect(metrics.text).toMatch(/edgeplane_circuits_failed_total\{cause="NO_TERMINATORS"\} [1-9]/)
    // and admins see it among the recent failures, the newest first
    expect(srv.server.control.circuitFailures!()[0]).toMatchObject({ cause: 'NO_TERMINATORS', routerId: r1.id, serviceId, identityId: d.identityId, circuitId: a.circuitId })
  })

  it('tries twice when the router fails the route, deletes an edge terminator it calls invalid, and unroutes', async () => {
    const s = await service({ terminators: [{}, {}] })
    let failures = 0
    answers.fail = (route) => (route.egress && failures++ === 0 ? { code: 1, message: 'no such terminator' } : undefined)
    try {
      const a = await dial(s.dialer)
      if (!a.ok) throw new Error(`refused: ${a.message}`)
      const routes = routesOf(emu).filter((r) => r.circuitId === a.circuitId)
      expect(routes.map((r) => r.attempt)).toEqual([0, 1])
      // the first terminator is gone, the second carried the circuit
      const list = await srv.mgmt.get(`/services/${s.serviceId}/terminators`)
      expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([routes[1]!.egress!.destination])
    } finally {
      answers.fail = undefined
    }
  })

  it('fails with ROUTER_RESPONSE_TIMEOUT when the router does not answer the routes, after two attempts, and unroutes them', async () => {
    const s = await service()
    answers.silent = () => true
    try {
      const a = await dial(s.dialer)
      expect(a.ok).toBe(false)
      if (a.ok) return
      expect(a.message).toContain('exceeded the maximum 2 attempts')
      await emu.waitFor(() => unroutesOf(emu).some((u) => u.circuitId === a.circuitId && u.now), 3_000, 'the cleanup Unroute')
    } finally {
      answers.silent = undefined
    }
  })
})

describe('terminator selection', () => {
  it('takes the cheapest terminator, a required one before any default one, and the instance an addressable dial names', async () => {
    const s = await service({ terminators: [{ cost: 50 }, { cost: 10 }, { cost: 500, precedence: 1 }, { cost: 0, instanceId: 'box-7' }] })
    const destination = async (more: { instanceId?: string } = {}) => {
      const a = await dial(s.dialer, more)
      if (!a.ok) throw new Error(a.message)
      return routesOf(emu).find((r) => r.circuitId === a.circuitId)!.egress!.destination
    }
    // the required one (cost 500) wins over the default ones; the addressed instance is the only candidate for it
    expect(await destination()).toBe(s.terminatorIds[2])
    expect(await destination({ instanceId: 'box-7' })).toBe(s.terminatorIds[3])
    expect(await dial(s.dialer, { instanceId: 'no-such-box' })).toMatchObject({ ok: false, message: expect.stringContaining('no terminators for instanceId no-such-box') })
  })

  it('smartrouting adds 2 per circuit to a terminator: equal terminators take turns', async () => {
    const s = await service({ terminators: [{}, {}] })
    const used: string[] = []
    for (let i = 0; i < 4; i++) {
      const a = await dial(s.dialer)
      if (!a.ok) throw new Error(a.message)
      used.push(routesOf(emu).find((r) => r.circuitId === a.circuitId)!.egress!.destination)
    }
    expect(new Set(used).size).toBe(2)
    expect(used.filter((t) => t === used[0]).length).toBe(2)
  })

  it('random and weighted spread dials over the terminators; sticky sends the chosen one back as a token and keeps to it', async () => {
    for (const strategy of ['random', 'weighted']) {
      const s = await service({ strategy, encryptionRequired: false, terminators: [{ cost: 10 }, { cost: 10 }, { cost: 10 }] })
      const seen = new Set<string>()
      for (let i = 0; i < 24; i++) {
        const a = await dial(s.dialer, { peerData: new Map() })
        if (!a.ok) throw new Error(a.message)
        seen.add(routesOf(emu).find((r) => r.circuitId === a.circuitId)!.egress!.destination)
      }
      expect(seen.size).toBeGreaterThan(1)
    }
    const s = await service({ strategy: 'sticky', encryptionRequired: false, terminators: [{}, {}] })
    const first = await dial(s.dialer, { peerData: new Map() })
    if (!first.ok) throw new Error(first.message)
    const token = first.peerData.get(1114)!
    const chosen = new TextDecoder().decode(token)
    expect(s.terminatorIds).toContain(chosen)
    for (let i = 0; i < 3; i++) {
      const again = await dial(s.dialer, { peerData: new Map([[1114, token]]) })
      if (!again.ok) throw new Error(again.message)
      expect(routesOf(emu).find((r) => r.circuitId === again.circuitId)!.egress!.destination).toBe(chosen)
    }
  })
})

describe('the ha strategy', () => {
  it('fails over from the required terminator to the default one after 3 failed dials in a row, and back once the primary is updated', async () => {
    const s = await service({ strategy: 'ha', terminators: [{ precedence: 1 }, {}] })
    const [primary, standby] = s.terminatorIds as [string, string]
    const destinations = (a: { ok: boolean; circuitId?: string }) => routesOf(emu).filter((r) => r.circuitId === a.circuitId).map((r) => r.egress!.destination)
    // 4: the host refused the connection (the terminator stays; 1 would delete it as invalid)
    answers.fail = (route) => (route.egress?.destination === primary ? { code: 4, message: 'connection refused' } : undefined)
    try {
      // two attempts on the primary, both failed: the dial fails (2 in a row)
      const first = await dial(s.dialer)
      expect(first.ok).toBe(false)
      expect(destinations(first)).toEqual([primary, primary])
      // the third failure marks it failed; the second attempt goes to the standby
      const second = await dial(s.dialer)
      if (!second.ok) throw new Error(second.message)
      expect(destinations(second)).toEqual([primary, standby])
    } finally {
      answers.fail = undefined
    }
    // the primary is healthy again, but stays failed until it is next updated
    const third = await dial(s.dialer)
    if (!third.ok) throw new Error(third.message)
    expect(destinations(third)).toEqual([standby])
    // an update that changes nothing keeps the mark
    const update = (more: { cost?: number; updateCost?: boolean; precedence?: number; updatePrecedence?: boolean }) =>
      updateTerminator(emu, { sessionToken: s.host.sessionToken, apiSessionToken: s.host.apiSessionToken, terminatorId: primary, ...more })
    expect((await update({ precedence: 1, updatePrecedence: true })).contentType).toBe(EdgeType.UpdateTerminatorResponseType)
    const fifth = await dial(s.dialer)
    if (!fifth.ok) throw new Error(fifth.message)
    expect(destinations(fifth)).toEqual([standby])
    // its host (through its router) changes it: the mark is gone
    expect((await update({ cost: 1, updateCost: true })).contentType).toBe(EdgeType.UpdateTerminatorResponseType)
    const fourth = await dial(s.dialer)
    if (!fourth.ok) throw new Error(fourth.message)
    expect(destinations(fourth)).toEqual([primary])
  })
})

describe('teardown and confirmation', () => {
  it('tears a circuit down on an ingress fault (Unroute, not now) and forgets it; an unknown circuit\'s confirmation is unrouted now', async () => {
    const s = await service()
    const a = await dial(s.dialer)
    if (!a.ok) throw new Error(a.message)
    // a live circuit confirmed idle stays
    sendConfirmation(emu, { [a.circuitId]: 61_000_000_000n, 'no-such-circuit': 61_000_000_000n })
    await emu.waitFor(() => unroutesOf(emu).some((u) => u.circuitId === 'no-such-circuit' && u.now), 3_000, 'the unknown circuit\'s Unroute')
    expect(unroutesOf(emu).some((u) => u.circuitId === a.circuitId)).toBe(false)
    expect((await srv.mgmt.get(`/sessions/${s.dialer.sessionId}/route-path`)).body.data.routePath).toEqual([r1.id])
    sendFault(emu, 0, a.circuitId)
    await emu.waitFor(() => unroutesOf(emu).some((u) => u.circuitId === a.circuitId && !u.now), 3_000, 'the Unroute of the faulted circuit')
    expect((await srv.mgmt.get(`/sessions/${s.dialer.sessionId}/route-path`)).body.data.routePath).toEqual([])
  })

  it('answers a route result for no circuit being built with Unroute now', async () => {
    const seq = emu.send({ contentType: 1022, headers: new Map([[1101, Uint8Array.of(0, 0, 0, 0)], [1102, Uint8Array.of(1)]]), body: new TextEncoder().encode('stray-circuit') })
    expect(seq).toBeGreaterThan(0)
    await emu.waitFor(() => unroutesOf(emu).some((u) => u.circuitId === 'stray-circuit' && u.now), 3_000, 'the stray circuit\'s Unroute')
  })
})

describe('the fabric API\'s view of circuits', () => {
  it('lists and shows a live circuit with its service, terminator and path, and deletes it (Unroute to its router)', async () => {
    const s = await service()
    const a = await dial(s.dialer)
    if (!a.ok) throw new Error(a.message)
    const list = await srv.fabric.get('/circuits?limit=500')
    expectStatus(list, 200)
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(a.circuitId)
    const one = await srv.fabric.get(`/circuits/${a.circuitId}`)
    expectStatus(one, 200)
    expect(one.body.data).toMatchObject({
      id: a.circuitId,
      clientId: s.dialer.sessionId,
      service: { id: s.serviceId },
      terminator: { id: s.terminatorIds[0] },
      path: { nodes: [{ id: r1.id }], links: [] },
    })
    expectStatus(await srv.fabric.del(`/circuits/${a.circuitId}`, { body: { immediate: true } }), 200)
    await emu.waitFor(() => unroutesOf(emu).some((u) => u.circuitId === a.circuitId && u.now), 3_000, 'the Unroute of the deleted circuit')
    expectStatus(await srv.fabric.get(`/circuits/${a.circuitId}`), 404)
  })
})

describe('CreateCircuitV3 (an OIDC SDK\'s dial)', () => {
  it('builds the circuit under the id its router chose, for the identity of the access token; refuses another identity and a service it may not dial', async () => {
    const s = await service()
    const tokens = await oidcSdk(srv).passwordLogin(`svc-${n}-dialer`, `svc-${n}-dialer-pass-1`)
    const a = await dialV3(emu, { identityId: s.dialer.identityId, serviceId: s.serviceId, accessToken: tokens.access_token, circuitId: 'chosen-by-the-router-1' })
    if (!a.ok) throw new Error(a.message)
    expect(a.circuitId).toBe('chosen-by-the-router-1')
    expect(Object.fromEntries(a.tags)).toMatchObject({ clientId: s.dialer.identityId, serviceId: s.serviceId })
    expect(await dialV3(emu, { identityId: s.host.identityId, serviceId: s.serviceId, accessToken: tokens.access_token })).toMatchObject({ ok: false, code: 2 })
    expect(await dialV3(emu, { identityId: s.dialer.identityId, serviceId: s.serviceId, accessToken: 'ey.not.a.token' })).toMatchObject({ ok: false, code: 2 })
    const other = await srv.create('/services', { name: `not-dialable-${n}`, encryptionRequired: false })
    expect(await dialV3(emu, { identityId: s.dialer.identityId, serviceId: other, accessToken: tokens.access_token })).toMatchObject({ ok: false, code: 6 })
    // the id is taken now
    expect(await dialV3(emu, { identityId: s.dialer.identityId, serviceId: s.serviceId, accessToken: tokens.access_token, circuitId: 'chosen-by-the-router-1' })).toMatchObject({ ok: false })
  })
})
