// The link messages under a hostile or broken router, against a controller in a CHILD process (a crash is a dead
// child, not a dead test runner), on the API port by ALPN ziti-ctrl: seeded undecodable bodies of every message the
// links feature and the fault dispatcher take (RouterLinks, VerifyRouter, LinkStateUpdate, UpdateLinkListeners,
// MetricsMessage, Fault), huge lists, unknown router and link ids and another router's link, floods of each message,
// and odd values. Another router stays connected throughout with a link of its own. After each kind the child answers
// GET /version, takes the fuzzed router again (ping answered, the other router told it is back, VerifyRouter still
// verifying), keeps exactly the other router's link once the fuzzed one leaves, and its resident memory stays bounded.
// FUZZ_SEED=<n> replays a run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, toBinary } from '@bufbuild/protobuf'
import { ContentType as CtrlType, FaultSubject, ListenersSchema, PeerState, RouterLinksSchema, VerifyRouterSchema } from '../../src/control/pb/ctrl_pb.ts'
import { MetricsMessageSchema } from '../../src/control/pb/metrics_pb.ts'
import { ChannelContentType } from '../../src/control/wire/control-frame.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { childLogin, childRequest, killChildren, startChild, type ChildController } from '../support/child-controller.ts'
import { makeCsrPem } from '../support/pki.ts'
import { rng } from '../support/rng.ts'
import { RouterEmulator, replyForOf } from '../support/router-emulator.ts'
import { pollReply, resultOf } from '../support/router-emulator-terminators.ts'
import {
  dialedLink,
  fingerprintOf,
  lastPeerState,
  linkListenersHeader,
  peerStateMessages,
  sendFault,
  sendLinkLatencies,
  sendLinkState,
  sendRouterLinks,
  sendUpdateLinkListeners,
  tlsListener,
  verifyRouter,
} from '../support/router-emulator-links.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261231)
const PASSWORD = 'links-fuzz-admin-1'
const MIB = 1024 * 1024
const M = '/edge/management/v1'
const C = '/edge/client/v1'

let dataDir: string
let child: ChildController
let port: number
let token: string
interface Enrolled {
  id: string
  cert: string
  key: string
  ca: string
}
let mine: Enrolled
let theirs: Enrolled
/** The other router, connected throughout, with one link of its own (to a router that does not exist). */
let other: RouterEmulator
const THEIRS = 'fz-theirs-link'
let baselineRss = 0

