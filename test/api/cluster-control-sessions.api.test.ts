// API sessions at the edge routers on a cluster of two in-process nodes (a 3-member etcd): every node applies every
// command, so each pushes to the routers connected to it from its own applied events. A router emulator connected to
// node B (on B's API port, by ALPN ziti-ctrl) gets the full state that includes a session opened on node A before
// it connected, ApiSessionAdded for a login on node A, and ApiSessionRemoved for its logout on node A; node B answers
// its heartbeats, knowing node A's sessions by their tokens.
// @see router-control-plane.md §3.4; etcd-as-command-log.md
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { makeCsrPem } from '../support/pki.ts'
import { etcdAvailable, etcdSkipReason } from '../support/etcd.ts'
import { startTestCluster, pollUntil, type TestCluster, type TestNode } from '../support/cluster.ts'
import { RouterEmulator } from '../support/router-emulator.ts'
import { sendHeartbeat, waitForAdded, waitForApiSessionRemoved, waitForFullState } from '../support/router-emulator-sessions.ts'

const MGMT = '/edge/management/v1'
const CLIENT = '/edge/client/v1'

if (!etcdAvailable()) console.log(`skipping the cluster API-session tests: ${etcdSkipReason()}`)

describe.skipIf(!etcdAvailable())('API sessions pushed by every node to its own routers', () => {
  let c: TestCluster
  let admin: string
  let a: TestNode
  let b: TestNode
  let router: RouterEmulator | undefined
  let routerId: string
  let routerTls: { cert: string; key: string; ca: string }

  beforeAll(async () => {
    c = await startTestCluster({ nodes: 2 })
    ;[a, b] = c.nodes
    admin = await c.login(a)
    // an edge router created and enrolled on node A, as `ziti router enroll` does
    const created = await c.call(a, 'POST', `${MGMT}/edge-routers`, { token: admin, body: { name: 'cluster-sessions-er', isTunnelerEnabled: false } })
    expect(created.status).toBe(201)
    routerId = created.body.data.id
    const view = await c.call(a, 'GET', `${MGMT}/edge-routers/${routerId}`, { token: admin })
    const clientKeys = await generateKeyPair('ec-p256')
    const serverKeys = await generateKeyPair('ec-p256')
    const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
    const enrolled = await c.call(a, 'POST', `${CLIENT}/enroll/erott`, {
      body: {
        token: view.body.data.enrollmentToken,
        clientCsr: await makeCsrPem(clientKeys, { commonName: routerId, ...sans }),
        serverCsr: await makeCsrPem(serverKeys, { commonName: routerId, ...sans }),
      },
    })
    expect(enrolled.status).toBe(200)
    routerTls = { cert: enrolled.body.data.cert, key: await exportPrivateKeyPem(clientKeys.privateKey), ca: enrolled.body.data.ca }
    const user = await c.call(a, 'POST', `${MGMT}/identities`, { token: admin, body: { name: 'cluster-sessions-user', type: 'User', isAdmin: false } })
    expect(user.status).toBe(201)
    expect((await c.call(a, 'POST', `${MGMT}/authenticators`, { token: admin, body: { method: 'updb', identityId: user.body.data.id, username: 'cluster-sessions-user', password: 'cluster-sessions-pass' } })).status).toBe(201)
    await c.waitForRevision()
  }, 90_000)

  afterAll(async () => {
    router?.close()
    await c?.stop()
  })

  const login = async (n: TestNode) => {
    const res = await c.call(n, 'POST', `${CLIENT}/authenticate?method=password`, { body: { username: 'cluster-sessions-user', password: 'cluster-sessions-pass' } })
    expect(res.status).toBe(200)
    return { id: res.body.data.id as string, token: res.body.data.token as string }
  }

  test('a router on node B gets node A\'s sessions: in its full state, then a login and a logout on node A', async () => {
    const before = await login(a)
    await c.waitForRevision()
    const port = Number(new URL(b.url).port)
    // the router's channel is admitted by node B once the router record has reached it (it has: the revision above)
    router = await pollUntil('the router admitted by node B', async () => {
      const o = await RouterEmulator.tryConnect({ port, caPem: routerTls.ca, tls: { cert: routerTls.cert, key: routerTls.key }, routerId })
      return o.ok ? o.router : undefined
    })
    const fs = await waitForFullState(router)
    expect(fs.sessions.find((s) => s.token === before.token)).toEqual(expect.objectContaining({ id: before.id }))

    const later = await login(a)
    const added = await waitForAdded(router, (s, full) => !full && s.token === later.token, 'node A\'s login on the router of node B', 10_000)
    expect(added.body.apiSessions[0].id).toBe(later.id)

    // node B knows node A's session by its token: a heartbeat naming it is no unknown token
    const unknown = crypto.randomUUID()
    sendHeartbeat(router, [later.token, unknown])
    const answer = await waitForApiSessionRemoved(router, unknown)
    expect(answer.body.tokens).toEqual([unknown])

    const out = await c.call(a, 'DELETE', `${CLIENT}/current-api-session`, { token: later.token })
    expect(out.status).toBe(200)
    const removed = await waitForApiSessionRemoved(router, later.token, 'node A\'s logout on the router of node B', 10_000)
    expect(removed.body).toMatchObject({ tokens: [later.token], ids: [later.id] })
  }, 60_000)
})
