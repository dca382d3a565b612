// Controller settings on a single node (edge-api management.yml /controller-settings, /controller-settings/{id},
// /controller-settings/{id}/effective; the real controller's settings: openziti/ziti branch add.central.config.2):
// the global settings made at the first start, read, changed and applied by OIDC sign-in (authorize's redirect URIs,
// end_session's post-logout URIs), kept over a restart; every refusal leaves them as they were. A single node has no
// controller to override (its list of controllers is empty): the overrides are tested on a cluster
// (controller-settings-cluster.api.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_POST_LOGOUT_URIS, DEFAULT_REDIRECT_URIS } from '../../src/flows/oidc/oidc-types.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { createPasswordUser } from '../support/auth-policy.ts'
import { oidcCall, pkcePair, sdkAuthorizeQuery } from '../support/oidc.ts'

let srv: TestServer
let userToken: string
beforeAll(async () => {
  srv = await startTestServer()
  await createPasswordUser(srv, 'settings-user', 'settings-pass-1')
  userToken = await srv.login('settings-user', 'settings-pass-1')
})
afterAll(async () => {
  await srv.stop()
})

const REAL_REDIRECTS = [
  'openziti://auth/callback',
  'https://127.0.0.1:*/auth/callback',
  'http://127.0.0.1:*/auth/callback',
  'https://localhost:*/auth/callback',
  'http://localhost:*/auth/callback',
  'http://[::1]:*/auth/callback',
  'https://[::1]:*/auth/callback',
]
const REAL_POST_LOGOUTS = REAL_REDIRECTS.map((u) => u.replace('/auth/callback', '/auth/logout'))

const global = async (s: TestServer = srv) => {
  const res = await s.mgmt.get('/controller-settings/global')
  expectStatus(res, 200)
  return res.body.data
}

/** Whether authorize accepts `redirect_uri` (302 to a login page) or refuses it (400 invalid_request). */
const authorizes = async (redirect_uri: string, s: TestServer = srv) => {
  const res = await oidcCall(s, '/authorize', { query: sdkAuthorizeQuery(pkcePair().challenge, { redirect_uri }) })
  if (res.status !== 302 && res.status !== 400) throw new Error(`authorize answered ${res.status}: ${res.text}`)
  return res.status === 302
}

/** Whether end_session sends the browser to `target` (302 there) or refuses it (400 invalid_request). */
const logsOutTo = async (target: string) => {
  const res = await oidcCall(srv, '/end_session', { query: { post_logout_redirect_uri: target } })
  if (res.status === 302) return res.location === target
  expect(res.status).toBe(400)
  return false
}

const restore = async () => {
  expectStatus(await srv.mgmt.put('/controller-settings/global/effective', { oidc: { redirectUris: REAL_REDIRECTS, postLogoutUris: REAL_POST_LOGOUTS } }), 200)
}

