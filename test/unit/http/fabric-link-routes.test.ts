// The fabric API's link and circuit routes (issue 31) over small in-test implementations of LinkControl and
// CircuitControl (domain/fabric/fabric-types.ts), through the app's request pipeline (access, query, body checks):
// what they list and filter, how they render, what reaches the registry from a PATCH or DELETE and what never does.
// Every JSON answer is checked against the official fabric document, as the API tests check theirs.
// @see ziti controller/internal/routes/link_router.go, circuit_router.go, link_api_model.go, circuit_api_model.go
import { describe, expect, it } from 'bun:test'
import type { CircuitControl, CircuitView, LinkControl, LinkView } from '../../../src/domain/fabric/fabric-types.ts'
import { ApiError } from '../../../src/errors/api-error.ts'
import { buildApp } from '../../../src/http/http-app.ts'
import type { AuthContext, SessionResolver } from '../../../src/http/http-auth.ts'
import { fabricLinkRoutes } from '../../../src/http/routes/fabric/fabric-link-routes.ts'
import { checkAnswer } from '../../support/spec-check.ts'

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5)

function link(id: string, over: Partial<LinkView> = {}): LinkView {
  return {
    id, srcRouterId: 'ra', dstRouterId: 'rb', protocol: 'tls', dialAddress: 'tls:10.0.0.2:4023', iteration: 1, mode: 'Connected', down: false,
    staticCost: 1, srcLatencyNs: 2_000_000, dstLatencyNs: 3_000_000, cost: 6, createdAt: T0, connections: [], ...over,
  }
}

function circuit(id: string, over: Partial<CircuitView> = {}): CircuitView {
  return {
    id, clientId: 'ident-1', serviceId: 'svc-1', terminatorId: 'term-1',
    path: { nodes: ['ra', 'rb'], links: ['l1'], ingressId: 'in-1', egressId: 'eg-1' },
    tags: { serviceId: 'svc-1' }, createdAt: T0, updatedAt: T0 + 1_000, ...over,
  }
}

/** Links in a Map; an update applies the change and answers the new view, as the control plane's would. */
function testLinks(initial: LinkView[]): LinkControl & { updates: [string, object][]; removals: string[] } {
  const byId = new Map(initial.map((l) => [l.id, l]))
  const updates: [string, object][] = []
  const removals: string[] = []
  return {
    updates,
    removals,
    remove(id) {
      removals.push(id)
      return byId.delete(id)
    },
    all: () => byId.values(),
    get: (id) => byId.get(id),
    update(id, change) {
      updates.push([id, change])
      const l = byId.get(id)
      if (!l) return undefined
      const next = { ...l, ...change }
      byId.set(id, next)
      return next
    },
  }
}

function testCircuits(initial: CircuitView[]): CircuitControl & { removals: [string, boolean][] } {
  const byId = new Map(initial.map((c) => [c.id, c]))
  const removals: [string, boolean][] = []
  return {
    removals,
    all: () => byId.values(),
    get: (id) => byId.get(id),
    remove(id, immediate) {
      removals.push([id, immediate])
      return byId.delete(id)
    },
  }
}

const ADMIN_TOKEN = 'admin-token'

/** Admits the admin token only, as the real resolver admits an admin's session. */
const resolver: SessionResolver = {
  timeoutMs: 60_000,
  resolve: () => undefined,
  require(req, level) {
    if (req.headers.get('zt-session') !== ADMIN_TOKEN || level !== 'admin') throw ApiError.unauthorized()
    return { session: { lastActivityAt: T0 }, identity: { id: 'admin-id' }, isPartial: false, isAdmin: true } as unknown as AuthContext
  },
}

const NAMES = { router: (id: string) => ({ ra: 'router-a', rb: 'router-b' })[id], service: (id: string) => (id === 'svc-1' ? 'service-one' : undefined) }

function setup(links: LinkView[], circuits: CircuitView[]) {
  const linkControl = testLinks(links)
  const circuitControl = testCircuits(circuits)
  const app = buildApp(fabricLinkRoutes({ links: linkControl, circuits: circuitControl, names: () => NAMES }), {
    resolver, version: 'test', instanceId: 'i', clock: { now: () => T0 }, rootRoutes: {},
  })
  const call = async (method: string, target: string, o: { body?: unknown; token?: string | null } = {}) => {
    const headers = new Headers({ accept: 'application/json' })
    if (o.token !== null) headers.set('zt-session', o.token ?? ADMIN_TOKEN)
    let body: Uint8Array | undefined
    if (o.body !== undefined) {
      headers.set('content-type', 'application/json')
      body = new TextEncoder().encode(typeof o.body === 'string' ? o.body : JSON.stringify(o.body))
    }
    const { response } = await app.handle({ method, origin: 'https://ctrl.test', target: `/fabric/v1${target}`, headers, body, peer: { certChainDer: [], remoteAddress: '' }, requestId: 'req' })
    const text = await response.text()
    checkAnswer({ method, url: `/fabric/v1${target}`, status: response.status, contentType: response.headers.get('content-type'), text })
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
  }
  return { call, links: linkControl, circuits: circuitControl }
}

