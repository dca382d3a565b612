// What a router may send about sessions, from a hostile or broken peer, against a controller in a CHILD process (a
// crash is a dead child, not a dead test runner), on the API port by ALPN ziti-ctrl: seeded garbage as the bodies of
// ApiSessionHeartbeat, RequestClientReSync and ValidateSessionsRequest; huge lists (300,000 tokens or ids, 1,000
// tokens of 10 KB); heartbeats of nothing but unknown tokens; a flood of resync requests. After each kind the child
// answers GET /version, the router still connects and gets its ping answered, and the child's memory stays within
// bounds. FUZZ_SEED=<n> replays a run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, toBinary } from '@bufbuild/protobuf'
import { ChannelContentType } from '../../src/control/wire/control-frame.ts'
import { ApiSessionHeartbeatSchema, ApiSessionRemovedSchema, ContentType as EdgeType, ValidateSessionsRequestSchema, SessionRemovedSchema } from '../../src/control/pb/edge_ctrl_pb.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { childLogin, childRequest, killChildren, startChild, type ChildController } from '../support/child-controller.ts'
import { makeCsrPem } from '../support/pki.ts'
import { rng } from '../support/rng.ts'
import { RouterEmulator, replyForOf } from '../support/router-emulator.ts'
import { decodeAsRouter, fullStates, sendHeartbeat, sendResync, sendValidateSessions, waitForFullState } from '../support/router-emulator-sessions.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261203)
const PASSWORD = 'sessions-fuzz-admin-1'
const MIB = 1024 * 1024
const M = '/edge/management/v1'

let dataDir: string
let child: ChildController
let port: number
let token: string
let router: { id: string; cert: string; key: string; ca: string }
let baselineRss = 0

const childRssBytes = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.proc.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024

/** A router connected to the child; a previous connection may still be leaving (the churn guard refuses while it is there). */
async function connect(): Promise<RouterEmulator> {
  for (let i = 0; ; i++) {
    const o = await RouterEmulator.tryConnect({ port, caPem: router.ca, tls: { cert: router.cert, key: router.key }, routerId: router.id })
    if (o.ok) return o.router
    if (i === 50) throw new Error('the enrolled router could not connect')
    await Bun.sleep(100)
  }
}

/** After each kind: the child lives, answers, takes the router, and its memory is bounded. */
async function expectHealthy(kind: string): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.killed) throw new Error(`the child died during ${kind} (seed ${SEED}):\n${child.stderrTail()}`)
  expect((await childRequest(child.url, 'GET', '/edge/client/v1/version')).status).toBe(200)
  const r = await connect()
  await waitForFullState(r)
  const seq = r.send({ contentType: ChannelContentType.Ping })
  await r.waitFor((f) => replyForOf(f) === seq, 5_000, 'the ping answer')
  r.close()
  await r.closed
  const grown = childRssBytes() - baselineRss
  expect(grown, `${kind}: the child grew by ${Math.round(grown / MIB)} MiB`).toBeLessThan(256 * MIB)
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-sessions-fuzz-'))
  child = await startChild(dataDir, PASSWORD)
  port = Number(new URL(child.url).port)
  token = await childLogin(child.url, 'admin', PASSWORD)
  const created = await childRequest(child.url, 'POST', `${M}/edge-routers`, { token, body: { name: 'sessions-fuzz-router', isTunnelerEnabled: false } })
  expect(created.status).toBe(201)
  const id = created.body.data.id as string
  const view = await childRequest(child.url, 'GET', `${M}/edge-routers/${id}`, { token })
  const clientKeys = await generateKeyPair('ec-p256')
  const serverKeys = await generateKeyPair('ec-p256')
  const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
  const res = await childRequest(child.url, 'POST', '/edge/client/v1/enroll/erott', {
    body: { token: view.body.data.enrollmentToken, clientCsr: await makeCsrPem(clientKeys, { commonName: id, ...sans }), serverCsr: await makeCsrPem(serverKeys, { commonName: id, ...sans }) },
  })
  expect(res.status).toBe(200)
  router = { id, cert: res.body.data.cert, key: await exportPrivateKeyPem(clientKeys.privateKey), ca: res.body.data.ca }
  baselineRss = childRssBytes()
  console.log(`sessions fuzz: seed ${SEED}, child rss ${Math.round(baselineRss / MIB)} MiB`)
}, 60_000)
afterAll(() => {
  killChildren()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(`${dataDir}.config.yml`, { force: true })
})