describe('the global settings', () => {
  it('exist from the first start with the real controller\'s default redirect and post-logout URIs', async () => {
    expect<readonly string[]>(DEFAULT_REDIRECT_URIS).toEqual(REAL_REDIRECTS)
    expect<readonly string[]>(DEFAULT_POST_LOGOUT_URIS).toEqual(REAL_POST_LOGOUTS)
    const g = await global()
    expect(g).toMatchObject({ id: 'global', tags: {}, oidc: { redirectUris: REAL_REDIRECTS, postLogoutUris: REAL_POST_LOGOUTS } })
    expect(g._links.self.href).toBe('./controller-settings/global')
  })

  it('are the only record of a single node\'s list, the system\'s', async () => {
    const list = await srv.mgmt.get('/controller-settings')
    expectStatus(list, 200)
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual(['global'])
    expect(list.body.meta.pagination.totalCount).toBe(1)
    expect((await srv.mgmt.get(`/controller-settings?filter=${encodeURIComponent('isSystem = true')}`)).body.data).toHaveLength(1)
    expect((await srv.mgmt.get(`/controller-settings?filter=${encodeURIComponent('isSystem = false')}`)).body.data).toEqual([])
    expectError(await srv.mgmt.get(`/controller-settings?filter=${encodeURIComponent('nope = 1')}`), 400, 'INVALID_FILTER')
  })

  it('are their own effective settings and instance', async () => {
    const res = await srv.mgmt.get('/controller-settings/global/effective')
    expectStatus(res, 200)
    const settings = { oidc: { redirectUris: REAL_REDIRECTS, postLogoutUris: REAL_POST_LOGOUTS } }
    expect(res.body.data).toMatchObject({ id: 'global', effective: settings, instance: settings })
  })

  it('decide the redirect URIs authorize accepts, from the next request on', async () => {
    expect(await authorizes('http://[::1]:4000/auth/callback')).toBe(true)
    expect(await authorizes('https://app.example.com/cb')).toBe(false)
    expectStatus(await srv.mgmt.patch('/controller-settings/global/effective', { oidc: { redirectUris: ['https://app.example.com/cb'] } }), 200)
    expect(await authorizes('https://app.example.com/cb')).toBe(true)
    expect(await authorizes('http://localhost:4000/auth/callback')).toBe(false)
    // a patch leaves the list it does not name
    expect((await global()).oidc).toEqual({ redirectUris: ['https://app.example.com/cb'], postLogoutUris: REAL_POST_LOGOUTS })
    await restore()
    expect(await authorizes('http://localhost:4000/auth/callback')).toBe(true)
  })

  it('decide where end_session may send the browser', async () => {
    expect(await logsOutTo('http://localhost:9/auth/logout')).toBe(true)
    expect(await logsOutTo('https://app.example.com/bye')).toBe(false)
    expectStatus(await srv.mgmt.patch('/controller-settings/global/effective', { oidc: { postLogoutUris: ['https://app.example.com/*'] } }), 200)
    expect(await logsOutTo('https://app.example.com/bye')).toBe(true)
    expect(await logsOutTo('http://localhost:9/auth/logout')).toBe(false)
    await restore()
  })

  it('PUT replaces every field: lists and tags it does not name are cleared', async () => {
    expectStatus(await srv.mgmt.patch('/controller-settings/global/effective', { tags: { owner: 'ops' } }), 200)
    expect((await global()).tags).toEqual({ owner: 'ops' })
    const before = await global()
    expectStatus(await srv.mgmt.put('/controller-settings/global/effective', { oidc: { redirectUris: ['openziti://auth/callback'] } }), 200)
    const after = await global()
    expect(after).toMatchObject({ tags: {}, oidc: { redirectUris: ['openziti://auth/callback'], postLogoutUris: [] } })
    expect(after.createdAt).toBe(before.createdAt)
    // no post-logout URI is allowed at all now
    expect(await logsOutTo('http://localhost:9/auth/logout')).toBe(false)
    await restore()
  })

  it('PATCH with a null list clears that list, and an empty patch changes nothing', async () => {
    expectStatus(await srv.mgmt.patch('/controller-settings/global/effective', { oidc: { postLogoutUris: null } }), 200)
    expect((await global()).oidc).toEqual({ redirectUris: REAL_REDIRECTS, postLogoutUris: [] })
    expectStatus(await srv.mgmt.patch('/controller-settings/global/effective', {}), 200)
    expect((await global()).oidc).toEqual({ redirectUris: REAL_REDIRECTS, postLogoutUris: [] })
    await restore()
  })

  it('survive a restart, and apply after it', async () => {
    expectStatus(await srv.mgmt.patch('/controller-settings/global/effective', { oidc: { redirectUris: ['https://kept.example/cb'] }, tags: { kept: true } }), 200)
    const before = await global()
    await srv.restart()
    expect(await global()).toEqual(before)
    expect(await authorizes('https://kept.example/cb')).toBe(true)
    expect(await authorizes('http://localhost:1/auth/callback')).toBe(false)
    await restore()
    userToken = await srv.login('settings-user', 'settings-pass-1')
  })

  it('can not be deleted: 400 ENTITY_CAN_NOT_BE_DELETED, and they stay', async () => {
    expectError(await srv.mgmt.del('/controller-settings/global/effective'), 400, 'ENTITY_CAN_NOT_BE_DELETED')
    expect((await global()).oidc.redirectUris).toEqual(REAL_REDIRECTS)
  })
})

describe('refused writes leave the settings as they were', () => {
  const bad: [string, unknown][] = [
    ['a list that is not an array', { oidc: { redirectUris: 'https://x.example/cb' } }],
    ['an empty pattern', { oidc: { redirectUris: [''] } }],
    ['a pattern that is not a string', { oidc: { postLogoutUris: [42] } }],
    ['a pattern of more than 2048 characters', { oidc: { redirectUris: ['https://x.example/' + 'a'.repeat(2048)] } }],
    ['more than 100 patterns', { oidc: { redirectUris: Array.from({ length: 101 }, (_, i) => `https://x${i}.example/cb`) } }],
    ['oidc that is not an object', { oidc: ['https://x.example/cb'] }],
    ['tags with a value of a type tags do not take', { tags: { n: 1 } }],
  ]
  for (const method of ['PUT', 'PATCH'] as const) {
    for (const [what, body] of bad) {
      it(`${method} with ${what}: 400 COULD_NOT_VALIDATE`, async () => {
        const before = await global()
        expectError(await srv.mgmt(method, '/controller-settings/global/effective', { body }), 400, 'COULD_NOT_VALIDATE')
        expect(await global()).toEqual(before)
      })
    }
  }

  it('a body that is not JSON: 400 COULD_NOT_PARSE_BODY', async () => {
    const before = await global()
    const res = await srv.mgmt('PATCH', '/controller-settings/global/effective', { rawBody: '{"oidc":', headers: { 'content-type': 'application/json' } })
    expectError(res, 400, 'COULD_NOT_PARSE_BODY')
    expect(await global()).toEqual(before)
  })

  it('an unknown id: 404 on get, effective, put, patch and delete', async () => {
    for (const [method, path] of [
      ['GET', '/controller-settings/no-such-node'],
      ['GET', '/controller-settings/no-such-node/effective'],
      ['PUT', '/controller-settings/no-such-node/effective'],
      ['PATCH', '/controller-settings/no-such-node/effective'],
      ['DELETE', '/controller-settings/no-such-node/effective'],
      ['GET', '/controller-settings/any/effective'],
      ['PATCH', '/controller-settings/any/effective'],
    ] as const) {
      expectError(await srv.mgmt(method, path, method === 'PUT' || method === 'PATCH' ? { body: { oidc: { redirectUris: [] } } } : {}), 404, 'NOT_FOUND')
    }
    expect((await srv.mgmt.get('/controller-settings')).body.data).toHaveLength(1)
  })
})

