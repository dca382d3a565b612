// Terminators in a cluster of two in-process nodes on etcd: one an SDK binds through an emulated edge router on
// node A (its control channel on A's API port by ALPN ziti-ctrl) is a replicated write, listed on node B with the same
// fields; the router, connected to node B as well, removes it there and node A no longer lists it. A router keeps
// a channel to every node it knows, and each node answers its own channels.
// @see router-control-plane.md §3.6, §4.2; oidc-and-ha.md (HA); ziti controller/handler_edge_ctrl/create_terminator_v2.go
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { CreateTerminatorResult } from '../../src/control/pb/edge_ctrl_pb.ts'
import { makeCsrPem } from '../support/pki.ts'
import { pollUntil, startTestCluster, type TestCluster, type TestNode } from '../support/cluster.ts'
import { RouterEmulator } from '../support/router-emulator.ts'
import { createTerminator, removeTerminators } from '../support/router-emulator-terminators.ts'

const MGMT = '/edge/management/v1'
const CLIENT = '/edge/client/v1'
let c: TestCluster
let admin: string
let routerId: string
let routerTls: { cert: string; key: string; ca: string }
let serviceId: string
let identityId: string
let apiSessionToken: string
let sessionToken: string

async function created(n: TestNode, path: string, body: unknown): Promise<string> {
  const res = await c.call(n, 'POST', `${MGMT}${path}`, { token: admin, body })
  if (res.status !== 201) throw new Error(`POST ${path} on ${n.name}: ${res.status} ${res.text}`)
  return res.body.data.id as string
}

const connect = (n: TestNode) =>
  RouterEmulator.connect({ port: Number(new URL(n.url).port), caPem: routerTls.ca, tls: { cert: routerTls.cert, key: routerTls.key }, routerId })

beforeAll(async () => {
  c = await startTestCluster({ nodes: 2 })
  const [a] = c.nodes
  admin = await c.login(a!)
  // an edge router enrolled through node A, as `ziti router enroll` does
  routerId = await created(a!, '/edge-routers', { name: 'ct-router', isTunnelerEnabled: false })
  const view = await c.call(a!, 'GET', `${MGMT}/edge-routers/${routerId}`, { token: admin })
  const clientKeys = await generateKeyPair('ec-p256')
  const serverKeys = await generateKeyPair('ec-p256')
  const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
  const enrolled = await c.call(a!, 'POST', `${CLIENT}/enroll/erott`, {
    body: {
      token: view.body.data.enrollmentToken,
      clientCsr: await makeCsrPem(clientKeys, { commonName: routerId, ...sans }),
      serverCsr: await makeCsrPem(serverKeys, { commonName: routerId, ...sans }),
    },
  })
  expect(enrolled.status).toBe(200)
  routerTls = { cert: enrolled.body.data.cert, key: await exportPrivateKeyPem(clientKeys.privateKey), ca: enrolled.body.data.ca }
  // a hosting identity with a password, its policies, a legacy sign-in and a Bind session, all on node A
  serviceId = await created(a!, '/services', { name: 'ct-svc', encryptionRequired: true })
  identityId = await created(a!, '/identities', { name: 'ct-host', type: 'User', isAdmin: false, roleAttributes: ['ct'] })
  await created(a!, '/authenticators', { method: 'updb', identityId, username: 'ct-host', password: 'ct-host-pass-1' })
  await created(a!, '/service-policies', { name: 'ct-bind', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#ct'], serviceRoles: [`@${serviceId}`] })
  await created(a!, '/edge-router-policies', { name: 'ct-erp', semantic: 'AnyOf', identityRoles: ['#ct'], edgeRouterRoles: [`@${routerId}`] })
  await created(a!, '/service-edge-router-policies', { name: 'ct-serp', semantic: 'AnyOf', serviceRoles: [`@${serviceId}`], edgeRouterRoles: [`@${routerId}`] })
  apiSessionToken = await c.login(a!, 'client', { username: 'ct-host', password: 'ct-host-pass-1' })
  const session = await c.call(a!, 'POST', `${CLIENT}/sessions`, { token: apiSessionToken, body: { serviceId, type: 'Bind' } })
  expect(session.status).toBe(201)
  sessionToken = session.body.data.token
  await c.waitForRevision()
}, 120_000)

afterAll(async () => {
  await c?.stop()
})

describe('terminators in a cluster', () => {
  test('a terminator made through node A is listed on node B; removed through node B, node A no longer lists it', async () => {
    const [a, b] = c.nodes
    const onA = await connect(a!)
    const res = await createTerminator(onA, { address: 'ct-term-1', sessionToken, apiSessionToken, cost: 9, precedence: 1, instanceId: 'ct-inst' }, 10_000)
    expect(res).toMatchObject({ terminatorId: 'ct-term-1', result: CreateTerminatorResult.Success })
    const fromA = (await c.call(a!, 'GET', `${MGMT}/terminators/ct-term-1`, { token: admin })).body.data
    expect(fromA).toMatchObject({ address: 'ct-term-1', binding: 'edge', serviceId, routerId, identity: 'ct-inst', cost: 9, precedence: 'required' })
    const fromB = await pollUntil('the terminator on node B', async () => {
      const r = await c.call(b!, 'GET', `${MGMT}/terminators/ct-term-1`, { token: admin })
      return r.status === 200 ? r.body.data : undefined
    })
    expect(fromB).toEqual(fromA)
    const system = await c.call(b!, 'GET', `${MGMT}/terminators?filter=${encodeURIComponent(`isSystem = true and hostId = "${identityId}" and sourceCtrl = "${a!.name}"`)}`, { token: admin })
    expect(system.body.data.map((t: { id: string }) => t.id)).toEqual(['ct-term-1'])
    // the same request through node B (the router asks any controller again after a reconnect): the same terminator
    const onB = await connect(b!)
    expect((await createTerminator(onB, { address: 'ct-term-1', sessionToken, apiSessionToken, cost: 9, precedence: 1, instanceId: 'ct-inst' }, 10_000)).result).toBe(CreateTerminatorResult.Success)
    expect(await removeTerminators(onB, ['ct-term-1'])).toMatchObject({ success: true })
    await pollUntil('the terminator gone on node A', async () => (await c.call(a!, 'GET', `${MGMT}/terminators/ct-term-1`, { token: admin })).status === 404)
    onA.close()
    onB.close()
  }, 60_000)
})
