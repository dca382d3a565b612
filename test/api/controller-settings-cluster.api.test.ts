// Controller settings on a cluster of two in-process nodes (edge-api management.yml /controller-settings; the real
// controller's per-controller settings): an override of one node, made on the other, is read on both and applied by
// that node alone (its OIDC authorize and end_session), list by list over the global settings; changes, a clear and a
// delete move every node the same way, a restart keeps them, and refusals write nothing anywhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { etcdAvailable } from '../support/etcd.ts'
import { startTestCluster, pollUntil, type TestCluster, type TestNode } from '../support/cluster.ts'
import { pkcePair, sdkAuthorizeQuery } from '../support/oidc.ts'

let c: TestCluster
let admin: string
const M = '/edge/management/v1'
const APP = 'https://node-two.example/cb'
const DEFAULT_CB = 'http://localhost:4100/auth/callback'

beforeAll(async () => {
  c = await startTestCluster({ nodes: 2 })
  admin = await c.login(c.nodes[0])
}, 60_000)
afterAll(async () => {
  await c?.stop()
})

const call = (n: TestNode, method: string, path: string, body?: unknown) => c.call(n, method, `${M}${path}`, { token: admin, body })

/** Whether node `n`'s authorize accepts `redirect_uri` (302) or refuses it (400 invalid_request). */
const authorizes = async (n: TestNode, redirect_uri: string) => {
  const url = new URL(`${n.url}/oidc/authorize`)
  for (const [k, v] of Object.entries(sdkAuthorizeQuery(pkcePair().challenge, { redirect_uri }))) for (const x of [v].flat()) url.searchParams.append(k, x)
  const res = await fetch(url, { redirect: 'manual', tls: { ca: c.caPem } } as RequestInit)
  await res.arrayBuffer()
  if (res.status !== 302 && res.status !== 400) throw new Error(`authorize on ${n.name} answered ${res.status}`)
  return res.status === 302
}

/** Polls until every node's effective settings of `id` satisfy `check`. */
const everywhere = (id: string, check: (data: any) => boolean) =>
  Promise.all(
    c.nodes.map((n) =>
      pollUntil(`${id}/effective on ${n.name}`, async () => {
        const r = await call(n, 'GET', `/controller-settings/${id}/effective`)
        return r.status === 200 && check(r.body.data) ? r.body.data : undefined
      }, 5_000),
    ),
  )

