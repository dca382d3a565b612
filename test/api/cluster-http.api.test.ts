// What clients see of a cluster over HTTPS (issue 23; oidc-and-ha.md §5 and §7): two edgeplane nodes on one etcd
// member (test/support/etcd.ts), node B restored from a backup of node A. GET /controllers on both APIs and both nodes
// (two rows, both online; B offline on A once B stops), HA_CONTROLLER in /version, an OIDC sign-in on A whose access
// token opens requests on B and whose refresh token is refreshed on B (the JWKS of each node lists both keys), a token
// of a controller outside the cluster refused, the `cluster` health check, the cluster metrics, GET /cluster
// (edgeplane's own), and with etcd down: the list still answered from memory, the check failing and saying why.
// A single node lists no controllers and advertises no HA_CONTROLLER.
import { TEST_EPOCH_MS } from '../support/test-epoch.ts'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../src/lib/clock.ts'
import { backupDataDir } from '../../src/operate/operate-backup.ts'
import { restoreDataDir } from '../../src/operate/operate-restore.ts'
import { ADMIN, expectError, expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'
import { decodeJwtHeader, decodeJwtPayload, oidcSdk } from '../support/oidc-sdk.ts'
import { etcdAvailable, etcdSkipReason, startEtcdCluster, type EtcdCluster } from '../support/etcd.ts'
import { enrollRouter, RouterEmulator } from '../support/router-emulator.ts'

const NOT_EDGE_API = 'the health-checks API and /metrics are not operations of the edge APIs (no edge spec describes them)'

if (!etcdAvailable()) console.log(`skipping the cluster HTTP tests: ${etcdSkipReason()}`)

/** Polls `check` until it holds (it answers true) or the deadline passes; the deadline is a failure, not a measure. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await Bun.sleep(50)
  }
}

const fingerprintOf = (t: TestServer) => t.server.pki.server.view.fingerprintSha1

describe('a single node', () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
  })
  afterAll(async () => {
    await t?.stop()
  })

  it('lists no controllers on either API, as the real controller without Raft', async () => {
    const m = await t.mgmt.get('/controllers')
    expectStatus(m, 200)
    expect(m.body.data).toEqual([])
    expect(m.body.meta.pagination.totalCount).toBe(0)
    const c = await t.as(await t.login(ADMIN.username, ADMIN.password, 'client'), 'client').get('/controllers')
    expectStatus(c, 200)
    expect(c.body.data).toEqual([])
  })

  it('does not advertise HA_CONTROLLER, has no cluster health check, and answers GET /cluster 404', async () => {
    const v = await t.raw.get('/edge/client/v1/version')
    expect(v.body.data.capabilities).not.toContain('HA_CONTROLLER')
    const h = await t.raw('GET', '/health-checks', { offSpec: NOT_EDGE_API })
    expect(h.body.data.checks.map((c: { id: string }) => c.id)).not.toContain('cluster')
    const s = await t.mgmt.get('/cluster')
    expectError(s, 404, 'NOT_FOUND')
    expect(s.text).toContain('single node')
  })

  it('refuses GET /controllers without a session on both APIs', async () => {
    expectError(await t.raw.get('/edge/client/v1/controllers'), 401, 'UNAUTHORIZED')
    expectError(await t.raw.get('/edge/management/v1/controllers'), 401, 'UNAUTHORIZED')
  })
})

describe.skipIf(!etcdAvailable())('two cluster nodes', () => {
  let etcd: EtcdCluster
  let a: TestServer
  let b: TestServer
  let aClient: ApiClient
  const dirs: string[] = []
  const clock = new FakeClock(TEST_EPOCH_MS)

  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1 })
    const node = (name: string) => ({ endpoints: etcd.endpoints, nodeName: name, prefix: '/http-test', heartbeatEveryMs: 200 })
    const dirA = mkdtempSync(join(tmpdir(), 'edgeplane-cluster-a-'))
    const work = mkdtempSync(join(tmpdir(), 'edgeplane-cluster-backup-'))
    dirs.push(dirA, work)
    a = await startTestServer({ dataDir: dirA, clock, cluster: node('node-a') })
    await backupDataDir({ dataDir: dirA, outFile: join(work, 'a.tar'), now: new Date(clock.now()) })
    const dirB = join(work, 'b')
    await restoreDataDir(join(work, 'a.tar'), dirB)
    b = await startTestServer({ dataDir: dirB, clock, cluster: node('node-b') })
    aClient = a.as(await a.login(ADMIN.username, ADMIN.password, 'client'), 'client')
  })

  afterAll(async () => {
    await b?.stop()
    await a?.stop()
    await etcd?.stop()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  const bothOnline = async (t: TestServer) => {
    const res = await t.mgmt.get('/controllers')
    return res.status === 200 && res.body.data.length === 2 && res.body.data.every((c: { isOnline: boolean }) => c.isOnline)
  }

  it('advertises HA_CONTROLLER (with OIDC_AUTH) in /version on every node', async () => {
    for (const t of [a, b]) {
      const v = await t.raw.get('/edge/client/v1/version')
      expectStatus(v, 200)
      expect(v.body.data.capabilities).toEqual(['OIDC_AUTH', 'HA_CONTROLLER'])
    }
  })

  it('lists both nodes, online, on the Management API of each node', async () => {
    await eventually('node A sees both nodes online', () => bothOnline(a))
    await eventually('node B sees both nodes online', () => bothOnline(b))
    for (const t of [a, b]) {
      const res = await t.mgmt.get('/controllers?sort=name')
      expectStatus(res, 200)
      expect(res.body.data.map((c: { name: string }) => c.name)).toEqual(['node-a', 'node-b'])
      for (const [c, owner] of [[res.body.data[0], a], [res.body.data[1], b]] as const) {
        expect(c.id).toBe(c.name)
        expect(c.fingerprint).toBe(fingerprintOf(owner))
        expect(c.certPem).toBe(owner.server.pki.server.certPem)
        expect(c.isPreferredLeader).toBe(false)
        // where routers reach the node's control plane (the API port by ALPN: no --ctrl-listen here)
        expect(c.ctrlAddress).toBe(owner.server.ctrlEndpoint)
        expect(Date.parse(c.lastJoinedAt)).toBeGreaterThan(0)
        expect(c.apiAddresses).toEqual({
          'edge-client': [{ url: `${owner.server.advertisedUrl}/edge/client/v1`, version: 'v1' }],
          'edge-management': [{ url: `${owner.server.advertisedUrl}/edge/management/v1`, version: 'v1' }],
          'edge-oidc': [{ url: `${owner.server.advertisedUrl}/oidc`, version: 'v1' }],
        })
      }
    }
    // the two nodes are two certificates of one PKI
    expect(fingerprintOf(a)).not.toBe(fingerprintOf(b))
  })

  it('shows a Client API session only the edge-client and edge-oidc addresses, and no ctrlAddress', async () => {
    for (const t of [a, b]) {
      const c = t === a ? aClient : t.as(await t.login(ADMIN.username, ADMIN.password, 'client'), 'client')
      const res = await c.get('/controllers?limit=25&offset=0')
      expectStatus(res, 200)
      expect(res.body.data).toHaveLength(2)
      for (const row of res.body.data) {
        expect(Object.keys(row.apiAddresses).sort()).toEqual(['edge-client', 'edge-oidc'])
        expect('ctrlAddress' in row).toBe(false)
        expect(row.isOnline).toBe(true)
      }
    }
  })

  it('names every node\'s control endpoint in an enrollment JWT, and shows a router online only on the node it is connected to', async () => {
    const r = await enrollRouter(a, 'cluster-router')
    const id = await a.create('/edge-routers', { name: 'cluster-jwt-router' })
    const jwt = (await a.mgmt.get(`/edge-routers/${id}`)).body.data.enrollmentJwt as string
    expect(decodeJwtPayload(jwt).ctrls).toEqual([a.server.ctrlEndpoint, b.server.ctrlEndpoint])
    await eventually('node B knows the router', async () => (await b.mgmt.get(`/edge-routers/${r.id}`)).status === 200)
    const router = await RouterEmulator.connect({ port: a.server.port, caPem: a.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })
    await eventually('node A shows the router online', async () => (await a.mgmt.get(`/edge-routers/${r.id}`)).body.data.isOnline === true)
    expect((await b.mgmt.get(`/edge-routers/${r.id}`)).body.data.isOnline).toBe(false)
    // node B admits it too (the router record, with its fingerprint, came through the log)
    const onB = await RouterEmulator.connect({ port: b.server.port, caPem: b.server.pki.caBundlePem, tls: { cert: r.cert, key: r.key }, routerId: r.id })
    await eventually('node B shows the router online', async () => (await b.mgmt.get(`/edge-routers/${r.id}`)).body.data.isOnline === true)
    // disabled on node A: both nodes close it (the update is applied on each)
    expectStatus(await a.mgmt.patch(`/edge-routers/${r.id}`, { disabled: true }), 200)
    expect(await router.waitClosed()).toBe(true)
    expect(await onB.waitClosed()).toBe(true)
  })

  it('pages, filters and sorts as every list', async () => {
    const page = await a.mgmt.get('/controllers?sort=name desc&limit=1&offset=1')
    expectStatus(page, 200)
    expect(page.body.data.map((c: { name: string }) => c.name)).toEqual(['node-a'])
    expect(page.body.meta.pagination).toEqual({ limit: 1, offset: 1, totalCount: 2 })
    const filtered = await aClient.get(`/controllers?filter=${encodeURIComponent(`fingerprint = "${fingerprintOf(b)}"`)}`)
    expect(filtered.body.data.map((c: { name: string }) => c.name)).toEqual(['node-b'])
    const online = await a.mgmt.get(`/controllers?filter=${encodeURIComponent('isOnline = true')}`)
    expect(online.body.data).toHaveLength(2)
    expectError(await a.mgmt.get(`/controllers?filter=${encodeURIComponent('nosuchfield = "x"')}`), 400, 'INVALID_FILTER')
  })

  it('accepts on node B an OIDC access token node A signed, and refreshes A\'s refresh token on B', async () => {
    const onA = oidcSdk(a)
    const tokens = await onA.passwordLogin(ADMIN.username, ADMIN.password)
    expect(decodeJwtHeader(tokens.access_token).kid).toBe(fingerprintOf(a))
    const onB = oidcSdk(b)
    const me = await onB.api(tokens.access_token, 'client').get('/current-identity')
    expectStatus(me, 200)
    expect(me.body.data.name).toBe('Default Admin')
    expectStatus(await onB.api(tokens.access_token, 'management').get('/controllers'), 200)
    // the refresh happens on B (an SDK that failed over re-points its provider): B signs the new tokens
    const refreshed = await onB.refresh(tokens.refresh_token!)
    expect(refreshed.status).toBe(200)
    expect(decodeJwtHeader(refreshed.json.access_token).kid).toBe(fingerprintOf(b))
    expect(decodeJwtPayload(refreshed.json.access_token).z_asid).toBe(decodeJwtPayload(tokens.access_token).z_asid)
    expectStatus(await oidcSdk(a).api(refreshed.json.access_token, 'client').get('/current-identity'), 200)
    // the refresh rotated A's refresh token: its revocation, written on B, refuses it on A too
    let again = await onA.refresh(tokens.refresh_token!)
    await eventually('node A refuses the rotated refresh token', async () => {
      again = await onA.refresh(tokens.refresh_token!)
      return again.status !== 200
    })
    expect(again.json.error).toBe('invalid_grant')
  })

  it('lists the signing key of every node in the JWKS of each node', async () => {
    for (const t of [a, b]) {
      const keys = await oidcSdk(t).call('GET', '/oidc/keys')
      expect(keys.status).toBe(200)
      expect(keys.json.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([fingerprintOf(a), fingerprintOf(b)].sort())
    }
  })

  it('refuses a token signed by a controller outside the cluster (another PKI)', async () => {
    const outsider = await startTestServer({ clock })
    try {
      const tokens = await oidcSdk(outsider).passwordLogin(ADMIN.username, ADMIN.password)
      expectError(await oidcSdk(b).api(tokens.access_token, 'client').get('/current-identity'), 401, 'UNAUTHORIZED')
      expect((await oidcSdk(b).refresh(tokens.refresh_token!)).status).toBe(400)
    } finally {
      await outsider.stop()
    }
  })

  it('has a healthy cluster check in /health-checks with the node, its revision, its lag and etcd', async () => {
    const h = await a.raw('GET', '/health-checks', { offSpec: NOT_EDGE_API })
    expectStatus(h, 200)
    const check = h.body.data.checks.find((c: { id: string }) => c.id === 'cluster')
    expect(check).toMatchObject({ healthy: true, consecutiveFailures: 0 })
    expect(check.details).toContain('node node-a')
    expect(check.details).toMatch(/applied revision \d+, \d+ revisions behind, etcd reachable/)
  })

  it('answers GET /cluster with both nodes, etcd, and equal digests once both applied the same revision', async () => {
    await a.create('/services', { name: 'cluster-http-svc', encryptionRequired: true })
    const status = async (t: TestServer) => {
      const res = await t.mgmt.get('/cluster')
      expectStatus(res, 200)
      return res.body.data
    }
    let sa = await status(a)
    let sb = await status(b)
    await eventually('both nodes applied the same revision', async () => {
      ;[sa, sb] = [await status(a), await status(b)]
      return sa.digest.revision === sb.digest.revision
    })
    expect(sa.digest).toEqual(sb.digest)
    expect(sa.digest.records).toBeGreaterThan(0)
    expect(sa).toMatchObject({ nodeName: 'node-a', state: 'live', clusterId: sb.clusterId })
    expect(sb.nodeName).toBe('node-b')
    expect(sa.appliedRevision).toBeGreaterThanOrEqual(sa.digest.revision)
    expect(sa.etcd.reachable).toBe(true)
    expect(sa.etcd.endpoints).toHaveLength(1)
    expect(sa.etcd.endpoints[0]).toMatchObject({ endpoint: etcd.endpoints[0], ok: true })
    expect(sa.nodes.map((n: { name: string }) => n.name)).toEqual(['node-a', 'node-b'])
    for (const n of sa.nodes) {
      expect(n.isOnline).toBe(true)
      expect(typeof n.revision).toBe('number')
      expect(n.apiUrl).toBe((n.name === 'node-a' ? a : b).server.advertisedUrl)
    }
    // admins only
    expectError(await b.raw.get('/edge/management/v1/cluster'), 401, 'UNAUTHORIZED')
  })

  it('shows the applied revision, the lag and the apply lag of commands other nodes proposed in /metrics', async () => {
    await b.create('/services', { name: 'cluster-http-from-b', encryptionRequired: true })
    const session = await a.login(ADMIN.username, ADMIN.password)
    const metricsOf = async (t: TestServer) => (await t.raw('GET', '/metrics', { offSpec: NOT_EDGE_API, session })).text
    let text = ''
    await eventually('node A counted the apply of a command node B proposed', async () => {
      text = await metricsOf(a)
      const m = /^edgeplane_cluster_apply_lag_seconds_count (\d+)$/m.exec(text)
      return m !== null && Number(m[1]) > 0
    })
    expect(text).toMatch(/^edgeplane_cluster_applied_revision \d+$/m)
    expect(text).toMatch(/^edgeplane_cluster_lag_revisions \d+$/m)
  })

  it('shows node B offline on node A soon after B stops, and A alone online', async () => {
    await b.stop()
    await eventually('node A shows node B offline', async () => {
      const res = await a.mgmt.get('/controllers')
      return res.body.data.find((c: { name: string }) => c.name === 'node-b')?.isOnline === false
    })
    const res = await aClient.get(`/controllers?filter=${encodeURIComponent('isOnline = true')}`)
    expect(res.body.data.map((c: { name: string }) => c.name)).toEqual(['node-a'])
    const cluster = await a.mgmt.get('/cluster')
    const nodeB = cluster.body.data.nodes.find((n: { name: string }) => n.name === 'node-b')
    expect(nodeB).toMatchObject({ isOnline: false, apiUrl: b.server.advertisedUrl })
    // the last revision B registered, and how far behind A's log it is
    expect(typeof nodeB.revision).toBe('number')
    expect(nodeB.lagRevisions).toBeGreaterThanOrEqual(0)
  })

  it('goes on answering /controllers from memory without etcd, while /health-checks and GET /cluster say etcd is unreachable', async () => {
    await etcd.members[0]!.kill()
    let check: { healthy: boolean; details: string } | undefined
    await eventually('the cluster check of node A fails', async () => {
      const h = await a.raw('GET', '/health-checks', { offSpec: NOT_EDGE_API })
      check = h.body.data.checks.find((c: { id: string }) => c.id === 'cluster')
      return h.status === 503 && check?.healthy === false
    })
    expect(check!.details).toContain('etcd unreachable')
    // reads of the list need no etcd: this node still applies nothing new but is live
    const res = await aClient.get('/controllers')
    expectStatus(res, 200)
    expect(res.body.data.find((c: { name: string }) => c.name === 'node-a').isOnline).toBe(true)
    const cluster = await a.mgmt.get('/cluster')
    expectStatus(cluster, 200)
    expect(cluster.body.data.etcd.reachable).toBe(false)
    expect(cluster.body.data.etcd.endpoints[0]).toMatchObject({ endpoint: etcd.endpoints[0], ok: false })
    expect(cluster.body.data.etcd.endpoints[0].error).toBeString()
  })
})