function childRssBytes(): number {
  const status = readFileSync(`/proc/${child.proc.pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

async function post(path: string, body: unknown): Promise<string> {
  const res = await childRequest(child.url, 'POST', path, { token, body })
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data.id as string
}

async function enrollOnChild(name: string, fabric: boolean): Promise<Enrolled> {
  const path = fabric ? `${M}/routers` : `${M}/edge-routers`
  const id = await post(path, fabric ? { name } : { name, isTunnelerEnabled: false })
  const view = await childRequest(child.url, 'GET', `${path}/${id}`, { token })
  const clientKeys = await generateKeyPair('ec-p256')
  const serverKeys = await generateKeyPair('ec-p256')
  const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
  const res = await childRequest(child.url, 'POST', `${C}/enroll/erott`, {
    body: { token: view.body.data.enrollmentToken, clientCsr: await makeCsrPem(clientKeys, { commonName: id, ...sans }), serverCsr: await makeCsrPem(serverKeys, { commonName: id, ...sans }) },
  })
  expect(res.status).toBe(200)
  return { id, cert: res.body.data.cert as string, key: await exportPrivateKeyPem(clientKeys.privateKey), ca: res.body.data.ca as string }
}

/** The router connects; a previous connection may still be leaving (the churn guard refuses while it is there). */
async function connect(r: Enrolled = mine, listenerPort = 10_101): Promise<RouterEmulator> {
  for (let i = 0; ; i++) {
    const o = await RouterEmulator.tryConnect({ port, caPem: r.ca, tls: { cert: r.cert, key: r.key }, routerId: r.id, helloHeaders: linkListenersHeader([tlsListener(listenerPort)]) })
    if (o.ok) return o.router
    if (i === 50) throw new Error('the enrolled router could not connect')
    await Bun.sleep(100)
  }
}

/** A gauge or counter series of the child's /metrics (0 when absent). */
async function metric(series: string): Promise<number> {
  const res = await fetch(`${child.url}/metrics`, { headers: { 'zt-session': token }, tls: { rejectUnauthorized: false } } as RequestInit)
  const text = await res.text()
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

async function eventually(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`${what} did not come true in time (seed ${SEED})`)
    await Bun.sleep(50)
  }
}

const ping = async (r: RouterEmulator, what: string, ms = 30_000) => pollReply(r, r.send({ contentType: ChannelContentType.Ping }), ms, what)

/** Closes the fuzzed router and waits until the other one is told it left. */
async function leave(r: RouterEmulator): Promise<void> {
  r.close()
  await r.closed
  await eventually(() => lastPeerState(other, mine.id)?.state === PeerState.Unhealthy, 30_000, 'the other router told the fuzzed one left')
}

/** After each kind: the child lives and answers, takes the router back, and keeps only the other router's link; memory bounded. */
async function expectHealthy(kind: string): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.killed) throw new Error(`the child died during ${kind} (seed ${SEED}):\n${child.stderrTail()}`)
  expect((await childRequest(child.url, 'GET', `${C}/version`)).status).toBe(200)
  expect(other.isClosed).toBe(false)
  const told = peerStateMessages(other).length
  const r = await connect()
  await ping(r, 'the ping answer')
  await eventually(() => peerStateMessages(other).length > told && lastPeerState(other, mine.id)?.state === PeerState.Healthy, 30_000, 'the other router told the fuzzed one is back')
  expect(lastPeerState(other, mine.id)!.listeners.map((l) => l.address)).toEqual(['tls:127.0.0.1:10101'])
  expect((await verifyRouter(r, theirs.id, [fingerprintOf(theirs.cert)])).success).toBe(true)
  await leave(r)
  // the fuzzed router's links left with it; the other router's one link is all there is
  await eventually(async () => (await metric('edgeplane_control_links{state="unreachable"}')) === 1, 30_000, `${kind}: only the other router's link left`)
  expect(await metric('edgeplane_control_links{state="usable"}')).toBe(0)
  // bounded: within 256 MiB of the start, or back within it soon (a burst's garbage is collected lazily; a leak stays)
  let grown = childRssBytes() - baselineRss
  for (const until = performance.now() + 15_000; grown >= 256 * MIB && performance.now() < until; grown = childRssBytes() - baselineRss) await Bun.sleep(250)
  expect(grown, `${kind}: the child grew by ${Math.round(grown / MIB)} MiB`).toBeLessThan(256 * MIB)
}

const encoded = {
  routerLinks: (links: ReturnType<typeof dialedLink>[], fullRefresh = false) => toBinary(RouterLinksSchema, create(RouterLinksSchema, { links, fullRefresh })),
  verify: (routerId: string, fingerprints: string[]) => toBinary(VerifyRouterSchema, create(VerifyRouterSchema, { routerId, fingerprints })),
  listeners: (n: number) => toBinary(ListenersSchema, create(ListenersSchema, { listeners: Array.from({ length: n }, (_, i) => ({ address: `tls:127.0.0.1:${i % 65_536}`, protocol: 'tls', groups: ['default'] })) })),
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-links-fuzz-'))
  child = await startChild(dataDir, PASSWORD)
  port = Number(new URL(child.url).port)
  token = await childLogin(child.url, 'admin', PASSWORD)
  mine = await enrollOnChild('fz-links-mine', false)
  theirs = await enrollOnChild('fz-links-theirs', true)
  other = await connect(theirs, 10_102)
  sendRouterLinks(other, [dialedLink(THEIRS, 'fz-ghost', 10_999)])
  await ping(other, 'the other router\'s ping')
  expect(await metric('edgeplane_control_links{state="unreachable"}')).toBe(1)
  baselineRss = childRssBytes()
  console.log(`links fuzz: seed ${SEED}, child rss ${Math.round(baselineRss / MIB)} MiB`)
}, 60_000)
afterAll(() => {
  other?.close()
  killChildren()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(`${dataDir}.config.yml`, { force: true })
})

