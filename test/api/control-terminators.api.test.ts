// Terminators SDKs host through an edge router, over the router emulator's control channel (real TLS) and an SDK's
// own Client API sign-in (a password, a legacy API session, a Bind session; one OIDC sign-in too): create and its
// reply, each refusal with the code and retry hint the router acts on, asking again (reconnects), update, remove,
// health events, the Management API's view (spec-checked) and its limits on system terminators, the fabric
// requests, a router going offline or being deleted, and a restart.
// @see router-control-plane.md §4.2, §4.3; ziti controller/handler_edge_ctrl/create_terminator_v2.go, common.go,
//   update_terminator.go, remove_terminator.go, health_event.go; controller/handler_ctrl/remove_terminators.go,
//   create_terminator.go, remove_terminator.go, update_terminator.go; management.yml terminatorDetail
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { TerminatorDetail } from '../../schemas/terminator.ts'
import { ContentType as EdgeType, CreateTerminatorResult } from '../../src/control/pb/edge_ctrl_pb.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import { oidcSdk } from '../support/oidc-sdk.ts'
import {
  bindingSdk,
  bindRequest,
  createTerminator,
  edgeErrorOf,
  fabricCreate,
  fabricRemove,
  fabricUpdate,
  removeEdgeTerminator,
  removeTerminators,
  sendHealthEvent,
  updateTerminator,
  type BindingSdk,
} from '../support/router-emulator-terminators.ts'

let srv: TestServer
let r1: RouterIdentity
let r2: RouterIdentity
let router: RouterEmulator
let other: RouterEmulator
let sdk: BindingSdk
let serviceId: string
let service2: string

const connect = (r: RouterIdentity) =>
  RouterEmulator.connect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })

async function eventually(what: string, check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const until = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`${what}: not true in time`)
    await Bun.sleep(20)
  }
}

const terminator = async (id: string) => (await srv.mgmt.get(`/terminators/${id}`)).body.data
const terminatorIds = async (filter: string) =>
  (await srv.mgmt.get(`/terminators?filter=${encodeURIComponent(filter)}`)).body.data.map((t: { id: string }) => t.id) as string[]
const isOnline = async (id: string) => (await srv.mgmt.get(`/edge-routers/${id}`)).body.data.isOnline as boolean

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 }, controlLimits: { tickEveryMs: 50 } })
  r1 = await enrollRouter(srv, 'tr-one')
  r2 = await enrollRouter(srv, 'tr-two')
  serviceId = await srv.create('/services', { name: 'tr-svc', encryptionRequired: true })
  service2 = await srv.create('/services', { name: 'tr-svc-2', encryptionRequired: true })
  sdk = await bindingSdk(srv, { name: 'tr-host', serviceId, routerIds: [r1.id, r2.id] })
  router = await connect(r1)
  other = await connect(r2)
}, 30_000)
afterAll(async () => {
  router?.close()
  other?.close()
  await srv.stop()
})

