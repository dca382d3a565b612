// The terminator messages under hostile or broken routers, against a controller in a CHILD process (a crash is a
// dead child, not a dead test runner), on the API port by ALPN ziti-ctrl: seeded undecodable bodies of every message
// the terminators feature takes, a removal of 100,000 ids, requests naming unknown routers' and other routers'
// terminators and validation answers nobody asked for, oversized and odd field values, and floods of creates (valid
// sessions and garbage) and health events. After each kind the child answers GET /version, the router still gets a
// ping answered, the other router's terminator is still there, and the child's resident memory stays bounded.
// FUZZ_SEED=<n> replays a run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, fromBinary, toBinary } from '@bufbuild/protobuf'
import { ContentType as EdgeType, CreateTerminatorResult, CreateTerminatorV2ResponseSchema } from '../../src/control/pb/edge_ctrl_pb.ts'
import { ContentType as CtrlType, RemoveTerminatorsRequestSchema, ValidateTerminatorsV2ResponseSchema } from '../../src/control/pb/ctrl_pb.ts'
import { ChannelContentType } from '../../src/control/wire/control-frame.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { childLogin, childRequest, killChildren, startChild, type ChildController } from '../support/child-controller.ts'
import { makeCsrPem } from '../support/pki.ts'
import { rng } from '../support/rng.ts'
import { RouterEmulator, replyForOf } from '../support/router-emulator.ts'
import {
  createTerminator,
  edgeErrorOf,
  pollReply,
  fabricCreate,
  fabricRemove,
  fabricUpdate,
  removeEdgeTerminator,
  removeTerminators,
  replyTo,
  sendCreate,
  sendHealthEvent,
  updateTerminator,
} from '../support/router-emulator-terminators.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261202)
const PASSWORD = 'terminator-fuzz-admin-1'
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
let serviceId: string
let apiSessionToken: string
let sessionToken: string
let baselineRss = 0
/** A terminator on the other router: no request of the fuzzed one may remove or change it. */
const OTHERS = 'fz-theirs-1'

