// Routers on the control channel, with the router emulator (test/support/router-emulator.ts) over real TLS: the
// hello and its answer, the edge handshake (ServerHello → ClientHello), heartbeats, ping, online/offline in the REST
// views (spec-checked), admission refusals, the churn guard, and the disconnects the policy graph asks for.
// @see router-control-plane.md §1.2, §2.4, §2.7, §3.1, §4.1; management.yml edgeRouterDetail, client.yml sessionDetail
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { fromBinary } from '@bufbuild/protobuf'
import { ServerHelloSchema, ContentType as EdgeType } from '../../src/control/pb/edge_ctrl_pb.ts'
import { ChannelContentType, ChannelHeader, HELLO_SEQUENCE } from '../../src/control/wire/control-frame.ts'
import { decodeString, encodeU64, readBool } from '../../src/control/wire/control-headers.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, replyForOf, RouterEmulator, type EmulatorOptions, type RouterIdentity } from '../support/router-emulator.ts'
import { makeForeignClientCert } from '../support/pki.ts'
import { openTls } from '../support/raw-wire.ts'

let srv: TestServer
let ctrlPort: number
let caBundle: string

beforeAll(async () => {
  srv = await startTestServer({
    ctrlListen: { host: '127.0.0.1', port: 0 },
    controlLimits: { helloTimeoutMs: 400, tickEveryMs: 50 },
  })
  ctrlPort = srv.server.control.port!
  caBundle = srv.server.pki.caBundlePem
})
afterAll(async () => {
  await srv.stop()
})

const opts = (r: RouterIdentity, more: Partial<EmulatorOptions> = {}): EmulatorOptions => ({
  port: ctrlPort,
  caPem: caBundle,
  tls: { cert: r.cert, key: r.key },
  routerId: r.id,
  ...more,
})

/** Polls `check` until it holds (offline/online changes follow a socket event). */
async function eventually(check: () => Promise<boolean>, ms = 3_000): Promise<void> {
  const until = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > until) throw new Error('the condition did not come true in time')
    await Bun.sleep(20)
  }
}

const edgeRouter = async (id: string) => {
  const res = await srv.mgmt.get(`/edge-routers/${id}`)
  expectStatus(res, 200)
  return res.body.data
}

