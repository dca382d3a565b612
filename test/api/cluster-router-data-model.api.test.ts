// The router data model on a cluster of three nodes on etcd (two in this process, one a child process): every node
// numbers the model by the etcd revision of each change, on the cluster's id as timeline, so that (1) a router on
// node A sees, within moments, a change written on node B, under the same index a router on node C sees it; and
// (2) a router whose node is killed (kill -9) subscribes to another node with the index it holds and is replayed
// only the change sets it lacks, with no full state. And every node tells routers the cluster's control endpoints.
// @see router-control-plane.md §3.2 ("Index source: raft index in HA"), issue 30 "Cluster"
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fromBinary } from '@bufbuild/protobuf'
import { ContentType, DataState_ChangeSetSchema } from '../../src/control/pb/edge_ctrl_pb.ts'
import { ContentType as CtrlContentType, UpdateCtrlAddressesSchema } from '../../src/control/pb/ctrl_pb.ts'
import { ChannelHeader } from '../../src/control/wire/control-frame.ts'
import { startTestCluster, pollUntil, type TestCluster, type TestNode } from '../support/cluster.ts'
import { RouterEmulator } from '../support/router-emulator.ts'
import { ReceivedModel, subscribe, subscriptionIdOf } from '../support/router-data-model.ts'
import { etcdAvailable } from '../support/etcd.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { makeCsrPem } from '../support/pki.ts'

const MGMT = '/edge/management/v1'
let c: TestCluster
let admin: string

beforeAll(async () => {
  if (!etcdAvailable()) return
  c = await startTestCluster({ nodes: 3, kind: ['in-process', 'in-process', 'child'] })
  admin = await c.login(c.nodes[0])
}, 90_000)
afterAll(async () => {
  await c?.stop()
})

/** Creates and enrolls an edge router through node `n` (erott, two CSRs, as `ziti router enroll`). */
async function enroll(n: TestNode, name: string): Promise<{ id: string; cert: string; key: string }> {
  const created = await c.call(n, 'POST', `${MGMT}/edge-routers`, { token: admin, body: { name, isTunnelerEnabled: false } })
  expect(created.status).toBe(201)
  const id = created.body.data.id as string
  const view = await c.call(n, 'GET', `${MGMT}/edge-routers/${id}`, { token: admin })
  const keys = await generateKeyPair('ec-p256')
  const serverKeys = await generateKeyPair('ec-p256')
  const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
  const res = await c.call(n, 'POST', '/edge/client/v1/enroll/erott', {
    body: { token: view.body.data.enrollmentToken, clientCsr: await makeCsrPem(keys, { commonName: id, ...sans }), serverCsr: await makeCsrPem(serverKeys, { commonName: id, ...sans }) },
  })
  expect(res.status).toBe(200)
  await c.waitForRevision()
  return { id, cert: res.body.data.cert, key: await exportPrivateKeyPem(keys.privateKey) }
}

const connect = (n: TestNode, r: { id: string; cert: string; key: string }) =>
  RouterEmulator.connect({ port: Number(new URL(n.url).port), caPem: c.caPem, tls: { cert: r.cert, key: r.key }, routerId: r.id })

/** Subscribes and waits for the first full state; answers the model fed from the emulator's frames. */
async function follow(emu: RouterEmulator, subscriptionId: string, from?: { index: bigint; timelineId: string }): Promise<ReceivedModel> {
  const model = new ReceivedModel()
  model.subscriptionId = subscriptionId
  if (from) {
    model.index = from.index
    model.timelineId = from.timelineId
  }
  subscribe(emu, { subscriptionId, currentIndex: from?.index ?? 0n, timelineId: from?.timelineId ?? '' })
  if (!from) await emu.waitFor((f) => f.contentType === ContentType.DataStateType && subscriptionIdOf(f) === subscriptionId, 10_000, 'a full state')
  return model
}

const feed = (emu: RouterEmulator, model: ReceivedModel) => {
  for (const f of emu.received) if (subscriptionIdOf(f) === model.subscriptionId && !seenBy(model).has(f)) (seenBy(model).add(f), model.take(f))
}
const seen = new WeakMap<ReceivedModel, Set<unknown>>()
const seenBy = (m: ReceivedModel) => seen.get(m) ?? (seen.set(m, new Set()), seen.get(m)!)

