// An SDK keeps listing its service while the node it talks to is killed: the C SDK's HA behaviour (oidc-and-ha.md §5)
// played on the wire against a 3-node cluster: /version names HA_CONTROLLER; OIDC sign-in on one node; the
// controller list (`GET /controllers?limit=25&offset=0`) gives every node's `edge-client` v1 URL and `isOnline`; after
// a transport failure (the node is killed with SIGKILL) the SDK picks another online node, asks its /version, and
// goes on with the same bearer token; its refresh token is accepted there too.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, pollUntil, startTestCluster, type TestCluster, type TestNode } from '../support/cluster.ts'
import { oidcSdk, type OidcTokensAnswer } from '../support/oidc-sdk.ts'
import { checkAnswer, specCheckTally } from '../support/spec-check.ts'

let c: TestCluster
let serviceName: string

beforeAll(async () => {
  // the node the SDK starts on runs in a child process, so it can be killed without warning
  c = await startTestCluster({ nodes: 3, kind: ['child', 'in-process', 'in-process'] })
  const admin = await c.login(c.nodes[1])
  serviceName = `failover-${process.pid}`
  const svc = await c.call(c.nodes[1], 'POST', '/edge/management/v1/services', { token: admin, body: { name: serviceName, encryptionRequired: true } })
  expect(svc.status).toBe(201)
  const me = await c.call(c.nodes[1], 'GET', '/edge/management/v1/current-identity', { token: admin })
  const policy = await c.call(c.nodes[1], 'POST', '/edge/management/v1/service-policies', {
    token: admin,
    body: { name: `dial-${serviceName}`, type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${me.body.data.id}`], serviceRoles: [`@${svc.body.data.id}`] },
  })
  expect(policy.status).toBe(201)
  await c.waitForRevision()
}, 90_000)

afterAll(async () => {
  await c?.stop()
})

/** One request as the SDK sends it: a bearer token, on a new connection; JSON answers are checked against the spec. */
async function sdkGet(baseUrl: string, path: string, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}${path}`, {
    headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    keepalive: false,
    tls: { ca: c.caPem },
  } as RequestInit)
  const text = await res.text()
  const body = text ? JSON.parse(text) : undefined
  checkAnswer({ method: 'GET', url: new URL(`${baseUrl}${path}`).pathname + new URL(`${baseUrl}${path}`).search, status: res.status, contentType: res.headers.get('content-type'), text, body })
  specCheckTally.recordChecked()
  return { status: res.status, body }
}

interface Endpoint {
  /** The node's `edge-client` v1 URL (https://host:port/edge/client/v1). */
  url: string
  isOnline: boolean
  offlineSince?: number
}

/** The SDK's endpoint map from the controller list: keyed by each node's edge-client v1 URL; nodes without one skipped. */
async function controllerEndpoints(clientApiUrl: string, token: string): Promise<Endpoint[]> {
  const out: Endpoint[] = []
  for (let offset = 0; ; offset += 25) {
    const page = await sdkGet(clientApiUrl, `/controllers?limit=25&offset=${offset}`, token)
    expect(page.status).toBe(200)
    for (const ctrl of page.body.data) {
      const v1 = (ctrl.apiAddresses?.['edge-client'] ?? []).find((a: { version: string }) => a.version === 'v1')
      if (v1) out.push({ url: v1.url, isOnline: ctrl.isOnline })
    }
    if (offset + 25 >= page.body.meta.pagination.totalCount) return out
  }
}

const listedServices = async (clientApiUrl: string, token: string) => {
  const r = await sdkGet(clientApiUrl, '/services?limit=500', token)
  return { status: r.status, names: (r.body?.data ?? []).map((s: { name: string }) => s.name) as string[] }
}

describe('an SDK on a cluster', () => {
  it('keeps listing its service when the node it talks to is killed, with the same token, and refreshes on another node', async () => {
    const first: TestNode = c.nodes[0]
    const version = await sdkGet(first.url, '/edge/client/v1/version')
    expect(version.body.data.capabilities).toContain('HA_CONTROLLER')
    expect(version.body.data.capabilities).toContain('OIDC_AUTH')

    const sdk = oidcSdk({ url: first.url, caPem: c.caPem })
    const tokens: OidcTokensAnswer = await sdk.passwordLogin(ADMIN.username, ADMIN.password)
    let current = `${first.url}/edge/client/v1`
    // a node learns of the others' liveness keys within a second of their start: until then it lists them offline
    const endpoints = await pollUntil('every node listed online', async () => {
      const list = await controllerEndpoints(current, tokens.access_token)
      return list.length === 3 && list.every((e) => e.isOnline) ? list : undefined
    }, 15_000, 100)
    expect(endpoints.map((e) => e.url)).toContain(current)
    expect((await listedServices(current, tokens.access_token)).names).toContain(serviceName)

    await c.killNode(first)
    // the next request fails at the transport: the SDK marks the node offline and moves to another online one
    const failed = await listedServices(current, tokens.access_token).then(
      () => false,
      () => true,
    )
    expect(failed).toBe(true)
    const dead = endpoints.find((e) => e.url === current)!
    dead.isOnline = false
    dead.offlineSince = Date.now()
    const next = endpoints.find((e) => e.isOnline && e.url !== current)!
    current = next.url
    const nextVersion = await sdkGet(current, '/version')
    expect(nextVersion.status).toBe(200)
    const listed = await listedServices(current, tokens.access_token)
    expect(listed.status).toBe(200)
    expect(listed.names).toContain(serviceName)

    // the refresh goes to the new node's OIDC provider (its /version names it) and is accepted there
    const providerUrl: string = nextVersion.body.data.apiVersions['edge-oidc'].v1.apiBaseUrls[0]
    const nextSdk = oidcSdk({ url: new URL(providerUrl).origin, caPem: c.caPem })
    const refreshed = await nextSdk.refresh(tokens.refresh_token!)
    expect(refreshed.status).toBe(200)
    expect((await listedServices(current, refreshed.json.access_token)).names).toContain(serviceName)

    // the controller list there soon shows the killed node offline: the SDK will not pick it
    await pollUntil('the killed node listed offline', async () => {
      const now = await controllerEndpoints(current, refreshed.json.access_token)
      return now.find((e) => e.url === dead.url)?.isOnline === false
    }, 15_000, 200)
  }, 90_000)
})