describe('the hello and its answer', () => {
  let r: RouterIdentity
  let router: RouterEmulator
  beforeAll(async () => {
    r = await enrollRouter(srv, 'ctl-hello')
    router = await RouterEmulator.connect(opts(r))
  })
  afterAll(() => router.close())

  it('answers with a successful Result on sequence -1 carrying version, capability bit 6, connection and controller ids', () => {
    const a = router.helloAnswer
    expect(a.contentType).toBe(ChannelContentType.Result)
    expect(a.sequence).toBe(HELLO_SEQUENCE)
    expect([...a.headers.get(ChannelHeader.ReplyFor)!]).toEqual([0xff, 0xff, 0xff, 0xff])
    expect([...a.headers.get(ChannelHeader.ResultSuccess)!]).toEqual([1])
    expect(decodeString(a.headers.get(ChannelHeader.HelloVersion)!).split('|')).toHaveLength(5)
    // bit 6 (SupportsJWTLegacySessions) and nothing else: no grouping (bit 5)
    expect([...a.headers.get(1002)!]).toEqual([0x40])
    expect(decodeString(a.headers.get(ChannelHeader.Id)!)).toBe(srv.server.pki.server.view.subjectCn)
    expect(decodeString(a.headers.get(ChannelHeader.ConnectionId)!)).not.toBe('')
    // the grouped hello's IsGrouped and Type come back, with a group secret, as the real listener answers
    expect(readBool(a.headers, ChannelHeader.IsGrouped)).toBe(true)
    expect(decodeString(a.headers.get(ChannelHeader.Type)!)).toBe('ctrl.default')
    expect(a.headers.get(ChannelHeader.GroupSecret)!.length).toBe(16)
    expect(a.body.length).toBe(0)
  })

  it('sends an edge router ServerHello with header 1024 and the data of the instant strategy', async () => {
    const f = await router.waitFor((f) => f.contentType === EdgeType.ServerHelloType)
    expect(f.sequence).toBeGreaterThanOrEqual(1)
    expect(readBool(f.headers, 1024)).toBe(true)
    const hello = fromBinary(ServerHelloSchema, f.body)
    expect(hello.version).not.toBe('')
    expect(hello.data).toEqual({ instant: 'true', routerModel: 'true' })
  })

  it('shows the router online with what its ClientHello said, spec-checked, on both router views', async () => {
    await eventually(async () => (await edgeRouter(r.id)).syncStatus === 'SYNC_DONE')
    const d = await edgeRouter(r.id)
    expect(d.isOnline).toBe(true)
    expect(d.supportedProtocols).toEqual({ tls: 'tls://127.0.0.1:3022' })
    expect(d.hostname).toBe('127.0.0.1')
    expect(d.versionInfo).toEqual({ version: 'v0.0.0', revision: 'local', buildDate: '2020-01-01 01:01:01', os: 'linux', arch: 'amd64' })
    expect(d.capabilities).toEqual(['MULTICHANNEL', 'CONNECTV2', 'SERVICESUBSCRIPTIONS', 'POSTURECHECKS', 'BINDSUCCESS'])
    const fabricView = await srv.mgmt.get(`/routers/${r.id}`)
    expectStatus(fabricView, 200)
    expect(fabricView.body.data.isOnline).toBe(true)
    const online = await srv.mgmt.get(`/edge-routers?filter=${encodeURIComponent('online = true')}`)
    expect(online.body.data.map((x: { id: string }) => x.id)).toContain(r.id)
    const connected = await srv.mgmt.get(`/routers?filter=${encodeURIComponent('connected = true')}`)
    expect(connected.body.data.map((x: { id: string }) => x.id)).toContain(r.id)
  })

  it('answers a ping with a Result "ok" as its reply', async () => {
    const seq = router.send({ contentType: ChannelContentType.Ping })
    const f = await router.waitFor((f) => f.contentType === ChannelContentType.Result && replyForOf(f) === seq)
    expect(readBool(f.headers, ChannelHeader.ResultSuccess)).toBe(true)
    expect(decodeString(f.body)).toBe('ok')
  })

  it('answers a heartbeat with the same 8 bytes in header 6, within a few ms even with nothing else to send', async () => {
    router.heartbeat(0x0102030405060708n)
    const f = await router.waitFor((f) => f.headers.get(ChannelHeader.HeartbeatResponse) !== undefined, 1_000)
    expect([...f.headers.get(ChannelHeader.HeartbeatResponse)!]).toEqual([...encodeU64(0x0102030405060708n)])
  })

  it('drops a content type it has no handler for and stays connected', async () => {
    router.send({ contentType: 31_337, body: new Uint8Array([1, 2, 3]) })
    const seq = router.send({ contentType: ChannelContentType.Ping })
    await router.waitFor((f) => replyForOf(f) === seq)
    expect(router.isClosed).toBe(false)
  })

  it('counts the router and its frames in the metrics', async () => {
    const admin = await srv.login('admin', 'admin-pass-1')
    const res = await srv.raw('GET', '/metrics', { session: admin, offSpec: 'GET /metrics is Prometheus text, not an edge API answer' })
    expect(res.text).toMatch(/^edgeplane_control_routers_connected [1-9]/m)
    expect(res.text).toContain('edgeplane_control_messages_total{direction="out",type="ServerHelloType"}')
    expect(res.text).toContain('edgeplane_control_routers_sync_status{status="SYNC_DONE"}')
  })
})