describe('CreateTerminatorV2Request', () => {
  it('answers Success as the reply to the request, and the Management API lists a system terminator of binding edge', async () => {
    const res = await createTerminator(router, bindRequest(sdk, 'tc-created', { cost: 12, precedence: 1, instanceId: 'inst-1', instanceSecret: Uint8Array.of(1, 2), peerData: { 1003: Uint8Array.of(9) } }))
    expect(res).toMatchObject({ terminatorId: 'tc-created', result: CreateTerminatorResult.Success, msg: '', errorCode: 0, retryHint: 0 })
    const d = await terminator('tc-created')
    expect([...Value.Errors(TerminatorDetail, d)]).toEqual([])
    expect(d).toMatchObject({ id: 'tc-created', address: 'tc-created', binding: 'edge', serviceId, routerId: r1.id, identity: 'inst-1', cost: 12, dynamicCost: 12, precedence: 'required' })
    expect(d.service).toMatchObject({ id: serviceId, name: 'tr-svc' })
    expect(d.router).toMatchObject({ id: r1.id, name: 'tr-one' })
    expect(await terminatorIds(`isSystem = true and hostId = "${sdk.identityId}"`)).toContain('tc-created')
    expect(await terminatorIds(`instanceId = "inst-1"`)).toEqual(['tc-created'])
    const ofService = await srv.mgmt.get(`/services/${serviceId}/terminators`)
    expect(ofService.body.data.map((t: { id: string }) => t.id)).toContain('tc-created')
  })

  it('takes the same request again (a router after a reconnect): Success, one terminator, nothing else changed', async () => {
    await createTerminator(router, bindRequest(sdk, 'tc-again', { cost: 3 }))
    const before = await terminator('tc-again')
    srv.clock.advance(1_000)
    expect((await createTerminator(router, bindRequest(sdk, 'tc-again', { cost: 3 }))).result).toBe(CreateTerminatorResult.Success)
    expect(await terminator('tc-again')).toEqual(before)
    // cost and precedence follow the request
    expect((await createTerminator(router, bindRequest(sdk, 'tc-again', { cost: 4, precedence: 2 }))).result).toBe(CreateTerminatorResult.Success)
    expect(await terminator('tc-again')).toMatchObject({ cost: 4, precedence: 'failed', createdAt: before.createdAt })
    expect(await terminatorIds('address = "tc-again"')).toEqual(['tc-again'])
  })

  it('takes it again after the router reconnected', async () => {
    await createTerminator(router, bindRequest(sdk, 'tc-reconnect'))
    router.close()
    await eventually('the router offline', async () => !(await isOnline(r1.id)))
    router = await connect(r1)
    expect((await createTerminator(router, bindRequest(sdk, 'tc-reconnect'))).result).toBe(CreateTerminatorResult.Success)
    expect(await terminatorIds('address = "tc-reconnect"')).toEqual(['tc-reconnect'])
  })

  describe('refusals (nothing stored; FailedOther with the code and hint the router acts on)', () => {
    const refused = async (req: Parameters<typeof createTerminator>[1], code: number, retryHint: number, on = () => router) => {
      const before = (await srv.mgmt.get('/terminators?limit=-1')).body.data.length
      const res = await createTerminator(on(), req)
      expect(res).toMatchObject({ terminatorId: req.address, result: CreateTerminatorResult.FailedOther, errorCode: code, retryHint })
      expect(res.msg).not.toBe('')
      expect((await srv.mgmt.get('/terminators?limit=-1')).body.data.length).toBe(before)
      return res
    }

    it('a blank id: invalid terminator, not retriable', () => refused(bindRequest(sdk, ''), 8, 3))
    it('an id longer than 512 bytes, or peer data over 64 KiB: invalid terminator, not retriable', async () => {
      await refused(bindRequest(sdk, 'x'.repeat(2_000)), 8, 3)
      await refused(bindRequest(sdk, 'tc-big', { peerData: { 1003: new Uint8Array(70_000) } }), 8, 3)
    })
    it('an unknown API session: invalid api session, start over', () => refused({ ...bindRequest(sdk, 'tc-r1'), apiSessionToken: 'no-such-token' }, 2, 2))
    it('a service session token that is not ours: invalid session, start over', () => refused({ ...bindRequest(sdk, 'tc-r2'), sessionToken: 'eyJhbGciOiJub25lIn0.e30.' }, 3, 2))
    it('a cost above 65535: invalid cost, not retriable', () => refused(bindRequest(sdk, 'tc-r3', { cost: 65_536 }), 10, 3))

    it('a Dial session: incorrect session type, start over', async () => {
      const dialer = await bindingSdk(srv, { name: 'tr-dialer', serviceId, routerIds: [r1.id], type: 'Dial' })
      await refused(bindRequest(dialer, 'tc-r4'), 4, 2)
    })

    it('an identity no edge router policy lets use this router: invalid edge router for session, start over', async () => {
      // its edge router policy names the other router only (the Client API gives no session without one)
      const lonely = await bindingSdk(srv, { name: 'tr-lonely', serviceId, routerIds: [r2.id] })
      await refused(bindRequest(lonely, 'tc-r5'), 5, 2)
      expect((await createTerminator(other, bindRequest(lonely, 'tc-r5'))).result).toBe(CreateTerminatorResult.Success)
    })

    it('an id taken by a terminator of another service or another host: conflict, not retriable; the first stays', async () => {
      await createTerminator(router, bindRequest(sdk, 'tc-taken'))
      const otherService = await bindingSdk(srv, { name: 'tr-other-svc', serviceId: service2, routerIds: [r1.id] })
      const res = await refused(bindRequest(otherService, 'tc-taken'), 1, 3)
      expect(res.msg).toBe('selected id conflicts with terminator for different service')
      const otherHost = await bindingSdk(srv, { name: 'tr-other-host', serviceId, routerIds: [r1.id] })
      expect((await refused(bindRequest(otherHost, 'tc-taken'), 1, 3)).msg).toBe('selected id conflicts with terminator for different identity')
      expect((await refused(bindRequest(sdk, 'tc-taken'), 1, 3, () => other)).msg).toBe('selected id conflicts with terminator for different router')
      expect(await terminator('tc-taken')).toMatchObject({ serviceId, routerId: r1.id })
    })

    it('an API session that logged out: invalid api session', async () => {
      const leaving = await bindingSdk(srv, { name: 'tr-leaving', serviceId, routerIds: [r1.id] })
      expectStatus(await srv.as(leaving.apiSessionToken, 'client').del('/current-api-session'), 200)
      await refused(bindRequest(leaving, 'tc-r6'), 2, 2)
    })
  })

  it('an OIDC sign-in (the API session token an access JWT, the session its token alone) binds too', async () => {
    const id = await srv.create('/identities', { name: 'tr-oidc', type: 'User', isAdmin: false, roleAttributes: ['tr-host-tag'] })
    expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId: id, username: 'tr-oidc', password: 'tr-oidc-pass-1' }), 201)
    const oidc = oidcSdk(srv)
    const tokens = await oidc.passwordLogin('tr-oidc', 'tr-oidc-pass-1')
    const session = await oidc.api(tokens.access_token, 'client').post('/sessions', { serviceId, type: 'Bind' })
    expectStatus(session, 201)
    const req = { address: 'tc-oidc', sessionToken: session.body.data.token, apiSessionToken: tokens.access_token }
    expect((await createTerminator(router, req)).result).toBe(CreateTerminatorResult.Success)
    expect(await terminatorIds(`hostId = "${id}"`)).toEqual(['tc-oidc'])
    // a service token of another sign-in's session: an internal error the router retries
    const res = await createTerminator(router, { ...req, address: 'tc-oidc-2', sessionToken: sdk.sessionToken })
    expect(res).toMatchObject({ result: CreateTerminatorResult.FailedOther, errorCode: 1, retryHint: 0 })
  })
})