describe('session messages from a router (child process, API port by ALPN)', () => {
  it('drops 900 seeded undecodable bodies of heartbeats, resync requests and session validations, and stays connected', async () => {
    const next = rng(SEED)
    const r = await connect()
    for (const contentType of [EdgeType.ApiSessionHeartbeatType, EdgeType.RequestClientReSyncType, EdgeType.ValidateSessionsRequestType]) {
      for (let i = 0; i < 300; i++) {
        const body = Uint8Array.from({ length: 1 + Math.floor(next() * 512) }, () => Math.floor(next() * 256))
        // now and then a field 1 of type bytes whose length runs past the end, the commonest way to fail protobuf
        if (next() < 0.3) body.set([0x0a, 0xff, 0xff, 0x03].slice(0, Math.min(4, body.length)))
        r.send({ contentType, body })
      }
    }
    const seq = r.send({ contentType: ChannelContentType.Ping })
    await r.waitFor((f) => replyForOf(f) === seq, 10_000, 'the ping answer after the garbage')
    expect(r.isClosed).toBe(false)
    r.close()
    await r.closed
    await expectHealthy('undecodable bodies')
  }, 60_000)

  it('reads at most 10,000 of 300,000 heartbeat tokens or validation ids, skips 10 KB tokens, and answers what it read', async () => {
    const r = await connect()
    const many = Array.from({ length: 300_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
    sendHeartbeat(r, many)
    const removed = await r.waitFor((f) => f.contentType === EdgeType.ApiSessionRemovedType, 20_000, 'the answer to the huge heartbeat')
    expect(decodeAsRouter(ApiSessionRemovedSchema, removed).tokens).toHaveLength(10_000)
    sendValidateSessions(r, many)
    const invalid = await r.waitFor((f) => f.contentType === EdgeType.SessionRemovedType, 20_000, 'the answer to the huge validation')
    expect(decodeAsRouter(SessionRemovedSchema, invalid).ids).toHaveLength(10_000)
    const before = r.received.length
    sendHeartbeat(r, Array.from({ length: 1_000 }, (_, i) => `${i}`.padEnd(10_000, 'x')))
    const seq = r.send({ contentType: ChannelContentType.Ping })
    await r.waitFor((f) => replyForOf(f) === seq, 20_000, 'the ping answer after the long tokens')
    expect(r.received.slice(before).some((f) => f.contentType === EdgeType.ApiSessionRemovedType)).toBe(false)
    r.close()
    await r.closed
    await expectHealthy('huge lists')
  }, 90_000)

  it('answers 50 heartbeats of 10,000 unknown tokens each with as many removals, the admin\'s own token never among them', async () => {
    const r = await connect()
    const next = rng(SEED + 1)
    for (let h = 0; h < 50; h++) {
      const tokens: string[] = Array.from({ length: 10_000 }, () => crypto.randomUUID())
      if (h % 10 === 0) tokens[Math.floor(next() * tokens.length)] = token
      r.send({ contentType: EdgeType.ApiSessionHeartbeatType, body: toBinary(ApiSessionHeartbeatSchema, create(ApiSessionHeartbeatSchema, { tokens })) })
    }
    await r.waitFor(() => r.received.filter((f) => f.contentType === EdgeType.ApiSessionRemovedType).length === 50, 30_000, '50 answers')
    for (const f of r.received.filter((f) => f.contentType === EdgeType.ApiSessionRemovedType)) expect(decodeAsRouter(ApiSessionRemovedSchema, f).tokens).not.toContain(token)
    // the admin's session is alive: its token still answers
    expect((await childRequest(child.url, 'GET', `${M}/current-api-session`, { token })).status).toBe(200)
    r.close()
    await r.closed
    await expectHealthy('unknown tokens')
  }, 90_000)

  it('serves a flood of 2,000 resync requests with at most a few full states', async () => {
    const r = await connect()
    const first = await waitForFullState(r)
    for (let i = 0; i < 2_000; i++) sendResync(r, `flood ${i}`)
    await Bun.sleep(2_500)
    const states = fullStates(r)
    expect(states[0].id).toBe(first.id)
    expect(states.length).toBeGreaterThanOrEqual(2)
    expect(states.length).toBeLessThanOrEqual(4)
    r.close()
    await r.closed
    await expectHealthy('resync flood')
  }, 60_000)

  it('survives validation ids and heartbeat tokens of every odd shape', async () => {
    const r = await connect()
    const odd = ['', ' ', '\u0000', '\uffff', '💥'.repeat(60), '%s%n', '../../etc/passwd', 'a'.repeat(256), 'a'.repeat(257)]
    sendHeartbeat(r, odd)
    sendValidateSessions(r, odd)
    r.send({ contentType: EdgeType.ValidateSessionsRequestType, body: toBinary(ValidateSessionsRequestSchema, create(ValidateSessionsRequestSchema, { sessionTokens: [] })) })
    r.send({ contentType: EdgeType.ApiSessionHeartbeatType })
    const seq = r.send({ contentType: ChannelContentType.Ping })
    await r.waitFor((f) => replyForOf(f) === seq, 10_000, 'the ping answer')
    r.close()
    await r.closed
    await expectHealthy('odd values')
  }, 60_000)
})