const q = (filter: string) => `?filter=${encodeURIComponent(filter)}`
const idsOf = (res: { body: { data: { id: string }[] } }) => res.body.data.map((x) => x.id)

describe('GET /links', () => {
  it('lists the links in id order, with their routers as references and the state as the mode', async () => {
    const conns = [{ type: 'payload', localAddr: 'tcp:10.0.0.1:40000', remoteAddr: 'tcp:10.0.0.2:4023' }]
    const { call } = setup([link('l2', { srcRouterId: 'rb', dstRouterId: 'gone', mode: 'Failed' }), link('l1', { connections: conns })], [])
    const res = await call('GET', '/links')
    expect(res.status).toBe(200)
    expect(idsOf(res)).toEqual(['l1', 'l2'])
    expect(res.body.data[0]).toEqual({
      id: 'l1', protocol: 'tls', state: 'Connected', down: false, staticCost: 1, sourceLatency: 2_000_000, destLatency: 3_000_000, cost: 6, iteration: 1,
      connections: [{ type: 'payload', source: 'tcp:10.0.0.1:40000', dest: 'tcp:10.0.0.2:4023' }],
      sourceRouter: { entity: 'routers', id: 'ra', name: 'router-a', _links: { self: { href: './routers/ra' }, terminators: { href: './routers/ra/terminators' } } },
      destRouter: { entity: 'routers', id: 'rb', name: 'router-b', _links: { self: { href: './routers/rb' }, terminators: { href: './routers/rb/terminators' } } },
    })
    // a router deleted since the link was reported
    expect(res.body.data[1].destRouter).toMatchObject({ id: 'gone', name: '<deleted>' })
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 2 })
    expect(res.body.meta.filterableFields).toContain('dialAddress')
  })

  it('filters on the real controller\'s link symbols, sorts and pages', async () => {
    const { call } = setup([link('l1'), link('l2', { staticCost: 50, cost: 55, mode: 'Duplicate' }), link('l3', { srcRouterId: 'rb', protocol: 'dtls' })], [])
    expect(idsOf(await call('GET', `/links${q('state = "Duplicate"')}`))).toEqual(['l2'])
    expect(idsOf(await call('GET', `/links${q('staticCost > 10 or protocol = "dtls"')}`))).toEqual(['l2', 'l3'])
    expect(idsOf(await call('GET', `/links${q('sourceRouter = "rb"')}`))).toEqual(['l3'])
    expect(idsOf(await call('GET', `/links${q('dialAddress contains "10.0.0.2"')}`))).toEqual(['l1', 'l2', 'l3'])
    expect(idsOf(await call('GET', `/links${q('true sort by cost desc limit 1')}`))).toEqual(['l2'])
    expect(idsOf(await call('GET', '/links?limit=1&offset=1'))).toEqual(['l2'])
    expect((await call('GET', `/links${q('down = true')}`)).body.error.code).toBe('INVALID_FILTER')
  })

  it('gets one, 404 for an unknown id', async () => {
    const { call } = setup([link('l1')], [])
    expect((await call('GET', '/links/l1')).body.data.id).toBe('l1')
    expect((await call('GET', '/links/nope')).body.error.code).toBe('NOT_FOUND')
  })

  it('is for admins: 401 without the session, before anything is read', async () => {
    const { call, links } = setup([link('l1')], [])
    expect((await call('GET', '/links', { token: null })).status).toBe(401)
    expect((await call('PATCH', '/links/l1', { token: 'someone', body: { down: true } })).status).toBe(401)
    expect(links.updates).toEqual([])
  })
})

describe('PATCH /links/{id}', () => {
  it('hands the registry exactly the fields given, and answers the empty envelope', async () => {
    const { call, links } = setup([link('l1')], [])
    const res = await call('PATCH', '/links/l1', { body: { down: true } })
    expect(res).toEqual({ status: 200, body: { data: {}, meta: {} } })
    expect((await call('PATCH', '/links/l1', { body: { staticCost: 9, other: 'dropped' } })).status).toBe(200)
    expect((await call('PATCH', '/links/l1', { body: {} })).status).toBe(200)
    expect(links.updates).toEqual([['l1', { down: true }], ['l1', { staticCost: 9 }], ['l1', {}]])
    expect((await call('GET', '/links/l1')).body.data).toMatchObject({ down: true, staticCost: 9 })
  })

  it('answers an unknown link with 404 NOT_FOUND', async () => {
    const { call } = setup([], [])
    expect((await call('PATCH', '/links/nope', { body: { down: false } })).body.error.code).toBe('NOT_FOUND')
  })

  it('refuses a bad body with 400 before the registry sees it (the field error\'s value as text)', async () => {
    const { call, links } = setup([link('l1')], [])
    for (const body of [{ down: 'yes' }, { staticCost: -1 }, { staticCost: 1.5 }, { staticCost: 2 ** 31 }, { staticCost: '5' }, '{"down":', '[]']) {
      const res = await call('PATCH', '/links/l1', { body })
      expect(res.status).toBe(400)
      expect(['COULD_NOT_VALIDATE', 'COULD_NOT_PARSE_BODY']).toContain(res.body.error.code)
      if (res.body.error.cause?.field !== undefined) expect(typeof res.body.error.cause.value).toBe('string')
    }
    expect(links.updates).toEqual([])
  })
})

