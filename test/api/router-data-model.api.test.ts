// The router data model over the control channel, with the router emulator and a model kept as a router keeps it
// (test/support/router-data-model.ts): the public keys at an edge router's sync; a subscription with nothing held
// gets a full state, one on the current timeline gets the change sets it lacks, one on another timeline or too old
// a full state; every change of the network reaches a subscribed router within the same turn as one change set with
// `previousIndex` chaining; a model kept from change sets equals a fresh full state after every kind of write; the
// subscription header, durations, renewals, and the current-index message.
// @see router-control-plane.md §3.2, §3.3, §9 traps 5, 10
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { fromBinary } from '@bufbuild/protobuf'
import { createHash } from 'node:crypto'
import {
  ContentType,
  DataState_ChangeSetSchema,
  DataState_PublicKey_Usage,
  DataStateSchema,
  Header,
} from '../../src/control/pb/edge_ctrl_pb.ts'
import { readU64 } from '../../src/control/wire/control-headers.ts'
import { decodePem } from '../../src/lib/pem.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import { dataModelFrames, ReceivedModel, subscribe, subscriptionIdOf } from '../support/router-data-model.ts'

let srv: TestServer
let ctrlPort: number

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 }, routerDataModel: { currentIndexEveryMs: 200 } })
  ctrlPort = srv.server.control.port!
})
afterAll(async () => {
  await srv.stop()
})

const connect = (r: RouterIdentity) =>
  RouterEmulator.connect({ port: ctrlPort, caPem: srv.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })

/** Feeds every data model frame the emulator received (from `from` on) into `model`; answers the new position. */
function feed(emu: RouterEmulator, model: ReceivedModel, from: number): number {
  for (const f of emu.received.slice(from)) model.take(f)
  return emu.received.length
}

async function settle(emu: RouterEmulator, model: ReceivedModel, pos: { at: number }, until: () => boolean, ms = 3_000): Promise<void> {
  const end = performance.now() + ms
  for (;;) {
    pos.at = feed(emu, model, pos.at)
    if (until()) return
    if (performance.now() > end) throw new Error('the data model did not reach the expected state in time')
    await Bun.sleep(10)
  }
}

const sha1 = (der: Uint8Array) => createHash('sha1').update(der).digest('hex')
const derOf = (pem: string) => decodePem(pem)[0]!.der

describe('the public keys at an edge router\'s sync', () => {
  it('sends a synthetic change set with the server certificate (JWTs and client certificates) and the root (client certificates)', async () => {
    const r = await enrollRouter(srv, 'rdm-keys')
    const emu = await connect(r)
    try {
      const f = await emu.waitFor((x) => x.contentType === ContentType.DataStateChangeSetType, 5_000, 'the public keys')
      const cs = fromBinary(DataState_ChangeSetSchema, f.body)
      expect(cs.isSynthetic).toBe(true)
      expect(subscriptionIdOf(f)).toBeUndefined()
      const keys = new Map(cs.changes.map((e) => [(e.Model.value as { kid: string }).kid, e]))
      const pki = srv.server.pki
      const server = keys.get(sha1(derOf(pki.server.certPem)))!
      expect(server.isSynthetic).toBe(true)
      expect((server.Model.value as { usages: number[] }).usages).toEqual([DataState_PublicKey_Usage.JWTValidation, DataState_PublicKey_Usage.ClientX509CertValidation])
      expect((keys.get(sha1(derOf(pki.root.certPem)))!.Model.value as { usages: number[] }).usages).toEqual([DataState_PublicKey_Usage.ClientX509CertValidation])
      expect(keys.size).toBe(2)
    } finally {
      emu.close()
    }
  })
})