describe.skipIf(!etcdAvailable())('controller settings on a cluster', () => {
  test('an override of node-2 made on node-1: both nodes read it, node-2 alone applies it', async () => {
    const [a, b] = c.nodes
    expect((await call(a, 'GET', '/controller-settings/node-2/effective')).body.data).not.toHaveProperty('instance')
    const made = await call(a, 'POST', '/controller-settings', { controllerId: 'node-2', oidc: { redirectUris: [APP] }, tags: { why: 'app on node-2' } })
    expect(made.status).toBe(201)
    expect(made.body.data).toMatchObject({ id: 'node-2', _links: { self: { href: './controller-settings/node-2' } } })
    const global = (await call(a, 'GET', '/controller-settings/global')).body.data
    const [onA, onB] = await everywhere('node-2', (d) => d.instance !== undefined)
    for (const d of [onA, onB]) {
      expect(d).toMatchObject({
        id: 'node-2',
        tags: { why: 'app on node-2' },
        effective: { oidc: { redirectUris: [APP], postLogoutUris: global.oidc.postLogoutUris } },
        instance: { oidc: { redirectUris: [APP] } },
      })
    }
    const list = (await call(b, 'GET', '/controller-settings')).body.data
    expect(list.map((s: { id: string }) => s.id)).toEqual(['global', 'node-2'])
    expect(list[1].oidc).toEqual({ redirectUris: [APP] })
    // node-1 has no override: it applies the global settings
    expect((await call(b, 'GET', '/controller-settings/node-1/effective')).body.data).toMatchObject({ id: 'node-1', effective: { oidc: global.oidc } })
    expect(await authorizes(b, APP)).toBe(true)
    expect(await authorizes(b, DEFAULT_CB)).toBe(false)
    expect(await authorizes(a, APP)).toBe(false)
    expect(await authorizes(a, DEFAULT_CB)).toBe(true)
    expect(new Set((await c.settledDigests()).map((d) => d.digest)).size).toBe(1)
  })

  test('a change of the global list the override does not set reaches node-2 too', async () => {
    const [a, b] = c.nodes
    expect((await call(b, 'PATCH', '/controller-settings/global/effective', { oidc: { postLogoutUris: ['https://bye.example/*'] } })).status).toBe(200)
    await everywhere('node-2', (d) => d.effective.oidc.postLogoutUris?.[0] === 'https://bye.example/*')
    await everywhere('node-1', (d) => d.effective.oidc.postLogoutUris?.[0] === 'https://bye.example/*')
    const bye = async (n: TestNode) => {
      const res = await fetch(`${n.url}/oidc/end_session?post_logout_redirect_uri=${encodeURIComponent('https://bye.example/x')}`, { redirect: 'manual', tls: { ca: c.caPem } } as RequestInit)
      await res.arrayBuffer()
      return res.status
    }
    expect(await bye(a)).toBe(302)
    expect(await bye(b)).toBe(302)
  })

  test('refusals on either node write nothing: a second override, an unknown node, global and any', async () => {
    const [a, b] = c.nodes
    for (const [n, body] of [
      [a, { controllerId: 'node-2' }],
      [b, { controllerId: 'node-9', oidc: { redirectUris: [APP] } }],
      [a, { controllerId: 'global' }],
      [b, { controllerId: 'any' }],
    ] as const) {
      const res = await call(n, 'POST', '/controller-settings', body)
      expect(res.status).toBe(400)
      expect(res.body.error).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'controllerId' } })
    }
    await c.waitForRevision()
    for (const n of c.nodes) expect((await call(n, 'GET', '/controller-settings')).body.data.map((s: { id: string }) => s.id)).toEqual(['global', 'node-2'])
  })

  test('the override survives a restart of its node, and applies after it', async () => {
    const b = c.nodes[1]
    await c.stopNode(b)
    await c.restartNode(b)
    admin = await c.login(c.nodes[0])
    expect((await call(b, 'GET', '/controller-settings/node-2')).body.data).toMatchObject({ id: 'node-2', oidc: { redirectUris: [APP] } })
    expect(await authorizes(b, APP)).toBe(true)
    expect(await authorizes(b, DEFAULT_CB)).toBe(false)
  })

  test('a null list stops overriding it; a delete ends the override, and node-2 applies the global settings again', async () => {
    const [a, b] = c.nodes
    expect((await call(a, 'PATCH', '/controller-settings/node-2/effective', { oidc: { redirectUris: null } })).status).toBe(200)
    const global = (await call(a, 'GET', '/controller-settings/global')).body.data
    await everywhere('node-2', (d) => d.effective.oidc.redirectUris.join() === global.oidc.redirectUris.join())
    expect((await call(b, 'GET', '/controller-settings/node-2')).body.data.oidc).toEqual({})
    expect(await authorizes(b, DEFAULT_CB)).toBe(true)
    expect((await call(b, 'PUT', '/controller-settings/node-2/effective', { oidc: { redirectUris: [APP] } })).status).toBe(200)
    await everywhere('node-2', (d) => d.effective.oidc.redirectUris.join() === APP)
    expect(await authorizes(b, DEFAULT_CB)).toBe(false)
    expect((await call(a, 'DELETE', '/controller-settings/node-2/effective')).status).toBe(200)
    await everywhere('node-2', (d) => d.instance === undefined)
    expect(await authorizes(b, DEFAULT_CB)).toBe(true)
    expect(await authorizes(b, APP)).toBe(false)
    for (const n of c.nodes) expect((await call(n, 'GET', '/controller-settings/node-2')).status).toBe(404)
    expect(new Set((await c.settledDigests()).map((d) => d.digest)).size).toBe(1)
    // the delete is kept over a restart of the node it was for
    await c.stopNode(b)
    await c.restartNode(b)
    admin = await c.login(a)
    expect((await call(b, 'GET', '/controller-settings/node-2')).status).toBe(404)
    expect(await authorizes(b, DEFAULT_CB)).toBe(true)
  })
})