describe('DELETE /links/{id}', () => {
  it('forgets a known link (200, empty) and answers 404 for one this node does not know', async () => {
    const { call, links } = setup([link('l1')], [])
    expect(await call('DELETE', '/links/l1')).toEqual({ status: 200, body: { data: {}, meta: {} } })
    expect(links.removals).toEqual(['l1'])
    expect((await call('GET', '/links/l1')).status).toBe(404)
    const again = await call('DELETE', '/links/l1')
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe('NOT_FOUND')
  })
})

describe('GET /circuits', () => {
  it('renders a circuit with its service, terminator and path as references', async () => {
    const { call } = setup([], [circuit('c1'), circuit('c2', { serviceId: 'gone', path: { nodes: ['ra'], links: [], ingressId: 'i', egressId: 'e' } })])
    const res = await call('GET', '/circuits')
    expect(idsOf(res)).toEqual(['c1', 'c2'])
    expect(res.body.data[0]).toEqual({
      id: 'c1', createdAt: '2026-01-02T03:04:05.000Z', updatedAt: '2026-01-02T03:04:06.000Z', tags: { serviceId: 'svc-1' },
      _links: { self: { href: './circuits/c1' }, terminators: { href: './circuits/c1/terminators' }, services: { href: './circuits/c1/services' } },
      clientId: 'ident-1',
      service: { entity: 'services', id: 'svc-1', name: 'service-one', _links: { self: { href: './services/svc-1' }, terminators: { href: './services/svc-1/terminators' } } },
      terminator: { entity: 'terminators', id: 'term-1', name: 'term-1', _links: { self: { href: './terminators/term-1' } } },
      path: {
        nodes: [
          { entity: 'routers', id: 'ra', name: 'router-a', _links: { self: { href: './routers/ra' }, terminators: { href: './routers/ra/terminators' } } },
          { entity: 'routers', id: 'rb', name: 'router-b', _links: { self: { href: './routers/rb' }, terminators: { href: './routers/rb/terminators' } } },
        ],
        links: [{ entity: 'links', id: 'l1', name: 'l1', _links: { self: { href: './links/l1' } } }],
      },
    })
    expect(res.body.data[1].service.name).toBe('<deleted>')
    expect(res.body.data[1].path).toEqual({ nodes: [expect.objectContaining({ id: 'ra' })], links: [] })
  })

  it('filters on the real controller\'s circuit symbols', async () => {
    const { call } = setup([], [circuit('c1'), circuit('c2', { clientId: 'ident-2', createdAt: T0 + 60_000, updatedAt: T0 + 60_000 })])
    expect(idsOf(await call('GET', `/circuits${q('clientId = "ident-2"')}`))).toEqual(['c2'])
    expect(idsOf(await call('GET', `/circuits${q('service = "svc-1" and terminator = "term-1"')}`))).toEqual(['c1', 'c2'])
    expect(idsOf(await call('GET', `/circuits${q('createdAt > datetime(2026-01-02T03:04:30Z)')}`))).toEqual(['c2'])
    expect((await call('GET', `/circuits/c2`)).body.data.clientId).toBe('ident-2')
    expect((await call('GET', `/circuits/nope`)).status).toBe(404)
  })
})

describe('DELETE /circuits/{id}', () => {
  it('tears a circuit down, at once only when the body says immediate', async () => {
    const { call, circuits } = setup([], [circuit('c1'), circuit('c2'), circuit('c3')])
    expect(await call('DELETE', '/circuits/c1', { body: { immediate: true } })).toEqual({ status: 200, body: { data: {}, meta: {} } })
    expect((await call('DELETE', '/circuits/c2', { body: { immediate: false } })).status).toBe(200)
    expect((await call('DELETE', '/circuits/c3')).status).toBe(200)
    expect(circuits.removals).toEqual([['c1', true], ['c2', false], ['c3', false]])
    expect(idsOf(await call('GET', '/circuits'))).toEqual([])
  })

  it('answers a circuit this node does not hold with 404, and a bad body with 400 before the registry sees it', async () => {
    const { call, circuits } = setup([], [circuit('c1')])
    expect((await call('DELETE', '/circuits/nope', { body: { immediate: true } })).body.error.code).toBe('NOT_FOUND')
    expect((await call('DELETE', '/circuits/c1', { body: { immediate: 'yes' } })).body.error.code).toBe('COULD_NOT_VALIDATE')
    expect(circuits.removals).toEqual([['nope', true]])
  })
})