describe('link messages fuzz (child process, API port by ALPN)', () => {
  it('drops 3,000 seeded undecodable bodies of every link and fault message and keeps the router', async () => {
    const next = rng(SEED)
    const types = [CtrlType.RouterLinksType, CtrlType.VerifyRouterType, CtrlType.LinkState, CtrlType.UpdateLinkListenersType, CtrlType.MetricsType, CtrlType.FaultType]
    const r = await connect()
    for (let i = 0; i < 3_000; i++) {
      // 0xff bytes and truncated varints: mostly not a protobuf at all; some decode into odd messages, handled as such
      const body = Uint8Array.from({ length: 1 + Math.floor(next() * 256) }, () => (next() < 0.3 ? 0xff : Math.floor(next() * 256)))
      r.send({ contentType: types[i % types.length]!, body })
    }
    await ping(r, 'the ping after the undecodable bodies')
    expect(r.isClosed).toBe(false)
    await leave(r)
    await expectHealthy('undecodable bodies')
  }, 90_000)

  it('bounds huge lists: 200,000 links, 300,000 fingerprints, 100,000 listeners, connections and histograms, a 10 MB fault id', async () => {
    const r = await connect()
    const many = Array.from({ length: 200_000 }, (_, i) => dialedLink(`fz-huge-${i}`, `fz-nobody-${i % 7}`, 10_000 + (i % 1000)))
    r.send({ contentType: CtrlType.RouterLinksType, body: encoded.routerLinks(many) })
    await ping(r, 'the ping after 200,000 links')
    // at most 10,000 links of one router (and the other router's one)
    expect(await metric('edgeplane_control_links{state="unreachable"}')).toBe(10_001)
    r.send({ contentType: CtrlType.RouterLinksType, body: encoded.routerLinks(many.map((l, i) => ({ ...l, id: `fz-huge2-${i}` })), true) })
    await ping(r, 'the ping after a full refresh of 200,000 links')
    expect(await metric('edgeplane_control_links{state="unreachable"}')).toBe(10_001)
    // 300,000 fingerprints, the right one last: answered, verified
    const prints = Array.from({ length: 300_000 }, (_, i) => (i === 299_999 ? fingerprintOf(theirs.cert) : i.toString(16).padStart(40, '0')))
    const seq = r.send({ contentType: CtrlType.VerifyRouterType, body: encoded.verify(theirs.id, prints) })
    expect(resultOf(await pollReply(r, seq, 30_000, 'the VerifyRouter answer')).success).toBe(true)
    // 100,000 listeners: the other router is told of at most 64
    const told = peerStateMessages(other).length
    r.send({ contentType: CtrlType.UpdateLinkListenersType, body: encoded.listeners(100_000) })
    await eventually(() => peerStateMessages(other).length > told, 30_000, 'the other router told the new listeners')
    expect(lastPeerState(other, mine.id)!.listeners.length).toBe(64)
    sendLinkState(r, 'fz-huge2-0', 1, 1, Array.from({ length: 100_000 }, (_, i) => ({ type: `t${i}`, localAddr: 'a', remoteAddr: 'b' })))
    const histograms = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`link.fz-huge2-${i}.latency`, { count: 1n, mean: i * 1_000 }]))
    r.send({ contentType: CtrlType.MetricsType, body: toBinary(MetricsMessageSchema, create(MetricsMessageSchema, { sourceId: mine.id, histograms })) })
    sendFault(r, FaultSubject.LinkFault, 'f'.repeat(10 * MIB))
    sendFault(r, FaultSubject.ForwardFault, Array.from({ length: 500_000 }, (_, i) => `c${i}`).join(' '))
    await ping(r, 'the ping after the huge lists')
    await leave(r)
    await expectHealthy('huge lists')
  }, 120_000)

  it('ignores unknown router and link ids and the other router\'s link: verifications refused, faults and reports of nobody\'s', async () => {
    const next = rng(SEED + 1)
    const r = await connect()
    const seqs: number[] = []
    for (let i = 0; i < 1_000; i++) seqs.push(r.send({ contentType: CtrlType.VerifyRouterType, body: encoded.verify(`fz-unknown-${Math.floor(next() * 1e12)}`, [fingerprintOf(mine.cert)]) }))
    // the other router's id with the fuzzed router's own fingerprint: refused
    seqs.push(r.send({ contentType: CtrlType.VerifyRouterType, body: encoded.verify(theirs.id, [fingerprintOf(mine.cert)]) }))
    const last = await pollReply(r, seqs.at(-1)!, 30_000, 'the last VerifyRouter answer')
    expect(resultOf(last).success).toBe(false)
    const answered = r.received.filter((f) => f.contentType === ChannelContentType.Result && seqs.includes(replyForOf(f) ?? -1))
    expect(answered).toHaveLength(seqs.length)
    expect(answered.every((f) => !resultOf(f).success)).toBe(true)
    // the other router's link: claimed (greater iteration), faulted, its connections and latencies reported
    sendRouterLinks(r, [dialedLink(THEIRS, theirs.id, 10_102, 0xffff_ffff)])
    for (const s of [FaultSubject.LinkFault, FaultSubject.LinkDuplicate]) sendFault(r, s, THEIRS, 0)
    sendLinkState(r, THEIRS, 1, 99, [{ type: 'x', localAddr: 'y', remoteAddr: 'z' }])
    sendLinkLatencies(r, theirs.id, { [THEIRS]: { latencyNs: 1 } })
    sendLinkLatencies(r, mine.id, { [THEIRS]: { latencyNs: 1 } })
    for (let i = 0; i < 2_000; i++) sendFault(r, next() < 0.5 ? FaultSubject.LinkFault : FaultSubject.LinkDuplicate, `fz-nolink-${Math.floor(next() * 1e12)}`, Math.floor(next() * 2 ** 32))
    await ping(r, 'the ping after unknown ids')
    await leave(r)
    // expectHealthy: the other router's link is still the one link there
    await expectHealthy('unknown ids')
  }, 90_000)

  it('survives floods: 20,000 link reports, 20,000 faults, 5,000 verifications (each answered), 3,000 listener updates (paced to the peer), 20,000 metrics', async () => {
    const next = rng(SEED + 2)
    const r = await connect()
    for (let i = 0; i < 20_000; i++) {
      sendRouterLinks(r, [dialedLink(`fz-flood-${i}`, next() < 0.5 ? theirs.id : `fz-nobody-${i}`, 10_102)], next() < 0.01)
      sendFault(r, FaultSubject.LinkFault, `fz-flood-${Math.floor(next() * i)}`, Math.floor(next() * 3))
      if (i % 2_000 === 0) await Bun.sleep(1)
    }
    await ping(r, 'the ping after the report flood', 60_000)
    expect(await metric('edgeplane_control_links{state="usable"}') + (await metric('edgeplane_control_links{state="unreachable"}'))).toBeLessThanOrEqual(10_001)
    const seqs = Array.from({ length: 5_000 }, (_, i) => r.send({ contentType: CtrlType.VerifyRouterType, body: encoded.verify(i % 2 ? theirs.id : mine.id, [fingerprintOf(i % 2 ? theirs.cert : mine.cert)]) }))
    await pollReply(r, seqs.at(-1)!, 60_000, 'the last of 5,000 VerifyRouter answers')
    const wanted = new Set(seqs)
    const answers = r.received.filter((f) => f.contentType === ChannelContentType.Result && wanted.has(replyForOf(f) ?? -1))
    expect(answers).toHaveLength(5_000)
    expect(answers.every((f) => resultOf(f).success)).toBe(true)
    const told = peerStateMessages(other).length
    const started = performance.now()
    for (let i = 0; i < 3_000; i++) {
      sendUpdateLinkListeners(r, [tlsListener(20_000 + (i % 1_000))])
      if (i % 100 === 0) await Bun.sleep(5)
    }
    for (let i = 0; i < 20_000; i++) sendLinkLatencies(r, mine.id, { [`fz-flood-${i}`]: { latencyNs: next() * 1e9 } })
    await ping(r, 'the ping after the listener and metrics floods', 60_000)
    await Bun.sleep(200)
    const messages = peerStateMessages(other).length - told
    const elapsed = performance.now() - started
    expect(messages, `${messages} PeerStateChanges in ${Math.round(elapsed)} ms`).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 2)
    expect(lastPeerState(other, mine.id)!.listeners.map((l) => l.address)).toEqual([`tls:127.0.0.1:${20_000 + (2_999 % 1_000)}`])
    await leave(r)
    await expectHealthy('floods')
  }, 180_000)

  it('takes odd values: iterations at the limit, ids of NULs and emoji, a link to itself, nonsense latencies, unknown subjects', async () => {
    const r = await connect()
    sendRouterLinks(r, [
      dialedLink('fz-odd-max', theirs.id, 10_102, 0xffff_ffff),
      dialedLink('fz-\u0000\u{1f600}-odd', theirs.id, 10_102),
      dialedLink('fz-odd-self', mine.id, 10_101),
      { id: 'fz-odd-empty', destRouterId: '', linkProtocol: '', dialAddress: '', iteration: 0 },
    ])
    await ping(r, 'the ping after odd links')
    expect(await metric('edgeplane_control_links{state="usable"}')).toBe(2)
    sendLinkLatencies(r, mine.id, { 'fz-odd-max': { latencyNs: Number.NaN }, 'fz-\u0000\u{1f600}-odd': { latencyNs: Number.POSITIVE_INFINITY, queueNs: -1e300 } })
    sendLinkLatencies(r, mine.id, { 'fz-odd-max': { latencyNs: 1e300 } })
    sendFault(r, 99 as FaultSubject, 'fz-odd-max', 1)
    sendFault(r, FaultSubject.LinkFault, 'fz-odd-max', 0xffff_fffe)
    r.send({ contentType: CtrlType.UpdateLinkListenersType, body: toBinary(ListenersSchema, create(ListenersSchema, { listeners: [{ address: '\u0000'.repeat(2_000), protocol: '', groups: Array.from({ length: 1_000 }, () => 'g') }] })) })
    await ping(r, 'the ping after odd values')
    // the fault older than the link: kept
    expect(await metric('edgeplane_control_links{state="usable"}')).toBe(2)
    expect(other.isClosed).toBe(false)
    await leave(r)
    await expectHealthy('odd values')
  }, 90_000)
})