describe('online and offline in the client views', () => {
  let r: RouterIdentity
  let token: string
  let serviceId: string
  beforeAll(async () => {
    r = await enrollRouter(srv, 'ctl-client')
    const identityId = await srv.create('/identities', { name: 'ctl-user', type: 'User', isAdmin: false, roleAttributes: ['ctl'] })
    expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId, username: 'ctl-user', password: 'ctl-user-pass' }), 201)
    serviceId = await srv.create('/services', { name: 'ctl-svc', roleAttributes: ['ctl'], encryptionRequired: true })
    await srv.create('/edge-router-policies', { name: 'ctl-erp', semantic: 'AnyOf', identityRoles: ['#ctl'], edgeRouterRoles: [`@${r.id}`] })
    await srv.create('/service-edge-router-policies', { name: 'ctl-serp', semantic: 'AnyOf', serviceRoles: ['#ctl'], edgeRouterRoles: [`@${r.id}`] })
    await srv.create('/service-policies', { name: 'ctl-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#ctl'], serviceRoles: ['#ctl'] })
    token = await srv.login('ctl-user', 'ctl-user-pass', 'client')
  })

  it('lists the router offline while it is not connected, with empty protocols and SYNC_UNKNOWN', async () => {
    const res = await srv.as(token, 'client').get('/current-identity/edge-routers')
    expectStatus(res, 200)
    const row = res.body.data.find((x: { id: string }) => x.id === r.id)
    expect(row).toMatchObject({ isOnline: false, supportedProtocols: {}, syncStatus: 'SYNC_UNKNOWN' })
  })

  it('shows it online in current-identity/edge-routers, the service\'s routers and a session\'s edgeRouters; offline the moment it leaves', async () => {
    const router = await RouterEmulator.connect(opts(r, { listeners: [{ protocol: 'tls', host: 'er.example.net', port: 4433 }] }))
    const client = srv.as(token, 'client')
    await eventually(async () => (await edgeRouter(r.id)).syncStatus === 'SYNC_DONE')
    const mine = (await client.get('/current-identity/edge-routers')).body.data.find((x: { id: string }) => x.id === r.id)
    expect(mine).toMatchObject({ isOnline: true, supportedProtocols: { tls: 'tls://er.example.net:4433' } })
    const forService = await client.get(`/services/${serviceId}/edge-routers`)
    expectStatus(forService, 200)
    expect(forService.body.data.edgeRouters[0]).toMatchObject({ isOnline: true, supportedProtocols: { tls: 'tls://er.example.net:4433' } })
    const session = await client.post('/sessions', { serviceId, type: 'Dial' })
    expectStatus(session, 201)
    const detail = await client.get(`/sessions/${session.body.data.id}`)
    expect(detail.body.data.edgeRouters).toEqual([
      expect.objectContaining({ name: 'ctl-client', isOnline: true, hostname: 'er.example.net', supportedProtocols: { tls: 'tls://er.example.net:4433' }, urls: { tls: 'tls://er.example.net:4433' } }),
    ])
    router.close()
    await eventually(async () => (await edgeRouter(r.id)).isOnline === false, 2_000)
    const after = await client.get(`/sessions/${session.body.data.id}`)
    expect(after.body.data.edgeRouters[0]).toMatchObject({ isOnline: false, supportedProtocols: {}, syncStatus: 'SYNC_UNKNOWN' })
    const view = await edgeRouter(r.id)
    expect(view).toMatchObject({ isOnline: false, hostname: '', supportedProtocols: {}, syncStatus: 'SYNC_UNKNOWN' })
    expect(view.versionInfo).toEqual({ version: '', revision: '', buildDate: '', os: '', arch: '' })
  })
})

describe('heartbeats from the controller', () => {
  it('stamps header 5 and closes a router that answers none (after twice the timeout, then the timeout)', async () => {
    const s = await startTestServer({
      ctrlListen: { host: '127.0.0.1', port: 0 },
      controlLimits: { tickEveryMs: 20 },
      // long enough that a loaded machine's delays in answering are not taken for silence
      controlHeartbeat: { sendIntervalMs: 100, closeUnresponsiveMs: 600 },
    })
    try {
      const r = await enrollRouter(s, 'ctl-silent')
      const base = { port: s.server.control.port!, caPem: s.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id }
      const silent = await RouterEmulator.connect({ ...base, answerHeartbeats: false })
      await silent.waitFor((f) => f.headers.get(ChannelHeader.Heartbeat)?.length === 8, 1_000, 'a heartbeat stamp')
      expect(await silent.waitClosed(5_000)).toBe(true)
      // one that answers stays (the churn guard is past: the silent one is gone)
      s.clock.advance(61_000)
      const polite = await RouterEmulator.connect(base)
      // past the grace (twice the timeout) and one more timeout: a silent router would be gone by now
      await Bun.sleep(2_500)
      expect(polite.isClosed).toBe(false)
      expect(polite.received.filter((f) => f.headers.get(ChannelHeader.Heartbeat)).length).toBeGreaterThan(10)
      polite.close()
    } finally {
      await s.stop()
    }
  })
})

