// Validating terminators with their routers (ValidateTerminatorsV2Request 1041 → Response 1042), over the router
// emulator's control channel: 5 s after a terminator is made (the fake clock) and when its router connects, with
// fixInvalid and postCreate set and a marker per terminator; what the router says is invalid is deleted, a stale
// marker settles nothing. And a controller whose writes are refused (the write queue full): FailedBusy with the
// TooBusy hint, the busy Result of a removal, while a terminator asked for again unchanged is still a Success.
// @see router-control-plane.md §4.3; ziti controller/network/router_messaging.go, network.go ValidateTerminators;
//   controller/handler_edge_ctrl/errors.go (busyError, retryHintToResult); common/handler_common SendServerBusy
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { CreateTerminatorResult } from '../../src/control/pb/edge_ctrl_pb.ts'
import { expectError, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import {
  answerValidation,
  bindingSdk,
  bindRequest,
  createTerminator,
  nextValidation,
  removeTerminators,
  validationRequests,
  type BindingSdk,
} from '../support/router-emulator-terminators.ts'

async function eventually(what: string, check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const until = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`${what}: not true in time`)
    await Bun.sleep(20)
  }
}

describe('validation with the router', () => {
  let srv: TestServer
  let serviceId: string
  beforeAll(async () => {
    srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 }, controlLimits: { tickEveryMs: 50 }, terminatorValidateEveryMs: 50 })
    serviceId = await srv.create('/services', { name: 'tv-svc', encryptionRequired: true })
  }, 30_000)
  afterAll(async () => {
    await srv.stop()
  })

  const connect = (r: RouterIdentity) =>
    RouterEmulator.connect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })
  const exists = async (id: string) => (await srv.mgmt.get(`/terminators/${id}`)).status === 200
  /** A router of its own and an SDK that binds through it. */
  const setup = async (name: string): Promise<{ r: RouterIdentity; router: RouterEmulator; sdk: BindingSdk }> => {
    const r = await enrollRouter(srv, name)
    const sdk = await bindingSdk(srv, { name: `${name}-host`, serviceId, routerIds: [r.id] })
    return { r, router: await connect(r), sdk }
  }

  it('asks the router about a new terminator once it is older than 5 s, and deletes it when the router does not have it', async () => {
    const { router, sdk } = await setup('tv-new')
    await createTerminator(router, bindRequest(sdk, 'tv-new-1'))
    await createTerminator(router, bindRequest(sdk, 'tv-new-2'))
    await Bun.sleep(200)
    expect(validationRequests(router)).toEqual([])
    srv.clock.advance(5_001)
    const v = await nextValidation(router)
    expect(v.req.fixInvalid).toBe(true)
    expect(v.req.postCreate).toBe(true)
    expect(v.req.terminators.map((t) => ({ id: t.id, binding: t.binding, address: t.address })).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'tv-new-1', binding: 'edge', address: 'tv-new-1' },
      { id: 'tv-new-2', binding: 'edge', address: 'tv-new-2' },
    ])
    expect(v.req.terminators.every((t) => t.marker > 0n)).toBe(true)
    answerValidation(router, v, (id) => id === 'tv-new-1')
    await eventually('the invalid terminator deleted', async () => !(await exists('tv-new-2')))
    expect(await exists('tv-new-1')).toBe(true)
    // settled: no more questions about them
    srv.clock.advance(60_000)
    await Bun.sleep(200)
    expect(validationRequests(router)).toHaveLength(1)
    router.close()
  }, 20_000)

  it('asks a router that connects about every terminator held for it, and deletes those it says are invalid', async () => {
    const { r, router, sdk } = await setup('tv-connect')
    for (const id of ['tv-c-1', 'tv-c-2', 'tv-c-3']) await createTerminator(router, bindRequest(sdk, id))
    router.close()
    await eventually('the router offline', async () => !(await srv.mgmt.get(`/edge-routers/${r.id}`)).body.data.isOnline)
    // offline, its terminators stay
    expect(await exists('tv-c-1')).toBe(true)
    srv.clock.advance(6_000)
    const again = await connect(r)
    const v = await nextValidation(again)
    expect(v.req.terminators.map((t) => t.id).sort()).toEqual(['tv-c-1', 'tv-c-2', 'tv-c-3'])
    answerValidation(again, v, (id) => id !== 'tv-c-3')
    await eventually('tv-c-3 deleted', async () => !(await exists('tv-c-3')))
    expect(await exists('tv-c-1')).toBe(true)
    expect(await exists('tv-c-2')).toBe(true)
    again.close()
  }, 20_000)

  it('settles nothing with an answer of another marker, and asks again with new markers on the next connect', async () => {
    const { r, router, sdk } = await setup('tv-stale')
    await createTerminator(router, bindRequest(sdk, 'tv-s-1'))
    srv.clock.advance(5_001)
    const v = await nextValidation(router)
    answerValidation(router, v, () => false, (m) => m + 1_000n)
    await Bun.sleep(300)
    expect(await exists('tv-s-1')).toBe(true)
    router.close()
    await eventually('the router offline', async () => !(await srv.mgmt.get(`/edge-routers/${r.id}`)).body.data.isOnline)
    const again = await connect(r)
    const w = await nextValidation(again)
    expect(w.req.terminators.map((t) => t.id)).toEqual(['tv-s-1'])
    expect(w.req.terminators[0]!.marker).not.toBe(v.req.terminators[0]!.marker)
    answerValidation(again, w, () => true)
    await Bun.sleep(200)
    expect(await exists('tv-s-1')).toBe(true)
    again.close()
  }, 20_000)

  it('validates a terminator an admin made for a connected router too (any terminator created)', async () => {
    const { r, router } = await setup('tv-admin')
    const id = await srv.create('/terminators', { service: serviceId, router: r.id, binding: 'transport', address: 'tcp:a:1' })
    srv.clock.advance(5_001)
    const v = await nextValidation(router)
    expect(v.req.terminators.map((t) => ({ id: t.id, binding: t.binding }))).toEqual([{ id, binding: 'transport' }])
    answerValidation(router, v, () => false)
    await eventually('the admin\'s terminator deleted', async () => !(await exists(id)))
    router.close()
  }, 20_000)
})