describe('UpdateTerminatorRequest', () => {
  const update = (more: Record<string, unknown>) => updateTerminator(router, { sessionToken: sdk.sessionToken, apiSessionToken: sdk.apiSessionToken, ...more })

  it('changes cost and precedence, answering the empty UpdateTerminatorResponse as the reply', async () => {
    await createTerminator(router, bindRequest(sdk, 'tu-1', { cost: 1 }))
    const f = await update({ terminatorId: 'tu-1', cost: 500, updateCost: true, precedence: 1, updatePrecedence: true })
    expect(f.contentType).toBe(EdgeType.UpdateTerminatorResponseType)
    expect(f.body.length).toBe(0)
    expect(await terminator('tu-1')).toMatchObject({ cost: 500, precedence: 'required' })
    expect((await update({ terminatorId: 'tu-1', precedence: 0, updatePrecedence: true })).contentType).toBe(EdgeType.UpdateTerminatorResponseType)
    expect(await terminator('tu-1')).toMatchObject({ cost: 500, precedence: 'default' })
  })

  it('refuses with an edge error: unknown terminator, another router\'s, a cost or precedence out of range, a Dial session', async () => {
    await createTerminator(router, bindRequest(sdk, 'tu-2'))
    expect(edgeErrorOf(await update({ terminatorId: 'nope', cost: 1, updateCost: true }))).toEqual({ message: 'invalid terminator: not found', code: 8, retryHint: 3 })
    const fromOther = edgeErrorOf(await updateTerminator(other, { sessionToken: sdk.sessionToken, apiSessionToken: sdk.apiSessionToken, terminatorId: 'tu-2', cost: 1, updateCost: true }))
    expect(fromOther).toEqual({ message: `update.terminator request for terminator tu-2 on router ${r1.id} came from router ${r2.id}`, code: 8, retryHint: 3 })
    expect(edgeErrorOf(await update({ terminatorId: 'tu-2', cost: 70_000, updateCost: true }))).toMatchObject({ code: 10, retryHint: 3 })
    expect(edgeErrorOf(await update({ terminatorId: 'tu-2', precedence: 7, updatePrecedence: true }))).toMatchObject({ code: 9, retryHint: 3 })
    const dialer = await bindingSdk(srv, { name: 'tu-dialer', serviceId, routerIds: [r1.id], type: 'Dial' })
    expect(edgeErrorOf(await updateTerminator(router, { sessionToken: dialer.sessionToken, apiSessionToken: dialer.apiSessionToken, terminatorId: 'tu-2', cost: 1, updateCost: true }))).toMatchObject({ code: 4, retryHint: 2 })
    expect(await terminator('tu-2')).toMatchObject({ cost: 0, precedence: 'default' })
  })
})