describe.skipIf(!etcdAvailable())('the router data model on a cluster', () => {
  test('tells a connecting router every node\'s control endpoint by node name, and again when it asks', async () => {
    const [a] = c.nodes
    const r = await enroll(a, 'rdm-cluster-ctrls')
    const emu = await connect(a, r)
    try {
      const f = await emu.waitFor((x) => x.contentType === CtrlContentType.UpdateCtrlAddressesType, 5_000, 'UpdateCtrlAddresses')
      const upd = fromBinary(UpdateCtrlAddressesSchema, f.body)
      expect(upd.isLeader).toBe(true)
      expect(upd.index).toBeGreaterThan(0n)
      const byId = Object.fromEntries(upd.controllers.map((d) => [d.id, d.endpoints.map((e) => e.address)]))
      expect(Object.keys(byId).sort()).toEqual(c.nodes.map((n) => n.name).sort())
      for (const n of c.nodes) expect(byId[n.name]).toEqual([`tls:127.0.0.1:${new URL(n.url).port}`])
      expect([...upd.addresses].sort()).toEqual(Object.values(byId).flat().sort())
      // the answer's controller id (header 8) is the node name the list gives this node
      expect(new TextDecoder().decode(emu.helloAnswer.headers.get(ChannelHeader.Id))).toBe(a.name)
      const seen = emu.received.length
      emu.send({ contentType: CtrlContentType.RequestClusterMembers })
      await emu.waitFor((x) => emu.received.indexOf(x) >= seen && x.contentType === CtrlContentType.UpdateCtrlAddressesType, 5_000, 'the list asked for')
    } finally {
      emu.close()
    }
  }, 60_000)

  test('a change written on node B reaches routers on nodes A and C under the same index, on the cluster\'s timeline', async () => {
    const [a, b, nodeC] = c.nodes
    const ra = await enroll(a, 'rdm-cluster-a')
    const rc = await enroll(a, 'rdm-cluster-c')
    const onA = await connect(a, ra)
    const onC = await connect(nodeC, rc)
    try {
      const ma = await follow(onA, 'on-a')
      const mc = await follow(onC, 'on-c')
      feed(onA, ma)
      feed(onC, mc)
      expect(ma.timelineId).toBe(mc.timelineId)
      const created = await c.call(b, 'POST', `${MGMT}/services`, { token: admin, body: { name: 'rdm-cluster-svc', encryptionRequired: true } })
      expect(created.status).toBe(201)
      const svc = created.body.data.id as string
      const indexOf = async (emu: RouterEmulator, m: ReceivedModel) =>
        pollUntil('the change set of the new service', () => {
          feed(emu, m)
          const f = emu.received.find((x) => x.contentType === ContentType.DataStateChangeSetType && subscriptionIdOf(x) === m.subscriptionId && fromBinary(DataState_ChangeSetSchema, x.body).changes.some((e) => e.Model.case === 'service' && e.Model.value.id === svc))
          return f && fromBinary(DataState_ChangeSetSchema, f.body).index
        }, 5_000, 5)
      const [ia, ic] = [await indexOf(onA, ma), await indexOf(onC, mc)]
      expect(ia).toBe(ic)
      // the index is the etcd revision the write was applied at
      expect(Number(ia)).toBeLessThanOrEqual(await c.revision(b))
      expect(Number(ia)).toBeGreaterThan(0)
    } finally {
      onA.close()
      onC.close()
    }
  }, 60_000)

  test('a router whose node is killed resumes on another node by index: the change sets it lacks, no full state', async () => {
    const [a, , nodeC] = c.nodes
    const r = await enroll(a, 'rdm-cluster-mover')
    const onC = await connect(nodeC, r)
    const model = await follow(onC, 'before-kill')
    feed(onC, model)
    for (const name of ['rdm-before-1', 'rdm-before-2']) {
      expect((await c.call(a, 'POST', `${MGMT}/identities`, { token: admin, body: { name, type: 'User', isAdmin: false } })).status).toBe(201)
    }
    await pollUntil('the router has both identities', () => {
      feed(onC, model)
      const ids = [...(model.records.get('identity')?.values() ?? [])].map((v) => JSON.stringify(v))
      return ids.filter((v) => v.includes('rdm-before-')).length === 2
    }, 5_000)
    const held = { index: model.index, timelineId: model.timelineId }
    const fullStatesBefore = model.fullStates
    await c.killNode(nodeC)
    expect(await onC.waitClosed(5_000)).toBe(true)
    for (const name of ['rdm-after-1', 'rdm-after-2']) {
      expect((await c.call(a, 'POST', `${MGMT}/identities`, { token: admin, body: { name, type: 'User', isAdmin: false } })).status).toBe(201)
    }
    // the router's other controller: node A (its hello goes through the churn guard, which counts only this node)
    const onA = await connect(a, r)
    try {
      const resumed = await follow(onA, 'after-kill', held)
      // what the router held is the model before the kill: copied into the resumed model, as the router keeps it
      for (const [k, t] of model.records) resumed.records.set(k, new Map(t))
      for (const [k, m] of model.members) resumed.members.set(k, { identity: new Set(m.identity), service: new Set(m.service), postureCheck: new Set(m.postureCheck) })
      await pollUntil('the router has the identities made after the kill', () => {
        feed(onA, resumed)
        const ids = [...(resumed.records.get('identity')?.values() ?? [])].map((v) => JSON.stringify(v))
        return ids.filter((v) => v.includes('rdm-after-')).length === 2
      }, 5_000)
      const frames = onA.received.filter((f) => subscriptionIdOf(f) === 'after-kill')
      expect(frames.every((f) => f.contentType === ContentType.DataStateChangeSetType)).toBe(true)
      expect(fromBinary(DataState_ChangeSetSchema, frames[0]!.body).previousIndex).toBe(held.index)
      expect(resumed.fullStates).toBe(0)
      expect(fullStatesBefore).toBe(1)
    } finally {
      onA.close()
    }
  }, 60_000)
})