describe('admission: refused routers are closed without a hello answer', () => {
  let a: RouterIdentity
  let b: RouterIdentity
  beforeAll(async () => {
    a = await enrollRouter(srv, 'ctl-adm-a')
    b = await enrollRouter(srv, 'ctl-adm-b')
  })

  const expectRefused = async (o: EmulatorOptions) => {
    const outcome = await RouterEmulator.tryConnect(o)
    expect(outcome.ok).toBe(false)
    if (!outcome.ok) {
      expect(outcome.closed).toBe(true)
      if (outcome.closed) expect(outcome.received.length).toBe(0)
    }
  }

  it('refuses an unknown router id', () => expectRefused(opts(a, { routerId: 'no-such-router' })))
  it('refuses a router whose enrollment is not complete', async () => {
    const id = await srv.create('/edge-routers', { name: 'ctl-unenrolled' })
    await expectRefused(opts(a, { routerId: id }))
  })
  it('refuses a certificate whose fingerprint is not the router\'s', () => expectRefused(opts(a, { routerId: b.id })))
  it('refuses a certificate that does not chain to the controller\'s CA', async () => {
    const foreign = await makeForeignClientCert({ commonName: a.id, clock: srv.clock })
    await expectRefused(opts(a, { tls: { cert: foreign.certPem, key: foreign.keyPem } }))
  })
  it('refuses a connection without a client certificate', () => expectRefused(opts(a, { tls: undefined })))
  it('refuses a hello without a version header', () => expectRefused(opts(a, { helloHeaders: { [ChannelHeader.HelloVersion]: null } })))
  it('refuses a disabled router', async () => {
    const c = await enrollRouter(srv, 'ctl-adm-disabled')
    expectStatus(await srv.mgmt.patch(`/edge-routers/${c.id}`, { disabled: true }), 200)
    await expectRefused(opts(c))
  })
  it('admits the router with its own certificate (the refusals above were for cause)', async () => {
    const ok = await RouterEmulator.connect(opts(a))
    ok.close()
    await eventually(async () => (await edgeRouter(a.id)).isOnline === false)
  })
  it('gives a router redialing into its group its connection id and group secret back (else it refuses the underlay)', async () => {
    const secret = Uint8Array.from({ length: 16 }, (_, i) => i + 1)
    const again = await RouterEmulator.connect(opts(a, { helloHeaders: { [ChannelHeader.ConnectionId]: new TextEncoder().encode('grp-1'), [ChannelHeader.GroupSecret]: secret } }))
    expect(decodeString(again.helloAnswer.headers.get(ChannelHeader.ConnectionId)!)).toBe('grp-1')
    expect([...again.helloAnswer.headers.get(ChannelHeader.GroupSecret)!]).toEqual([...secret])
    again.close()
    await again.closed
  })
  it('closes a connection whose hello never comes, without a word', async () => {
    const conn = await openTls(ctrlPort, { cert: a.cert, key: a.key })
    await conn.closed
    expect(conn.received().length).toBe(0)
  })
  it('answers a bad magic with the unknown-version answer (versions 1 and 2), then closes', async () => {
    const conn = await openTls(ctrlPort, { cert: a.cert, key: a.key })
    await conn.write(Buffer.from('GET / HTTP/1.1\r\n\r\n'))
    await conn.closed
    expect([...conn.received()]).toEqual([0x03, 0x06, 0x09, 0x0a, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])
  })
})