function childRssBytes(): number {
  const status = readFileSync(`/proc/${child.proc.pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

async function post(path: string, body: unknown, session = token): Promise<string> {
  const res = await childRequest(child.url, 'POST', path, { token: session, body })
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data.id as string
}

async function enrollOnChild(name: string): Promise<Enrolled> {
  const id = await post(`${M}/edge-routers`, { name, isTunnelerEnabled: false })
  const view = await childRequest(child.url, 'GET', `${M}/edge-routers/${id}`, { token })
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
async function connect(r: Enrolled = mine): Promise<RouterEmulator> {
  for (let i = 0; ; i++) {
    const o = await RouterEmulator.tryConnect({ port, caPem: r.ca, tls: { cert: r.cert, key: r.key }, routerId: r.id })
    if (o.ok) return o.router
    if (i === 50) throw new Error('the enrolled router could not connect')
    await Bun.sleep(100)
  }
}

const othersTerminatorThere = async () => (await childRequest(child.url, 'GET', `${M}/terminators/${OTHERS}`, { token })).status === 200

/** After each kind: the child lives, answers, takes the router, keeps the other router's terminator, and its memory is bounded. */
async function expectHealthy(kind: string): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.killed) throw new Error(`the child died during ${kind} (seed ${SEED}):\n${child.stderrTail()}`)
  expect((await childRequest(child.url, 'GET', `${C}/version`)).status).toBe(200)
  const r = await connect()
  const seq = r.send({ contentType: ChannelContentType.Ping })
  await r.waitFor((f) => replyForOf(f) === seq, 10_000, 'the ping answer')
  r.close()
  await r.closed
  expect(await othersTerminatorThere()).toBe(true)
  const grown = childRssBytes() - baselineRss
  expect(grown, `${kind}: the child grew by ${Math.round(grown / MIB)} MiB`).toBeLessThan(256 * MIB)
}

const bind = (address: string, more: Record<string, unknown> = {}) => ({ address, sessionToken, apiSessionToken, ...more })

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-terminator-fuzz-'))
  child = await startChild(dataDir, PASSWORD)
  port = Number(new URL(child.url).port)
  token = await childLogin(child.url, 'admin', PASSWORD)
  mine = await enrollOnChild('fz-mine')
  theirs = await enrollOnChild('fz-theirs')
  serviceId = await post(`${M}/services`, { name: 'fz-svc', encryptionRequired: true })
  const identityId = await post(`${M}/identities`, { name: 'fz-host', type: 'User', isAdmin: false, roleAttributes: ['fz'] })
  await post(`${M}/authenticators`, { method: 'updb', identityId, username: 'fz-host', password: 'fz-host-pass-1' })
  await post(`${M}/service-policies`, { name: 'fz-bind', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#fz'], serviceRoles: [`@${serviceId}`] })
  await post(`${M}/edge-router-policies`, { name: 'fz-erp', semantic: 'AnyOf', identityRoles: ['#fz'], edgeRouterRoles: ['#all'] })
  await post(`${M}/service-edge-router-policies`, { name: 'fz-serp', semantic: 'AnyOf', serviceRoles: [`@${serviceId}`], edgeRouterRoles: ['#all'] })
  const login = await childRequest(child.url, 'POST', `${C}/authenticate?method=password`, { body: { username: 'fz-host', password: 'fz-host-pass-1' } })
  apiSessionToken = login.body.data.token
  const session = await childRequest(child.url, 'POST', `${C}/sessions`, { token: apiSessionToken, body: { serviceId, type: 'Bind' } })
  expect(session.status).toBe(201)
  sessionToken = session.body.data.token
  const other = await connect(theirs)
  expect((await createTerminator(other, bind(OTHERS))).result).toBe(CreateTerminatorResult.Success)
  other.close()
  await other.closed
  baselineRss = childRssBytes()
  console.log(`terminator fuzz: seed ${SEED}, child rss ${Math.round(baselineRss / MIB)} MiB`)
}, 60_000)
afterAll(() => {
  killChildren()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(`${dataDir}.config.yml`, { force: true })
})

describe('terminator messages fuzz (child process, API port by ALPN)', () => {
  it('drops 2,000 seeded undecodable bodies of every terminator message and keeps the router', async () => {
    const next = rng(SEED)
    const types = [
      EdgeType.CreateTerminatorV2RequestType, EdgeType.UpdateTerminatorRequestType, EdgeType.RemoveTerminatorRequestType, EdgeType.HealthEventType,
      CtrlType.RemoveTerminatorsRequestType, CtrlType.CreateTerminatorRequestType, CtrlType.RemoveTerminatorRequestType, CtrlType.UpdateTerminatorRequestType,
      CtrlType.ValidateTerminatorsV2ResponseType,
    ]
    const r = await connect()
    for (let i = 0; i < 2_000; i++) {
      // 0xff bytes and truncated varints: mostly not a protobuf at all; some decode into odd messages, answered as such
      const body = Uint8Array.from({ length: 1 + Math.floor(next() * 256) }, () => (next() < 0.3 ? 0xff : Math.floor(next() * 256)))
      r.send({ contentType: types[i % types.length]!, body })
    }
    const seq = r.send({ contentType: ChannelContentType.Ping })
    await r.waitFor((f) => replyForOf(f) === seq, 20_000, 'the ping after the undecodable bodies')
    expect(r.isClosed).toBe(false)
    r.close()
    await r.closed
    await expectHealthy('undecodable bodies')
  }, 60_000)

  it('answers a removal of 100,000 ids (unknown, the other router\'s, impossibly long) with a success that removes nothing of theirs', async () => {
    const next = rng(SEED + 1)
    const ids = Array.from({ length: 100_000 }, (_, i) => (i % 1_000 === 0 ? OTHERS : i % 997 === 0 ? 'z'.repeat(2_000) : `fz-unknown-${Math.floor(next() * 1e12)}`))
    const r = await connect()
    const seq = r.send({ contentType: CtrlType.RemoveTerminatorsRequestType, body: toBinary(RemoveTerminatorsRequestSchema, create(RemoveTerminatorsRequestSchema, { terminatorIds: ids })) })
    const f = await replyTo(r, seq, 'the removal answer', 30_000)
    expect(f.contentType).toBe(ChannelContentType.Result)
    expect(f.headers.get(2)?.[0]).toBe(1)
    r.close()
    await r.closed
    await expectHealthy('100,000 ids')
  }, 60_000)

  it('refuses requests on the other router\'s terminators and ignores validation answers nobody asked for', async () => {
    const next = rng(SEED + 2)
    const r = await connect()
    expect(edgeErrorOf(await updateTerminator(r, { sessionToken, apiSessionToken, terminatorId: OTHERS, cost: 1, updateCost: true })).code).toBe(8)
    expect(edgeErrorOf(await removeEdgeTerminator(r, { terminatorId: OTHERS })).code).toBe(8)
    expect(await fabricUpdate(r, { terminatorId: OTHERS, cost: 1, updateCost: true })).toMatchObject({ success: false })
    expect(await fabricRemove(r, OTHERS)).toMatchObject({ success: false })
    expect(await removeTerminators(r, [OTHERS, 'fz-nobody'])).toMatchObject({ success: true })
    // the other router's terminator, claimed from this router: a conflict
    expect((await createTerminator(r, bind(OTHERS))).retryHint).toBe(3)
    for (let i = 0; i < 200; i++) {
      const states = Object.fromEntries(Array.from({ length: 50 }, (_, j) => [j === 0 ? OTHERS : `fz-v-${i}-${j}`, { valid: false, reason: 1, detail: 'x', marker: BigInt(Math.floor(next() * 1e9)) }]))
      r.send({ contentType: CtrlType.ValidateTerminatorsV2ResponseType, body: toBinary(ValidateTerminatorsV2ResponseSchema, create(ValidateTerminatorsV2ResponseSchema, { states })) })
    }
    const seq = r.send({ contentType: ChannelContentType.Ping })
    await r.waitFor((f) => replyForOf(f) === seq, 10_000, 'the ping after the answers')
    await Bun.sleep(500)
    r.close()
    await r.closed
    await expectHealthy('other routers\' terminators')
  }, 60_000)

  it('answers oversized and odd field values with refusals, storing nothing odd', async () => {
    const r = await connect()
    const refusal = async (req: Record<string, unknown>) => (await createTerminator(r, bind('fz-odd', req) as never, 10_000)).result
    expect(await refusal({ address: 'q'.repeat(100_000) })).toBe(CreateTerminatorResult.FailedOther)
    expect(await refusal({ cost: 0xffff_ffff })).toBe(CreateTerminatorResult.FailedOther)
    expect(await refusal({ sessionToken: `ey${'x'.repeat(1_000_000)}` })).toBe(CreateTerminatorResult.FailedOther)
    expect(await refusal({ apiSessionToken: 'a'.repeat(1_000_000) })).toBe(CreateTerminatorResult.FailedOther)
    expect(await refusal({ instanceId: 'i'.repeat(1_000_000) })).toBe(CreateTerminatorResult.FailedOther)
    expect(await refusal({ peerData: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [i, Uint8Array.of(i & 0xff)])) })).toBe(CreateTerminatorResult.FailedOther)
    // a precedence that names none is Default on create, as in the real controller
    expect(await refusal({ precedence: 99 })).toBe(CreateTerminatorResult.Success)
    expect((await fabricCreate(r, { serviceId, binding: 'b'.repeat(10_000), address: 'tcp:x:1' })).success).toBe(false)
    expect((await updateTerminator(r, { sessionToken, apiSessionToken, terminatorId: 'fz-odd', precedence: 99 as never, updatePrecedence: true })).contentType).toBe(EdgeType.ErrorType)
    expect(await removeTerminators(r, ['fz-odd'])).toMatchObject({ success: true })
    r.close()
    await r.closed
    await expectHealthy('odd values')
  }, 60_000)

  it('answers each of a flood of 3,000 valid creates (Success or FailedBusy) and stores exactly the ones answered Success', async () => {
    const r = await connect()
    const seqs = Array.from({ length: 3_000 }, (_, i) => [sendCreate(r, bind(`fz-flood-${i}`)), i] as const)
    const bySeq = new Map(seqs)
    const replies = new Map<number, number>()
    const deadline = performance.now() + 60_000
    for (let seen = 0; replies.size < seqs.length; await Bun.sleep(20)) {
      if (performance.now() > deadline || r.isClosed) throw new Error(`${replies.size} of ${seqs.length} creates answered`)
      for (; seen < r.received.length; seen++) {
        const f = r.received[seen]!
        const s = replyForOf(f)
        if (s !== undefined && bySeq.has(s) && f.contentType === EdgeType.CreateTerminatorV2ResponseType) replies.set(bySeq.get(s)!, fromBinary(CreateTerminatorV2ResponseSchema, f.body).result)
      }
    }
    const results = [...replies.values()]
    expect(results.every((x) => x === CreateTerminatorResult.Success || x === CreateTerminatorResult.FailedBusy)).toBe(true)
    const succeeded = [...replies].filter(([, x]) => x === CreateTerminatorResult.Success).map(([i]) => `fz-flood-${i}`)
    expect(succeeded.length).toBeGreaterThan(0)
    const stored = await childRequest(child.url, 'GET', `${M}/terminators?limit=-1&filter=${encodeURIComponent(`router = "${mine.id}"`)}`, { token })
    const ids = new Set<string>(stored.body.data.map((t: { id: string }) => t.id))
    for (let i = 0; i < 3_000; i++) expect(ids.has(`fz-flood-${i}`)).toBe(succeeded.includes(`fz-flood-${i}`))
    expect(await removeTerminators(r, [...ids])).toMatchObject({ success: true })
    r.close()
    await r.closed
    await expectHealthy('a flood of valid creates')
  }, 120_000)

  it('survives a flood of 20,000 creates with garbage tokens and 20,000 health events', async () => {
    const next = rng(SEED + 3)
    const r = await connect()
    for (let i = 0; i < 20_000; i++) {
      const junk = () => (next() < 0.5 ? `ey${Math.floor(next() * 1e15).toString(36)}` : Math.floor(next() * 1e15).toString(36))
      sendCreate(r, { address: `fz-junk-${i}`, sessionToken: junk(), apiSessionToken: next() < 0.2 ? apiSessionToken : junk() })
      sendHealthEvent(r, { sessionToken: junk(), apiSessionToken: junk(), terminatorId: `fz-junk-${i}`, checkPassed: next() < 0.5 })
      if (i % 2_000 === 0) await Bun.sleep(1)
    }
    await pollReply(r, r.send({ contentType: ChannelContentType.Ping }), 60_000, 'the ping after the flood')
    r.close()
    await r.closed
    const stored = await childRequest(child.url, 'GET', `${M}/terminators?filter=${encodeURIComponent(`router = "${mine.id}"`)}`, { token })
    expect(stored.body.data).toEqual([])
    await expectHealthy('a flood of garbage')
  }, 120_000)
})
