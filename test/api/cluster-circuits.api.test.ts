// Circuits on a cluster of three nodes on etcd (two in this process, one a child process), with one emulated edge
// router connected to every node as a real router connects: a terminator made through one node's channel is known to
// every node (replicated), a dial sent on any node's channel is served by that node with a session made on another,
// and when the node that built a circuit is killed (kill -9), no other node tears the circuit down: its routers
// carry its bytes on (a real router asks only the circuit's own controller to confirm it).
// @see issue 31 "Cluster"; router-control-plane.md §4.5 (CircuitConfirmation), trap 9
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { startTestCluster, pollUntil, type TestCluster, type TestNode } from '../support/cluster.ts'
import { etcdAvailable } from '../support/etcd.ts'
import { makeCsrPem } from '../support/pki.ts'
import { RouterEmulator } from '../support/router-emulator.ts'
import { createTerminator } from '../support/router-emulator-terminators.ts'
import { answerRoutes, dialV2, unroutesOf } from '../support/router-emulator-circuits.ts'

const MGMT = '/edge/management/v1'
const CLIENT = '/edge/client/v1'
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

const post = async (n: TestNode, path: string, body: unknown, token = admin) => {
  const r = await c.call(n, 'POST', path, { token, body })
  if (r.status !== 201) throw new Error(`POST ${path} on ${n.name}: ${r.status} ${r.text}`)
  return r.body.data.id as string
}

describe.skipIf(!etcdAvailable())('circuits on a cluster', () => {
  test('any node serves a dial; killing the node that built a circuit leaves it to its routers', async () => {
    const [a, b, killed] = c.nodes
    // a router, enrolled through node A, connected to every node
    const routerId = await post(a, `${MGMT}/edge-routers`, { name: 'circ-cluster-r', isTunnelerEnabled: false })
    const view = await c.call(a, 'GET', `${MGMT}/edge-routers/${routerId}`, { token: admin })
    const keys = await generateKeyPair('ec-p256')
    const serverKeys = await generateKeyPair('ec-p256')
    const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
    const enrolled = await c.call(a, 'POST', `${CLIENT}/enroll/erott`, {
      body: { token: view.body.data.enrollmentToken, clientCsr: await makeCsrPem(keys, { commonName: routerId, ...sans }), serverCsr: await makeCsrPem(serverKeys, { commonName: routerId, ...sans }) },
    })
    expect(enrolled.status).toBe(200)
    await c.waitForRevision()
    const key = await exportPrivateKeyPem(keys.privateKey)
    const channels = new Map<string, RouterEmulator>()
    for (const n of c.nodes) {
      const emu = await RouterEmulator.connect({ port: Number(new URL(n.url).port), caPem: c.caPem, tls: { cert: enrolled.body.data.cert, key }, routerId })
      answerRoutes(emu, { peerData: new Map([[1003, new Uint8Array(32).fill(5)]]) })
      channels.set(n.name, emu)
    }
    try {
      // a service, its host and its dialer, made through node A; sessions through node B
      const serviceId = await post(a, `${MGMT}/services`, { name: 'circ-cluster-svc', encryptionRequired: true })
      const ids: Record<string, string> = {}
      for (const [who, type] of [['host', 'Bind'], ['dialer', 'Dial']] as const) {
        ids[who] = await post(a, `${MGMT}/identities`, { name: `circ-${who}`, type: 'User', isAdmin: false, roleAttributes: [`circ-${who}`] })
        await post(a, `${MGMT}/authenticators`, { method: 'updb', identityId: ids[who], username: `circ-${who}`, password: `circ-${who}-pass-1` })
        await post(a, `${MGMT}/service-policies`, { name: `circ-${who}-sp`, type, semantic: 'AnyOf', identityRoles: [`#circ-${who}`], serviceRoles: [`@${serviceId}`] })
      }
      await post(a, `${MGMT}/edge-router-policies`, { name: 'circ-erp', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: [`@${routerId}`] })
      await post(a, `${MGMT}/service-edge-router-policies`, { name: 'circ-serp', semantic: 'AnyOf', serviceRoles: [`@${serviceId}`], edgeRouterRoles: [`@${routerId}`] })
      await c.waitForRevision()
      const session = async (who: string, type: string) => {
        const token = await c.login(b, 'client', { username: `circ-${who}`, password: `circ-${who}-pass-1` })
        const s = await c.call(b, 'POST', `${CLIENT}/sessions`, { token, body: { serviceId, type } })
        expect(s.status).toBe(201)
        return { apiSessionToken: token, sessionToken: s.body.data.token as string }
      }
      const host = await session('host', 'Bind')
      const dialer = await session('dialer', 'Dial')
      await c.waitForRevision()
      // the host binds through node B's channel; the terminator is every node's
      const t = await createTerminator(channels.get(b.name)!, { address: 'circ-cluster-t', ...host, fingerprints: [], peerData: { 1003: new Uint8Array(32).fill(5) }, cost: 0, precedence: 0, instanceId: '' })
      expect(t.result).toBe(0)
      await c.waitForRevision()
      // the dial goes to the node about to be killed (a real router picks the session's controller or any)
      const onKilled = channels.get(killed.name)!
      const answer = await dialV2(onKilled, dialer)
      if (!answer.ok) throw new Error(`refused: ${answer.message}`)
      // the other nodes do not hold it: it is the killed node's
      for (const n of [a, b]) expect(n.server!.control.circuits!.get(answer.circuitId)).toBeUndefined()
      await c.killNode(killed)
      expect(await onKilled.waitClosed(5_000)).toBe(true)
      // the surviving nodes, still connected to the router, tear nothing down
      await Bun.sleep(2_000)
      for (const n of [a, b]) expect(unroutesOf(channels.get(n.name)!).filter((u) => u.circuitId === answer.circuitId)).toEqual([])
      // and the router's next dials are served by a node still alive
      const again = await dialV2(channels.get(a.name)!, dialer)
      expect(again.ok).toBe(true)
      await pollUntil('node A holds the new circuit', () => (again.ok ? a.server!.control.circuits!.get(again.circuitId) : undefined), 3_000)
    } finally {
      for (const emu of channels.values()) emu.close()
    }
  }, 90_000)
})