describe('a router away past the grace', () => {
  let srv: TestServer
  let serviceId: string
  beforeAll(async () => {
    srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 }, terminatorOfflineRemoveMs: 400 })
    serviceId = await srv.create('/services', { name: 'away-svc', encryptionRequired: true })
  }, 30_000)
  afterAll(async () => {
    await srv.stop()
  })
  const connect = (r: RouterIdentity) =>
    RouterEmulator.connect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })
  const exists = async (id: string) => (await srv.mgmt.get(`/terminators/${id}`)).status === 200

  it('loses the terminators it made for its SDKs, not an admin\'s; one back within the grace keeps them', async () => {
    const r = await enrollRouter(srv, 'away-r')
    const sdk = await bindingSdk(srv, { name: 'away-host', serviceId, routerIds: [r.id] })
    let router = await connect(r)
    for (const id of ['aw-1', 'aw-2']) expect((await createTerminator(router, bindRequest(sdk, id))).result).toBe(CreateTerminatorResult.Success)
    const admins = await srv.create('/terminators', { service: serviceId, router: r.id, binding: 'transport', address: 'tcp:a:1' })
    // away for less than the grace: everything stays
    router.close()
    await eventually('the router offline', async () => !(await srv.mgmt.get(`/edge-routers/${r.id}`)).body.data.isOnline)
    for (let i = 0; ; i++) {
      const o = await RouterEmulator.tryConnect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })
      if (o.ok) {
        router = o.router
        break
      }
      if (i === 20) throw new Error('the router could not connect again')
      await Bun.sleep(20)
    }
    await Bun.sleep(700)
    expect(await exists('aw-1')).toBe(true)
    // away for good (killed): its SDKs' terminators go after the grace, the admin's stays
    const leftAt = performance.now()
    router.close()
    await eventually('the hosted terminators removed', async () => !(await exists('aw-1')) && !(await exists('aw-2')))
    expect(performance.now() - leftAt).toBeGreaterThanOrEqual(350)
    expect(await exists(admins)).toBe(true)
  }, 20_000)
})

describe('a controller whose writes are refused', () => {
  let setupSrv: TestServer
  let srv: TestServer
  let r: RouterIdentity
  let sdk: BindingSdk
  let dataDir: string
  beforeAll(async () => {
    // the routers, sessions and one terminator are made on a controller that writes, then it restarts on the same data
    // with a write queue of 0 (every write refused: the real controller's rate limiter full)
    setupSrv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 } })
    dataDir = setupSrv.dataDir
    r = await enrollRouter(setupSrv, 'tb-router')
    const serviceId = await setupSrv.create('/services', { name: 'tb-svc', encryptionRequired: true })
    sdk = await bindingSdk(setupSrv, { name: 'tb-host', serviceId, routerIds: [r.id] })
    const router = await RouterEmulator.connect({ port: setupSrv.server.control.port!, caPem: setupSrv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })
    expect((await createTerminator(router, bindRequest(sdk, 'tb-kept', { cost: 5 }))).result).toBe(CreateTerminatorResult.Success)
    router.close()
    await setupSrv.server.stop()
    srv = await startTestServer({ dataDir, clock: setupSrv.clock, ctrlListen: { host: '127.0.0.1', port: 0 }, writeQueue: { queueSize: 0 } })
  }, 30_000)
  afterAll(async () => {
    await srv.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  /** Connects the router, once its previous connection has left (the churn guard refuses a second one). */
  const connect = async () => {
    await eventually('the router offline', () => srv.server.control.registry.get(r.id) === undefined)
    return RouterEmulator.connect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })
  }

  it('answers a new terminator FailedBusy with the TooBusy hint (the router asks again later); nothing is stored', async () => {
    const router = await connect()
    const res = await createTerminator(router, bindRequest(sdk, 'tb-new'))
    expect(res).toMatchObject({ terminatorId: 'tb-new', result: CreateTerminatorResult.FailedBusy, errorCode: 1, retryHint: 1 })
    expectError(await srv.mgmt.get('/terminators/tb-new'), 404, 'NOT_FOUND')
    // a change of cost is a write too
    expect((await createTerminator(router, bindRequest(sdk, 'tb-kept', { cost: 6 }))).result).toBe(CreateTerminatorResult.FailedBusy)
    // the same terminator asked for again unchanged needs no write: Success
    expect((await createTerminator(router, bindRequest(sdk, 'tb-kept', { cost: 5 }))).result).toBe(CreateTerminatorResult.Success)
    router.close()
  })

  it('answers a removal with the busy Result (failure, header 10 = 1), and the terminator stays', async () => {
    const router = await connect()
    expect(await removeTerminators(router, ['tb-kept'])).toEqual({ success: false, text: 'server too busy', errorCode: 1 })
    expect((await srv.mgmt.get('/terminators/tb-kept')).status).toBe(200)
    router.close()
  })

  it('refuses an API session that expired meanwhile: invalid api session, start over', async () => {
    srv.clock.advance(31 * 60_000)
    const router = await connect()
    expect(await createTerminator(router, bindRequest(sdk, 'tb-late'))).toMatchObject({ result: CreateTerminatorResult.FailedOther, errorCode: 2, retryHint: 2 })
    router.close()
  })
})