describe('the churn guard and the disconnects the graph asks for', () => {
  it('refuses a second connection of a router connected less than a minute ago; later, the newer displaces the older', async () => {
    const r = await enrollRouter(srv, 'ctl-churn')
    const first = await RouterEmulator.connect(opts(r))
    const second = await RouterEmulator.tryConnect(opts(r))
    expect(second.ok).toBe(false)
    expect(first.isClosed).toBe(false)
    srv.clock.advance(61_000)
    const third = await RouterEmulator.connect(opts(r))
    expect(await first.waitClosed()).toBe(true)
    expect(third.isClosed).toBe(false)
    expect((await edgeRouter(r.id)).isOnline).toBe(true)
    third.close()
  })

  it('disconnects a router that is disabled', async () => {
    const r = await enrollRouter(srv, 'ctl-disable')
    const router = await RouterEmulator.connect(opts(r))
    expectStatus(await srv.mgmt.patch(`/edge-routers/${r.id}`, { disabled: true }), 200)
    expect(await router.waitClosed()).toBe(true)
    expect((await edgeRouter(r.id)).isOnline).toBe(false)
  })

  it('disconnects a router sent back to enrollment', async () => {
    const r = await enrollRouter(srv, 'ctl-reenroll')
    const router = await RouterEmulator.connect(opts(r))
    expectStatus(await srv.mgmt.post(`/edge-routers/${r.id}/re-enroll`, {}), 200)
    expect(await router.waitClosed()).toBe(true)
    // and its old certificate no longer opens a channel
    const again = await RouterEmulator.tryConnect(opts(r))
    expect(again.ok).toBe(false)
  })

  it('disconnects a router that is deleted, edge or fabric', async () => {
    const edge = await enrollRouter(srv, 'ctl-delete')
    const fabric = await enrollRouter(srv, 'ctl-delete-fabric', { fabric: true })
    const e = await RouterEmulator.connect(opts(edge))
    const f = await RouterEmulator.connect(opts(fabric))
    // a fabric router gets no ServerHello, and shows online on /routers
    await Bun.sleep(100)
    expect(f.received.some((x) => x.contentType === EdgeType.ServerHelloType)).toBe(false)
    expect((await srv.mgmt.get(`/routers/${fabric.id}`)).body.data.isOnline).toBe(true)
    expectStatus(await srv.mgmt.del(`/edge-routers/${edge.id}`), 200)
    expectStatus(await srv.mgmt.del(`/routers/${fabric.id}`), 200)
    expect(await e.waitClosed()).toBe(true)
    expect(await f.waitClosed()).toBe(true)
  })
})

describe('one port for routers and clients (ALPN)', () => {
  it('takes a router on the API port when it negotiates ziti-ctrl', async () => {
    const r = await enrollRouter(srv, 'ctl-single-port')
    const router = await RouterEmulator.connect({ ...opts(r), port: srv.server.port })
    await router.waitFor((f) => f.contentType === EdgeType.ServerHelloType)
    await eventually(async () => (await edgeRouter(r.id)).isOnline === true)
    router.close()
    await eventually(async () => (await edgeRouter(r.id)).isOnline === false)
  })

  it('still serves HTTPS to clients offering http/1.1 (with h2 first) or no ALPN; one offering only h2 is refused in the handshake', async () => {
    const { default: tls } = await import('node:tls')
    const negotiate = (alpn: string[] | undefined) =>
      new Promise<string | false | Error>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port: srv.server.port, ca: caBundle, servername: 'localhost', ALPNProtocols: alpn }, () => {
          resolve(s.alpnProtocol ?? false)
          s.destroy()
        })
        s.on('error', (e) => resolve(e))
      })
    expect(await negotiate(['h2', 'http/1.1'])).toBe('http/1.1')
    expect(await negotiate(undefined)).toBe(false)
    expect(await negotiate(['h2'])).toBeInstanceOf(Error)
    expectStatus(await srv.client.get('/version'), 200)
  })

  it('names the control port in enrollment JWTs (ctrls), which ziti router enroll saves', async () => {
    const id = await srv.create('/edge-routers', { name: 'ctl-jwt' })
    const jwt = (await edgeRouter(id)).enrollmentJwt as string
    const claims = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString())
    expect(claims.ctrls).toEqual([`tls:127.0.0.1:${ctrlPort}`])
  })
})