describe('POST /controller-settings', () => {
  const refused = async (body: unknown, field: string) => {
    const res = await srv.mgmt.post('/controller-settings', body)
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe(field)
    expect((await srv.mgmt.get('/controller-settings')).body.data.map((s: { id: string }) => s.id)).toEqual(['global'])
  }

  it('refuses a body without controllerId', async () => {
    await refused({ oidc: { redirectUris: [] } }, 'controllerId')
  })

  it('refuses global and any, which are no controller\'s id', async () => {
    await refused({ controllerId: 'global', oidc: { redirectUris: [] } }, 'controllerId')
    await refused({ controllerId: 'any' }, 'controllerId')
  })

  it('refuses an id no controller of the cluster has (a single node has none)', async () => {
    await refused({ controllerId: 'node-x', oidc: { redirectUris: ['https://x.example/cb'] } }, 'controllerId')
  })

  it('refuses bad settings before anything else', async () => {
    await refused({ controllerId: 'node-x', oidc: { redirectUris: [''] } }, 'oidc.redirectUris')
  })
})

describe('access', () => {
  const OPERATIONS = [
    ['GET', '/controller-settings'],
    ['POST', '/controller-settings'],
    ['GET', '/controller-settings/global'],
    ['GET', '/controller-settings/global/effective'],
    ['PUT', '/controller-settings/global/effective'],
    ['PATCH', '/controller-settings/global/effective'],
    ['DELETE', '/controller-settings/global/effective'],
  ] as const

  it('every operation is refused to a non-admin and without a session: 401 UNAUTHORIZED, nothing changed', async () => {
    const before = await global()
    for (const [method, path] of OPERATIONS) {
      const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? { body: { controllerId: 'x', oidc: { redirectUris: [] } } } : {}
      expectError(await srv.as(userToken, 'management')(method, path, body), 401, 'UNAUTHORIZED')
      expectError(await srv.mgmt(method, path, { ...body, session: null }), 401, 'UNAUTHORIZED')
    }
    expect(await global()).toEqual(before)
  })

  it('is not served on the Client API', async () => {
    const res = await srv.as(userToken, 'client').get('/controller-settings', { offSpec: 'the Client API has no /controller-settings' })
    expect(res.status).toBe(404)
  })
})

describe('the first start with OIDC lists in the config file', () => {
  it('makes the global settings from them; later starts keep the settings and note lists that differ', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-settings-'))
    try {
      const lines: string[] = []
      const first = await startTestServer({ dataDir, oidc: { redirectUris: ['https://seeded.example/cb'] }, log: (l) => lines.push(l) })
      try {
        expect((await global(first)).oidc).toEqual({ redirectUris: ['https://seeded.example/cb'], postLogoutUris: REAL_POST_LOGOUTS })
        expect(await authorizes('https://seeded.example/cb', first)).toBe(true)
        expectStatus(await first.mgmt.patch('/controller-settings/global/effective', { oidc: { redirectUris: ['https://changed.example/cb'] } }), 200)
      } finally {
        await first.stop()
      }
      expect(lines.filter((l) => l.includes('differs from the controller settings'))).toEqual([])
      const second = await startTestServer({ dataDir, oidc: { redirectUris: ['https://seeded.example/cb'] }, log: (l) => lines.push(l) })
      try {
        expect((await global(second)).oidc.redirectUris).toEqual(['https://changed.example/cb'])
        expect(await authorizes('https://seeded.example/cb', second)).toBe(false)
        expect(lines.filter((l) => l.includes('oidc.redirectURIs in the config differs from the controller settings'))).toHaveLength(1)
      } finally {
        await second.stop()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
