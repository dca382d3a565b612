// Hardening of the request pipeline against hostile input (issue 9, part 3): access is checked before a body is read,
// bodies are bounded in depth and size before any schema work, unknown members are ignored, prototype names are
// ordinary keys, and the listener answers malformed Host headers and absolute-form request lines in the envelope.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { API_PREFIX, type RouteDef } from '../../src/http/http-route.ts'
import { MAX_BODY_DEPTH } from '../../src/http/http-json.ts'
import { AUTH_MFA_401_OFF_SPEC, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { rawRequest } from '../support/raw-http.ts'

let t: TestServer
const lines: string[] = []

beforeAll(async () => {
  t = await startTestServer({ log: (l) => lines.push(l) })
})
afterAll(async () => {
  await t.stop()
})

const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
const json = { 'content-type': 'application/json' }

/** Every route of the table under every API it is served on, with `:params` filled in. */
function concreteRoutes(routes: readonly RouteDef[]): { route: RouteDef; path: string }[] {
  return routes.flatMap((route) => route.apis.map((api) => ({ route, path: API_PREFIX[api] + route.path.replace(/:[A-Za-z]+/g, 'no-such-id') })))
}

describe('order of checks: access before the body', () => {
  it('answers every route that is not public, called with {} and no session, with 401 (never 400)', async () => {
    const wrong: string[] = []
    const routes = concreteRoutes(t.server.routes).filter(({ route }) => route.access !== 'public')
    expect(routes.length).toBeGreaterThan(100)
    for (const { route, path } of routes) {
      const offSpec = route.path === '/authenticate/mfa' ? AUTH_MFA_401_OFF_SPEC : undefined
      const res = await t.raw(route.method, path, { body: route.method === 'GET' ? undefined : {}, session: null, offSpec })
      if (res.status !== 401 || res.body?.error?.code !== 'UNAUTHORIZED') wrong.push(`${route.method} ${path}: ${res.status} ${res.text.slice(0, 120)}`)
    }
    expect(wrong).toEqual([])
  })

  it('answers 401 with an unknown session token too, whatever the body and query', async () => {
    const res = await t.raw('POST', '/edge/management/v1/identities?limit=a&limit=b', { rawBody: '{"name":', headers: { ...json, 'zt-session': 'nope' } })
    expectError(res, 401, 'UNAUTHORIZED')
  })
})

describe('deeply nested bodies', () => {
  for (const levels of [20_000, 100_000]) {
    it(`answers a body ${levels} levels deep with 401 without a session and 400 COULD_NOT_PARSE_BODY with one`, async () => {
      expectError(await t.raw('POST', '/edge/management/v1/identities', { rawBody: deep(levels), headers: json }), 401, 'UNAUTHORIZED')
      expectError(await t.mgmt('POST', '/identities', { rawBody: deep(levels), headers: json }), 400, 'COULD_NOT_PARSE_BODY')
      // a public route reads its body: the bound holds there too
      expectError(await t.client('POST', '/authenticate?method=password', { rawBody: deep(levels), headers: json }), 400, 'COULD_NOT_PARSE_BODY')
      const arrays = '['.repeat(levels) + ']'.repeat(levels)
      expectError(await t.client('POST', '/authenticate?method=password', { rawBody: arrays, headers: json }), 400, 'COULD_NOT_PARSE_BODY')
    })
  }

  it('still validates a body at the depth limit as usual', async () => {
    const res = await t.mgmt('POST', '/identities', { rawBody: deep(MAX_BODY_DEPTH - 1), headers: json })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
  })

  it('answers a body of more values than allowed with 400 COULD_NOT_PARSE_BODY', async () => {
    const res = await t.mgmt('POST', '/identities', { rawBody: `{"roleAttributes":[${'1,'.repeat(120_000)}1]}`, headers: json })
    expectError(res, 400, 'COULD_NOT_PARSE_BODY')
  })
})

describe('unknown members are ignored, known ones checked', () => {
  it('accepts PUT /identities/{id} with an enrollment member and ignores it', async () => {
    const id = await t.create('/identities', { name: 'unknown-members', type: 'User', isAdmin: false })
    const res = await t.mgmt.put(`/identities/${id}`, { name: 'unknown-members-2', type: 'User', isAdmin: false, enrollment: { ott: true }, newerField: [1] })
    expectStatus(res, 200)
    const got = await t.mgmt.get(`/identities/${id}`)
    expect(got.body.data.name).toBe('unknown-members-2')
    expect(got.body.data.newerField).toBeUndefined()
  })

  it('ignores unknown members inside known objects (envInfo on authenticate)', async () => {
    const res = await t.client.post('/authenticate?method=password', {
      username: 'admin', password: 'admin-pass-1', envInfo: { os: 'linux', constructor: 'x', unknown: { a: 1 } }, futureOption: true,
    })
    expectStatus(res, 200)
    const session = await t.as(res.body.data.token, 'client').get('/current-api-session')
    expectStatus(session, 200)
  })

  it('still refuses a known member of the wrong type, with the field as cause', async () => {
    const res = await t.mgmt.post('/identities', { name: { toString: 'x' }, type: 'User', isAdmin: false, unknown: 1 })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
  })
})

describe('prototype names in bodies', () => {
  const NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty']

  it('keeps them as ordinary tag and appData keys, read back as stored', async () => {
    const tags = Object.fromEntries(NAMES.map((n) => [n, `v-${n}`]))
    const text = JSON.stringify({ name: 'proto-keys', type: 'User', isAdmin: false, tags, appData: tags })
    const res = await t.mgmt('POST', '/identities', { rawBody: text, headers: json })
    expectStatus(res, 201)
    const got = await t.mgmt.get(`/identities/${res.body.data.id}`)
    expect(JSON.parse(got.text).data.tags).toEqual(JSON.parse(JSON.stringify(tags)))
    expect(JSON.parse(got.text).data.appData).toEqual(JSON.parse(JSON.stringify(tags)))
  })

  it('answers them at the top level and in nested objects with an ordinary answer, never 500', async () => {
    for (const name of NAMES) {
      for (const value of ['"x"', '1', 'null', '{"isAdmin":true}', '[]']) {
        const body = `{"name":"p-${name}-${value.length}","type":"User","isAdmin":false,"${name}":${value},"tags":{"${name}":${value}}}`
        const res = await t.mgmt('POST', '/identities', { rawBody: body, headers: json })
        expect(res.status === 201 || res.status === 400).toBe(true)
        if (res.status === 400) expect(res.body.error.cause.field).toBe('tags')
      }
    }
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
  })
})

describe('the listener', () => {
  it('answers a malformed Host header with 400 in the error envelope', async () => {
    for (const host of ['localhost:99999', 'a b', 'garbage:port', 'ex ample.com:1']) {
      const res = await rawRequest(t.server.port, t.caPem, `GET /edge/client/v1/version HTTP/1.1\r\nhost: ${host}`)
      expect({ host, status: res.status }).toEqual({ host, status: 400 })
      expect(JSON.parse(res.body).error.code).toBe('COULD_NOT_VALIDATE')
    }
  })

  it('answers two Host headers with 400', async () => {
    const res = await rawRequest(t.server.port, t.caPem, 'GET /edge/client/v1/version HTTP/1.1\r\nhost: a\r\nhost: b')
    expect(res.status).toBe(400)
  })

  it('serves a request line in absolute form by its path, and a request without Host', async () => {
    const absolute = await rawRequest(t.server.port, t.caPem, 'GET https://elsewhere.example/edge/client/v1/version HTTP/1.1\r\nhost: localhost')
    expect(absolute.status).toBe(200)
    expect(JSON.parse(absolute.body).data.apiVersions).toBeDefined()
    const noHost = await rawRequest(t.server.port, t.caPem, 'GET /edge/client/v1/version HTTP/1.0')
    expect(noHost.status).toBe(200)
  })

  it('answers a request target that is neither a path nor an https URL with 400', async () => {
    const res = await rawRequest(t.server.port, t.caPem, 'GET ftp://x/edge/client/v1/version HTTP/1.1\r\nhost: localhost')
    expect(res.status).toBe(400)
    expect(JSON.parse(res.body).error.requestId).toBeString()
  })
})

describe('request ids', () => {
  it('logs one line per request with its id, method, path and status; the error body carries the same id', async () => {
    lines.length = 0
    const res = await t.mgmt.get('/identities/no-such-identity')
    expectError(res, 404, 'NOT_FOUND')
    const id = res.body.error.requestId
    // the line is written once the answer has gone out, which the client may see first
    for (let i = 0; i < 50 && !lines.some((l) => l.includes(id)); i++) await Bun.sleep(10)
    const line = JSON.parse(lines.find((l) => l.includes(id))!)
    expect(line).toMatchObject({ level: 'info', msg: 'request', requestId: id, method: 'GET', path: '/edge/management/v1/identities/no-such-identity', status: 404 })
    expect(line.ms).toBeNumber()
  })

  it('gives every request its own id', async () => {
    const a = await t.mgmt.get('/identities/x')
    const b = await t.mgmt.get('/identities/x')
    expect(a.body.error.requestId).not.toBe(b.body.error.requestId)
  })
})