describe('RemoveTerminatorsRequest and RemoveTerminatorRequest', () => {
  it('removes the router\'s own; unknown ids and other routers\' are a success that removes nothing of theirs', async () => {
    await createTerminator(router, bindRequest(sdk, 'rm-1'))
    await createTerminator(router, bindRequest(sdk, 'rm-2'))
    await createTerminator(other, bindRequest(sdk, 'rm-other'))
    expect(await removeTerminators(router, ['rm-1', 'rm-unknown', 'rm-other'])).toEqual({ success: true, text: '', errorCode: undefined })
    expectError(await srv.mgmt.get('/terminators/rm-1'), 404, 'NOT_FOUND')
    expect(await terminator('rm-other')).toMatchObject({ routerId: r2.id })
    expect(await terminator('rm-2')).toMatchObject({ routerId: r1.id })
    expect(await removeTerminators(router, [])).toMatchObject({ success: true })
    expect(await removeTerminators(router, ['only-unknown'])).toMatchObject({ success: true })
  })

  it('the edge form removes one terminator of binding edge on this router, answering the empty response', async () => {
    await createTerminator(router, bindRequest(sdk, 'rm-edge'))
    const f = await removeEdgeTerminator(router, { terminatorId: 'rm-edge' })
    expect(f.contentType).toBe(EdgeType.RemoveTerminatorResponseType)
    expectError(await srv.mgmt.get('/terminators/rm-edge'), 404, 'NOT_FOUND')
    expect(edgeErrorOf(await removeEdgeTerminator(router, { terminatorId: 'rm-edge' }))).toMatchObject({ code: 8, retryHint: 3 })
    expect(edgeErrorOf(await removeEdgeTerminator(router, { terminatorId: 'rm-other' }))).toMatchObject({ code: 8 })
  })
})