describe('a subscription', () => {
  let r: RouterIdentity
  let emu: RouterEmulator
  const model = new ReceivedModel()
  const pos = { at: 0 }
  beforeAll(async () => {
    r = await enrollRouter(srv, 'rdm-sub')
    emu = await connect(r)
  })
  afterAll(() => emu.close())

  it('with nothing held gets a full state carrying its subscription id, the timeline and the end index', async () => {
    model.subscriptionId = 'sub-1'
    subscribe(emu, { subscriptionId: 'sub-1' })
    const f = await emu.waitFor((x) => x.contentType === ContentType.DataStateType, 5_000, 'a full state')
    expect(subscriptionIdOf(f)).toBe('sub-1')
    const state = fromBinary(DataStateSchema, f.body)
    expect(state.endIndex).toBeGreaterThan(0n)
    expect(state.timelineId).not.toBe('')
    pos.at = feed(emu, model, 0)
    expect(model.timelineId).toBe(state.timelineId)
    // what the network holds at start: the built-in config types, the default admin, the routers
    expect(Object.keys((model.dump().configType as object) ?? {}).length).toBeGreaterThan(0)
    expect(Object.keys(model.dump().identity as object)).toContain((await adminId()))
    expect(Object.keys(model.dump().router as object)).toContain(r.id)
  })

  it('gets each write as one change set chained on the index it holds, and stays equal to a fresh full state', async () => {
    const before = model.index
    const svc = await srv.create('/services', { name: 'rdm-svc', encryptionRequired: true, roleAttributes: ['web'] })
    await settle(emu, model, pos, () => model.index > before)
    expect(model.records.get('service')?.has(svc)).toBe(true)
    const id = await srv.create('/identities', { name: 'rdm-alice', type: 'User', isAdmin: false, roleAttributes: ['staff'] })
    const pol = await srv.create('/service-policies', { name: 'rdm-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#web'] })
    await settle(emu, model, pos, () => model.members.get(pol)?.identity.has(id) === true)
    expect([...model.members.get(pol)!.service]).toEqual([svc])
    await expectEqualToFullState(model)
  })

  it('sees access taken away and given back by role attributes, and a policy deleted', async () => {
    const id = (await srv.mgmt.get('/identities?filter=name="rdm-alice"')).body.data[0].id
    const pol = (await srv.mgmt.get('/service-policies?filter=name="rdm-dial"')).body.data[0].id
    expectStatus(await srv.mgmt.patch(`/identities/${id}`, { roleAttributes: ['other'] }), 200)
    await settle(emu, model, pos, () => model.members.get(pol)?.identity.has(id) === false)
    expectStatus(await srv.mgmt.patch(`/identities/${id}`, { roleAttributes: ['staff'] }), 200)
    await settle(emu, model, pos, () => model.members.get(pol)?.identity.has(id) === true)
    expectStatus(await srv.mgmt.del(`/service-policies/${pol}`), 200)
    await settle(emu, model, pos, () => !model.members.has(pol))
    await expectEqualToFullState(model)
  })

  it('resumes with the change sets after the index it holds, and gets a full state for an unknown timeline', async () => {
    const held = model.index
    const timeline = model.timelineId
    await srv.create('/config-types', { name: 'rdm-type', schema: {} })
    await srv.create('/posture-checks', { name: 'rdm-mac', typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'], roleAttributes: ['pc'] })
    await settle(emu, model, pos, () => model.index > held)
    const seen = new Set(emu.received)
    subscribe(emu, { subscriptionId: 'sub-2', currentIndex: held, timelineId: timeline })
    const first = await emu.waitFor((f) => !seen.has(f) && subscriptionIdOf(f) === 'sub-2', 5_000, 'a replayed change set')
    expect(first.contentType).toBe(ContentType.DataStateChangeSetType)
    expect(fromBinary(DataState_ChangeSetSchema, first.body).previousIndex).toBe(held)
    await Bun.sleep(50)
    const replayed = emu.received.filter((f) => !seen.has(f) && subscriptionIdOf(f) === 'sub-2')
    expect(replayed.every((f) => f.contentType === ContentType.DataStateChangeSetType)).toBe(true)
    expect(fromBinary(DataState_ChangeSetSchema, replayed.at(-1)!.body).index).toBe(model.index)
    const seen2 = new Set(emu.received)
    subscribe(emu, { subscriptionId: 'sub-3', currentIndex: held, timelineId: 'another-timeline' })
    const full = await emu.waitFor((f) => !seen2.has(f) && subscriptionIdOf(f) === 'sub-3', 5_000, 'a full state')
    expect(full.contentType).toBe(ContentType.DataStateType)
    // the router now follows sub-3, from its full state
    model.subscriptionId = 'sub-3'
    pos.at = feed(emu, model, pos.at)
    expect(model.fullStates).toBe(2)
    await expectEqualToFullState(model)
  })

  it('is told the current index in header 1025 of a CurrentIndexMessage when it fell behind', async () => {
    const f = await emu.waitFor((x) => x.contentType === ContentType.CurrentIndexMessageType, 5_000, 'a current index message')
    expect(f.body.length).toBe(0)
    expect(readU64(f.headers, Header.RouterDataModelIndex)).toBeGreaterThan(0n)
  })
})

const adminId = async () => (await srv.mgmt.get('/current-identity')).body.data.id as string

/** A fresh subscription's full state, compared with `model`. */
async function expectEqualToFullState(model: ReceivedModel): Promise<void> {
  const r = await enrollRouter(srv, `rdm-check-${Math.random().toString(36).slice(2, 8)}`)
  const emu = await connect(r)
  try {
    subscribe(emu, { subscriptionId: 'check' })
    await emu.waitFor((f) => f.contentType === ContentType.DataStateType, 5_000, 'a full state')
    const fresh = new ReceivedModel()
    for (const f of emu.received) if (f.contentType === ContentType.DataStateType) fresh.take(f)
    // the new router itself is the one difference: a record created after `model` was brought up to date
    const a = model.dump() as { router: Record<string, unknown> }
    const b = fresh.dump() as { router: Record<string, unknown> }
    delete b.router[r.id]
    delete a.router[r.id]
    expect(a).toEqual(b)
  } finally {
    emu.close()
  }
}