describe('HealthEventRequest', () => {
  it('counts passed and failed checks of a Bind session, answers nothing, ignores other sessions', async () => {
    const admin = await srv.login('admin', 'admin-pass-1')
    const metric = async (result: string) => {
      const text = (await srv.raw('GET', '/metrics', { session: admin, offSpec: 'GET /metrics is Prometheus text, not an edge API answer' })).text
      return Number(new RegExp(`^edgeplane_terminator_health_checks_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
    }
    const before = router.received.length
    const base = { sessionToken: sdk.sessionToken, apiSessionToken: sdk.apiSessionToken, terminatorId: 'tc-created' }
    sendHealthEvent(router, { ...base, checkPassed: true })
    sendHealthEvent(router, { ...base, checkPassed: true })
    sendHealthEvent(router, { ...base, checkPassed: false })
    sendHealthEvent(router, { ...base, apiSessionToken: 'nope', checkPassed: false })
    await eventually('the checks counted', async () => (await metric('passed')) === 2 && (await metric('failed')) === 1)
    expect(router.received.slice(before).filter((f) => f.contentType !== 5 && !f.headers.has(6))).toEqual([])
  })
})

describe('the Management API and system terminators', () => {
  it('refuses PUT and PATCH of a system terminator (400 ENTITY_CAN_NOT_BE_UPDATED) and takes DELETE, as the real controller', async () => {
    await createTerminator(router, bindRequest(sdk, 'sys-1', { cost: 2 }))
    expectError(await srv.mgmt.patch('/terminators/sys-1', { cost: 9 }), 400, 'ENTITY_CAN_NOT_BE_UPDATED')
    expectError(await srv.mgmt.put('/terminators/sys-1', { service: serviceId, router: r1.id, binding: 'edge', address: 'x' }), 400, 'ENTITY_CAN_NOT_BE_UPDATED')
    expect(await terminator('sys-1')).toMatchObject({ cost: 2, address: 'sys-1' })
    expectStatus(await srv.mgmt.del('/terminators/sys-1'), 200)
    expectError(await srv.mgmt.get('/terminators/sys-1'), 404, 'NOT_FOUND')
    // the router may make it again
    expect((await createTerminator(router, bindRequest(sdk, 'sys-1'))).result).toBe(CreateTerminatorResult.Success)
  })
})

describe('router-hosted (fabric) terminators', () => {
  it('creates (Result with the new id), updates and removes terminators of a router\'s own binding', async () => {
    const created = await fabricCreate(router, { serviceId: service2, binding: '', address: 'tcp:db.internal:5432', cost: 7, precedence: 0, instanceId: '', instanceSecret: new Uint8Array(0), peerData: {} })
    expect(created.success).toBe(true)
    const id = created.text
    expect(await terminator(id)).toMatchObject({ binding: 'transport', address: 'tcp:db.internal:5432', serviceId: service2, routerId: r1.id, cost: 7 })
    expect(await terminatorIds(`id = "${id}" and isSystem = false`)).toEqual([id])
    expect(await fabricUpdate(router, { terminatorId: id, cost: 8, updateCost: true, precedence: 2, updatePrecedence: true })).toMatchObject({ success: true })
    expect(await terminator(id)).toMatchObject({ cost: 8, precedence: 'failed' })
    expect(await fabricUpdate(other, { terminatorId: id, cost: 1, updateCost: true })).toEqual({ success: false, text: 'terminator not owned by requesting router', errorCode: undefined })
    expect(await fabricRemove(other, id)).toMatchObject({ success: false, text: 'terminator not owned by requesting router' })
    expect(await fabricRemove(router, id)).toMatchObject({ success: true })
    expect(await fabricRemove(router, id)).toMatchObject({ success: false })
    expect(await fabricCreate(router, { serviceId: 'no-such-service', binding: 'transport', address: 'tcp:x:1' })).toMatchObject({ success: false })
    expect(await fabricCreate(router, { serviceId: service2, binding: 'transport', address: 'tcp:x:1', cost: 70_000 })).toMatchObject({ success: false })
  })
})

describe('a router that goes offline, a router deleted, a restart', () => {
  it('keeps its terminators listed as they were while it is offline, as the real controller does', async () => {
    await createTerminator(other, bindRequest(sdk, 'off-1'))
    const before = await terminator('off-1')
    other.close()
    await eventually('the router offline', async () => !(await isOnline(r2.id)))
    expect(await terminator('off-1')).toEqual(before)
    other = await connect(r2)
  })

  it('keeps every terminator and its fields across a restart; the router asks again and is answered Success', async () => {
    await createTerminator(router, bindRequest(sdk, 'keep-1', { cost: 33, instanceId: 'i-keep' }))
    const before = await terminator('keep-1')
    router.close()
    other.close()
    await srv.restart()
    expect(await terminator('keep-1')).toEqual(before)
    router = await connect(r1)
    other = await connect(r2)
    expect((await createTerminator(router, bindRequest(sdk, 'keep-1', { cost: 33, instanceId: 'i-keep' }))).result).toBe(CreateTerminatorResult.Success)
    expect(await terminator('keep-1')).toEqual(before)
  }, 30_000)

  it('deletes a router\'s terminators with the router', async () => {
    const r3 = await enrollRouter(srv, 'tr-three')
    const third = await connect(r3)
    const host = await bindingSdk(srv, { name: 'tr-host-3', serviceId, routerIds: [r3.id] })
    expect((await createTerminator(third, bindRequest(host, 'gone-1'))).result).toBe(CreateTerminatorResult.Success)
    expectStatus(await srv.mgmt.del(`/edge-routers/${r3.id}`), 200)
    expect(await third.waitClosed()).toBe(true)
    expectError(await srv.mgmt.get('/terminators/gone-1'), 404, 'NOT_FOUND')
  })
})
