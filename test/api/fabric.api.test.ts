// The fabric API (`/fabric/v1`, issue 31): services, routers and terminators as the fabric sees them, with real data
// from the router emulator (an edge router connected with link and control listeners in its hello, a system
// terminator an SDK's Bind made through it), the links and circuits this node knows (none yet: the control plane keeps
// no link or circuit registry in this tree), the database and the refused operations, admins only (a legacy session or
// an OIDC bearer). Every answer is checked against the official fabric document (test/fixtures/fabric-api/).
// @see ziti controller/specs/swagger.yml; controller/internal/routes/fabric_*_router.go, link_router.go, circuit_router.go
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { create, toBinary } from '@bufbuild/protobuf'
import { FabricRouterDetail, FabricServiceDetail, FabricTerminatorDetail } from '../../schemas/fabric.ts'
import { ControlHeaders, CtrlChanListenersSchema, ListenersSchema } from '../../src/control/pb/ctrl_pb.ts'
import { ADMIN, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { DEV_ROUTER_VERSION, enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import { bindingSdk, bindRequest, createTerminator, type BindingSdk } from '../support/router-emulator-terminators.ts'
import { createPasswordUser } from '../support/auth-policy.ts'
import { oidcSdk } from '../support/oidc-sdk.ts'

let srv: TestServer
let r1: RouterIdentity
let r2: RouterIdentity
let transit: string
let router: RouterEmulator
let sdk: BindingSdk
let serviceId: string
let otherService: string

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((x) => x.id)
const q = (filter: string) => `?filter=${encodeURIComponent(filter)}`

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 } })
  r1 = await enrollRouter(srv, 'fab-edge-one')
  r2 = await enrollRouter(srv, 'fab-edge-two')
  transit = await srv.create('/routers', { name: 'fab-transit', cost: 7 })
  serviceId = await srv.create('/services', { name: 'fab-svc', encryptionRequired: true, roleAttributes: ['fab'], maxIdleTimeMillis: 5_000 })
  otherService = await srv.create('/services', { name: 'fab-other', encryptionRequired: true })
  sdk = await bindingSdk(srv, { name: 'fab-host', serviceId, routerIds: [r1.id] })
  const listeners = toBinary(ListenersSchema, create(ListenersSchema, { listeners: [{ address: 'tls:127.0.0.1:4023', protocol: 'tls', groups: ['default'] }] }))
  const ctrl = toBinary(CtrlChanListenersSchema, create(CtrlChanListenersSchema, { listeners: [{ address: 'tls:127.0.0.1:6262', groups: ['default'] }] }))
  router = await RouterEmulator.connect({
    port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: r1.cert, key: r1.key }, routerId: r1.id,
    helloHeaders: { [ControlHeaders.ListenersHeader]: listeners, [ControlHeaders.CtrlChanListenersHeader]: ctrl },
  })
  const made = await createTerminator(router, bindRequest(sdk, 'fab-hosted', { cost: 3, instanceId: 'inst-7' }))
  expect(made.terminatorId).toBe('fab-hosted')
}, 30_000)
afterAll(async () => {
  router?.close()
  await srv.stop()
})

describe('access', () => {
  it('refuses a request without a session, with an unknown one, and from a user who is no admin, with 401 UNAUTHORIZED', async () => {
    expectError(await srv.fabric.get('/services', { session: null }), 401, 'UNAUTHORIZED')
    expectError(await srv.fabric.get('/links', { session: 'nope' }), 401, 'UNAUTHORIZED')
    await createPasswordUser(srv, 'fab-user', 'fab-user-pass-1')
    const user = await srv.login('fab-user', 'fab-user-pass-1')
    for (const path of ['/services', '/routers', '/terminators', '/links', '/circuits', `/routers/${r1.id}`]) expectError(await srv.as(user, 'fabric').get(path), 401, 'UNAUTHORIZED')
    expectError(await srv.as(user, 'fabric').del('/circuits/x', { body: {} }), 401, 'UNAUTHORIZED')
  })

  it('serves an admin signed in with OIDC (an access token as bearer)', async () => {
    const tokens = await oidcSdk(srv).passwordLogin(ADMIN.username, ADMIN.password)
    const res = await srv.raw.get('/fabric/v1/services', { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expectStatus(res, 200)
    expect(ids(res)).toContain(serviceId)
  })

  it('advertises the fabric API in /version, and serves its spec document without a session', async () => {
    const v = await srv.raw.get('/version')
    expect(v.body.data.apiVersions.fabric.v1.path).toBe('/fabric/v1')
    expect(v.body.data.apiVersions.fabric.v1.apiBaseUrls).toEqual([`${srv.url}/fabric/v1`])
    const spec = await srv.raw.get('/fabric/v1/swagger.json', { offSpec: 'the fabric spec document itself is no operation of the fabric spec' })
    expectStatus(spec, 200)
    expect(spec.body).toMatchObject({ swagger: '2.0', basePath: '/fabric/v1' })
    expect(spec.body.paths['/links/{id}'].patch).toBeDefined()
    expect(spec.body.paths['/inspections']).toBeUndefined()
  })
})

describe('GET /services', () => {
  it('lists every service with the fabric fields only, linking itself and its terminators', async () => {
    const res = await srv.fabric.get('/services')
    expectStatus(res, 200)
    expect(ids(res)).toEqual([serviceId, otherService].sort())
    const s = res.body.data.find((x: { id: string }) => x.id === serviceId)
    expect([...Value.Errors(FabricServiceDetail, s)]).toEqual([])
    expect(s).toMatchObject({ name: 'fab-svc', terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 5_000, tags: {} })
    expect(s._links).toEqual({ self: { href: `./services/${serviceId}` }, terminators: { href: `./services/${serviceId}/terminators` } })
    expect(s.roleAttributes).toBeUndefined()
    expect(res.body.meta.pagination).toMatchObject({ offset: 0, totalCount: 2 })
  })

  it('filters, sorts and pages as every list does', async () => {
    expect(ids(await srv.fabric.get(`/services${q('name = "fab-svc"')}`))).toEqual([serviceId])
    expect((await srv.fabric.get(`/services${q('true sort by name desc limit 1')}`)).body.data.map((s: { name: string }) => s.name)).toEqual(['fab-svc'])
    expectError(await srv.fabric.get(`/services${q('name = ')}`), 400, 'INVALID_FILTER')
    expectError(await srv.fabric.get('/services?limit=abc'), 400, 'COULD_NOT_VALIDATE')
  })

  it('gets one, and answers an unknown id with 404 NOT_FOUND', async () => {
    expect((await srv.fabric.get(`/services/${serviceId}`)).body.data.name).toBe('fab-svc')
    expectError(await srv.fabric.get('/services/no-such'), 404, 'NOT_FOUND')
  })

  it("lists a service's terminators (404 for an unknown service)", async () => {
    const res = await srv.fabric.get(`/services/${serviceId}/terminators`)
    expect(ids(res)).toEqual(['fab-hosted'])
    expect(ids(await srv.fabric.get(`/services/${otherService}/terminators`))).toEqual([])
    expectError(await srv.fabric.get('/services/no-such/terminators'), 404, 'NOT_FOUND')
  })
})

describe('GET /routers', () => {
  it("lists edge and fabric routers, with the control plane's view of each: connected, listeners and version while connected", async () => {
    const res = await srv.fabric.get('/routers')
    expect(ids(res).sort()).toEqual([r1.id, r2.id, transit].sort())
    for (const r of res.body.data) expect([...Value.Errors(FabricRouterDetail, r)]).toEqual([])
    const online = res.body.data.find((r: { id: string }) => r.id === r1.id)
    const [version, revision, buildDate, os, arch] = DEV_ROUTER_VERSION.split('|')
    expect(online).toMatchObject({
      name: 'fab-edge-one', connected: true, cost: 0, noTraversal: false, disabled: false,
      listenerAddresses: [{ address: 'tls:127.0.0.1:4023', protocol: 'tls' }],
      versionInfo: { version, revision, buildDate, os, arch },
      ctrlChanListeners: { 'tls:127.0.0.1:6262': ['default'] },
    })
    expect(online.fingerprint).toMatch(/^[0-9a-f]{40}$/)
    expect(online._links).toEqual({ self: { href: `./routers/${r1.id}` }, terminators: { href: `./routers/${r1.id}/terminators` } })
    const offline = res.body.data.find((r: { id: string }) => r.id === transit)
    expect(offline).toMatchObject({ name: 'fab-transit', connected: false, cost: 7, fingerprint: '', ctrlChanListeners: {} })
    expect(offline.listenerAddresses).toBeUndefined()
    expect(offline.versionInfo).toBeUndefined()
  })

  it('filters on name and on connected', async () => {
    expect(ids(await srv.fabric.get(`/routers${q('name contains "edge"')}`)).sort()).toEqual([r1.id, r2.id].sort())
    expect(ids(await srv.fabric.get(`/routers${q('connected = true')}`))).toEqual([r1.id])
  })

  it("gets one and lists its terminators; unknown ids are 404", async () => {
    expect((await srv.fabric.get(`/routers/${r1.id}`)).body.data.connected).toBe(true)
    expect(ids(await srv.fabric.get(`/routers/${r1.id}/terminators`))).toEqual(['fab-hosted'])
    expect(ids(await srv.fabric.get(`/routers/${r2.id}/terminators`))).toEqual([])
    expectError(await srv.fabric.get('/routers/no-such'), 404, 'NOT_FOUND')
    expectError(await srv.fabric.get('/routers/no-such/terminators'), 404, 'NOT_FOUND')
  })
})

describe('GET /terminators', () => {
  it('lists the terminators with instanceId and the hosting identity, names and links of their service and router', async () => {
    const res = await srv.fabric.get(`/terminators${q('limit none')}`)
    expect(ids(res)).toEqual(['fab-hosted'])
    const t = res.body.data[0]
    expect([...Value.Errors(FabricTerminatorDetail, t)]).toEqual([])
    expect(t).toMatchObject({
      serviceId, routerId: r1.id, binding: 'edge', address: 'fab-hosted', instanceId: 'inst-7', cost: 3, dynamicCost: 3, precedence: 'default', hostId: sdk.identityId,
    })
    expect(t.service).toEqual({ entity: 'services', id: serviceId, name: 'fab-svc', _links: { self: { href: `./services/${serviceId}` }, terminators: { href: `./services/${serviceId}/terminators` } } })
    expect(t.router).toMatchObject({ entity: 'routers', id: r1.id, name: 'fab-edge-one' })
    expect(t._links).toEqual({ self: { href: './terminators/fab-hosted' } })
    expect(ids(await srv.fabric.get(`/terminators${q(`hostId = "${sdk.identityId}" and isSystem = true`)}`))).toEqual(['fab-hosted'])
    expectError(await srv.fabric.get('/terminators/no-such'), 404, 'NOT_FOUND')
  })
})

describe('writes on services, routers and terminators', () => {
  it('creates, changes and deletes a terminator in the fabric spelling (instanceId, instanceSecret)', async () => {
    const made = await srv.fabric.post('/terminators', { service: otherService, router: transit, binding: 'transport', address: 'tcp:10.0.0.1:80', instanceId: 'i-1', instanceSecret: 'AQI=', cost: 9, precedence: 'required', tags: { a: 'b' } })
    expectStatus(made, 201)
    const id = made.body.data.id as string
    expect(made.body.data._links.self.href).toBe(`./terminators/${id}`)
    expect((await srv.fabric.get(`/terminators/${id}`)).body.data).toMatchObject({ instanceId: 'i-1', cost: 9, precedence: 'required', hostId: '', tags: { a: 'b' } })
    // the same record on the Management API
    expect((await srv.mgmt.get(`/terminators/${id}`)).body.data).toMatchObject({ identity: 'i-1', routerId: transit })
    expectStatus(await srv.fabric.patch(`/terminators/${id}`, { cost: 11 }), 200)
    expect((await srv.fabric.get(`/terminators/${id}`)).body.data).toMatchObject({ cost: 11, precedence: 'required' })
    expectStatus(await srv.fabric.put(`/terminators/${id}`, { service: otherService, router: transit, binding: 'transport', address: 'tcp:10.0.0.2:80' }), 200)
    expect((await srv.fabric.get(`/terminators/${id}`)).body.data).toMatchObject({ address: 'tcp:10.0.0.2:80', cost: 0, precedence: 'default' })
    expectStatus(await srv.fabric.del(`/terminators/${id}`), 200)
    expectError(await srv.fabric.get(`/terminators/${id}`), 404, 'NOT_FOUND')
  })

  it('refuses a hosting identity, a bad body and unknown references; a system terminator is deleted, not changed', async () => {
    const base = { service: otherService, router: transit, binding: 'transport', address: 'tcp:x:1' }
    const hosted = await srv.fabric.post('/terminators', { ...base, hostId: sdk.identityId })
    expectError(hosted, 400, 'COULD_NOT_VALIDATE')
    expect(hosted.body.error.cause.field).toBe('hostId')
    const bad = await srv.fabric.post('/terminators', { ...base, cost: 70_000 })
    expectError(bad, 400, 'COULD_NOT_VALIDATE')
    // the fabric spec types a field error's value as text
    expect(bad.body.error.cause.value).toBe('70000')
    expectError(await srv.fabric.post('/terminators', { ...base, service: 'no-such' }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.fabric.patch('/terminators/fab-hosted', { cost: 1 }), 400, 'ENTITY_CAN_NOT_BE_UPDATED')
  })

  it('changes the fabric fields of a service and keeps its edge ones; a create is refused with 405', async () => {
    expectStatus(await srv.fabric.patch(`/services/${serviceId}`, { terminatorStrategy: 'weighted', tags: { team: 'x' } }), 200)
    expect((await srv.mgmt.get(`/services/${serviceId}`)).body.data).toMatchObject({ terminatorStrategy: 'weighted', roleAttributes: ['fab'], maxIdleTimeMillis: 5_000, tags: { team: 'x' } })
    expectStatus(await srv.fabric.put(`/services/${serviceId}`, { name: 'fab-svc' }), 200)
    expect((await srv.mgmt.get(`/services/${serviceId}`)).body.data).toMatchObject({ terminatorStrategy: 'smartrouting', roleAttributes: ['fab'], maxIdleTimeMillis: 0, tags: {} })
    expectError(await srv.fabric.put(`/services/${serviceId}`, {}), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.fabric.patch('/services/no-such', { name: 'x' }), 404, 'NOT_FOUND')
    const refused = await srv.fabric.post('/services', { name: 'fab-only' })
    expectError(refused, 405, 'METHOD_NOT_ALLOWED')
    expect(refused.body.error.cause.message).toContain('/edge/management/v1/services')
    expect(ids(await srv.mgmt.get(`/services${q('name = "fab-only"')}`))).toEqual([])
  })

  it('deletes a service with its terminators', async () => {
    const id = await srv.create('/services', { name: 'fab-doomed', encryptionRequired: true })
    expectStatus(await srv.fabric.post('/terminators', { service: id, router: transit, binding: 'transport', address: 'tcp:y:1' }), 201)
    expectStatus(await srv.fabric.del(`/services/${id}`), 200)
    expectError(await srv.mgmt.get(`/services/${id}`), 404, 'NOT_FOUND')
    expect((await srv.fabric.get(`/terminators${q(`service = "${id}"`)}`)).body.data).toEqual([])
  })

  it("changes a router's fabric fields, keeps its edge fields and fingerprint, and refuses another fingerprint or a create", async () => {
    const fingerprint = (await srv.fabric.get(`/routers/${r2.id}`)).body.data.fingerprint as string
    expectStatus(await srv.fabric.patch(`/routers/${r2.id}`, { cost: 12, noTraversal: true, fingerprint }), 200)
    expect((await srv.mgmt.get(`/edge-routers/${r2.id}`)).body.data).toMatchObject({ cost: 12, noTraversal: true, isVerified: true, fingerprint })
    expectStatus(await srv.fabric.put(`/routers/${r2.id}`, { name: 'fab-edge-two', fingerprint, cost: 1, noTraversal: false }), 200)
    expect((await srv.fabric.get(`/routers/${r2.id}`)).body.data).toMatchObject({ cost: 1, noTraversal: false, disabled: false, fingerprint })
    const other = await srv.fabric.patch(`/routers/${r2.id}`, { fingerprint: 'ab'.repeat(20) })
    expectError(other, 400, 'COULD_NOT_VALIDATE')
    expect(other.body.error.cause.field).toBe('fingerprint')
    expectError(await srv.fabric.put(`/routers/${r2.id}`, { name: 'fab-edge-two', cost: 1, noTraversal: false }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.fabric.patch(`/routers/${transit}`, { configs: ['c1'] }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.fabric.post('/routers', { id: 'r9', name: 'r9', cost: 0, noTraversal: false, fingerprint: 'ab'.repeat(20) }), 405, 'METHOD_NOT_ALLOWED')
  })

  it('deletes a router with its terminators', async () => {
    const id = await srv.create('/routers', { name: 'fab-gone' })
    expectStatus(await srv.fabric.post('/terminators', { service: otherService, router: id, binding: 'transport', address: 'tcp:z:1' }), 201)
    expectStatus(await srv.fabric.del(`/routers/${id}`), 200)
    expectError(await srv.fabric.get(`/routers/${id}`), 404, 'NOT_FOUND')
    expect((await srv.fabric.get(`/terminators${q(`router = "${id}"`)}`)).body.data).toEqual([])
  })
})

describe('links and circuits (none on this node yet)', () => {
  it('lists none, with the pagination of an empty list, and answers ids with 404 NOT_FOUND', async () => {
    for (const list of ['/links', '/circuits']) {
      const res = await srv.fabric.get(list)
      expectStatus(res, 200)
      expect(res.body.data).toEqual([])
      expect(res.body.meta.pagination).toMatchObject({ offset: 0, totalCount: 0 })
      expectError(await srv.fabric.get(`${list}/no-such`), 404, 'NOT_FOUND')
    }
    expectError(await srv.fabric.patch('/links/no-such', { down: true }), 404, 'NOT_FOUND')
    expectError(await srv.fabric.del('/circuits/no-such', { body: { immediate: true } }), 404, 'NOT_FOUND')
    expectError(await srv.fabric.del('/circuits/no-such'), 404, 'NOT_FOUND')
  })

  it('checks a link patch and a circuit delete before looking: bad values are 400 with the value as text', async () => {
    const res = await srv.fabric.patch('/links/no-such', { staticCost: -1 })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause).toMatchObject({ field: 'staticCost', value: '-1' })
    expectError(await srv.fabric.patch('/links/no-such', { down: 'yes' }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.fabric.del('/circuits/no-such', { body: { immediate: 'now' } }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.fabric.get(`/links${q('state = ')}`), 400, 'INVALID_FILTER')
    expectError(await srv.fabric.get(`/circuits${q('nope = 1')}`), 400, 'INVALID_FILTER')
  })

  it('answers 404 for the delete of a link this node does not know', async () => {
    expectError(await srv.fabric.del('/links/some-link'), 404, 'NOT_FOUND')
  })
})

describe('database, inspections and the cluster', () => {
  it('takes a snapshot (answering its path), at most one a minute, and refuses a path chosen by the client', async () => {
    const res = await srv.fabric.post('/database/snapshot', {})
    expectStatus(res, 200)
    expect(res.body.data.path).toStartWith(srv.dataDir)
    expectError(await srv.fabric.post('/database', undefined), 429, 'RATE_LIMITED')
    srv.clock.advance(61_000)
    expectStatus(await srv.fabric.post('/database', undefined), 200)
    const chosen = await srv.fabric.post('/database/snapshot', { path: '/tmp/elsewhere.db' })
    expectError(chosen, 400, 'COULD_NOT_VALIDATE')
    expect(chosen.body.error.cause.field).toBe('path')
  })

  it("runs the integrity check and answers its results, as the Management API's", async () => {
    expectStatus(await srv.fabric.post('/database/check-data-integrity', undefined), 202)
    for (let i = 0; i < 100 && (await srv.fabric.get('/database/data-integrity-results')).body.data.inProgress; i++) await Bun.sleep(50)
    const res = await srv.fabric.get('/database/data-integrity-results')
    expect(res.body.data).toMatchObject({ inProgress: false, fixingErrors: false, results: [] })
  })

  it('answers the cluster operations of a single node with SERVER_NOT_RUNNING_IN_HA_MODE, and an inspection as failed', async () => {
    expectError(await srv.fabric.get('/cluster/list-members'), 400, 'SERVER_NOT_RUNNING_IN_HA_MODE')
    expectError(await srv.fabric.post('/cluster/add-member', { address: 'tls:x:1', isVoter: true }), 400, 'SERVER_NOT_RUNNING_IN_HA_MODE')
    expectError(await srv.fabric.post('/cluster/transfer-leadership', {}), 400, 'SERVER_NOT_RUNNING_IN_HA_MODE')
    const inspected = await srv.fabric.post('/inspections', { appRegex: '.*', requestedValues: ['stackdump'] })
    expectStatus(inspected, 200)
    expect(inspected.body.success).toBe(false)
    expect(inspected.body.errors[0]).toContain('edgeplane answers no inspections')
  })

  it('answers an unknown fabric path with 404 and a known one with the wrong verb with 405', async () => {
    expectError(await srv.fabric.get('/no-such-thing', { offSpec: 'a path the fabric spec does not have, to see the 404' }), 404, 'NOT_FOUND')
    expectError(await srv.fabric.put('/links', {}, { offSpec: 'a verb the fabric spec does not have on /links, to see the 405' }), 405, 'METHOD_NOT_ALLOWED')
  })
})

// Replays of what the real `ziti` CLI (openziti/ziti 804f55abb, /work/peers/bin/ziti in the issue's check) sent to an
// edgeplane run from this tree: `ziti fabric list|create|update|delete|db|inspect`, `ziti ops cluster list` and
// `ziti edge validate service-hosting`, each request as it went out (bodies from --output-request-json; list queries
// as its generated fabric client writes them) and what the CLI reads of the answer.
describe("the ziti CLI's requests", () => {
  let token: string
  beforeAll(async () => {
    token = await srv.login(ADMIN.username, ADMIN.password)
  })
  const send = (method: string, path: string, body?: unknown) => srv.as(token, 'fabric')(method, path, body === undefined ? {} : { body })

  it('ziti fabric list services|routers|terminators|links|circuits: a GET with no query, read with meta.pagination', async () => {
    for (const list of ['/services', '/routers', '/terminators', '/links', '/circuits']) {
      const res = await send('GET', list)
      expectStatus(res, 200)
      expect(Array.isArray(res.body.data)).toBe(true)
      expect(res.body.meta.pagination).toMatchObject({ offset: 0, totalCount: res.body.data.length })
    }
  })

  it("ziti fabric list routers 'name contains \"edge\"', and the lookup of a name to an id (id = \"x\" or name=\"x\")", async () => {
    expect(ids(await send('GET', `/routers${q('name contains "edge"')}`)).sort()).toEqual([r1.id, r2.id].sort())
    expect(ids(await send('GET', `/routers${q('id = "fab-transit" or name="fab-transit"')}`))).toEqual([transit])
    expect(ids(await send('GET', `/services${q(`id = "${serviceId}" or name="${serviceId}"`)}`))).toEqual([serviceId])
  })

  it('ziti fabric create terminator / update terminator / delete terminator', async () => {
    const made = await send('POST', '/terminators', { address: 'tcp:127.0.0.1:8081', binding: 'edge_transport', instanceId: '', router: transit, service: otherService })
    expectStatus(made, 201)
    const id = made.body.data.id as string
    expectStatus(await send('PATCH', `/terminators/${id}`, { cost: 7, precedence: 'failed' }), 200)
    expect((await send('GET', `/terminators${q(`id = "${id}"`)}`)).body.data[0]).toMatchObject({ binding: 'edge_transport', instanceId: '', cost: 7, precedence: 'failed' })
    expectStatus(await send('DELETE', `/terminators/${id}`), 200)
  })

  it('ziti fabric update service --terminator-strategy; ziti fabric create service (refused: the CLI prints the reason)', async () => {
    expectStatus(await send('PATCH', `/services/${otherService}`, { terminatorStrategy: 'weighted' }), 200)
    expect((await send('GET', `/services/${otherService}`)).body.data.terminatorStrategy).toBe('weighted')
    const refused = await send('POST', '/services', { maxIdleTimeMillis: 0, name: 'fab-only-31', tags: null })
    expectError(refused, 405, 'METHOD_NOT_ALLOWED')
  })

  it('ziti fabric update router --cost --no-traversal / --disabled / --fingerprint; ziti fabric create router (refused)', async () => {
    expectStatus(await send('PATCH', `/routers/${transit}`, { cost: 3, noTraversal: true }), 200)
    expectStatus(await send('PATCH', `/routers/${transit}`, { disabled: true, name: 'fab-transit' }), 200)
    expectStatus(await send('PATCH', `/routers/${transit}`, { disabled: false }), 200)
    expect((await send('GET', `/routers/${transit}`)).body.data).toMatchObject({ cost: 3, noTraversal: true, disabled: false })
    expectError(await send('PATCH', `/routers/${transit}`, { cost: 4, fingerprint: 'abcdef' }), 400, 'COULD_NOT_VALIDATE')
    expectError(await send('PATCH', `/routers/${transit}`, { ctrlChanListeners: { 'tls:1.2.3.4:6262': ['g1'] } }), 400, 'COULD_NOT_VALIDATE')
    const created = await send('POST', '/routers', { cost: 0, disabled: false, fingerprint: 'e7298563b5a54b60b103043c389c91f7cb75693b', id: 'fr31', name: 'fr31', noTraversal: false, tags: null })
    expectError(created, 405, 'METHOD_NOT_ALLOWED')
  })

  it('ziti fabric update link --down / --static-cost, delete link, delete circuit [--immediate]: nothing here yet', async () => {
    expectError(await send('PATCH', '/links/no-such-link', { down: true }), 404, 'NOT_FOUND')
    expectError(await send('PATCH', '/links/no-such-link', { staticCost: 5 }), 404, 'NOT_FOUND')
    expectError(await send('DELETE', '/links/no-such-link'), 404, 'NOT_FOUND')
    expectError(await send('DELETE', '/circuits/no-such-circuit', { immediate: false }), 404, 'NOT_FOUND')
    expectError(await send('DELETE', '/circuits/no-such-circuit', { immediate: true }), 404, 'NOT_FOUND')
  })

  it('ziti fabric db snapshot / start-check-integrity / check-integrity-status; ziti fabric inspect; ziti ops cluster list', async () => {
    srv.clock.advance(61_000)
    const snap = await send('POST', '/database/snapshot', {})
    expectStatus(snap, 200)
    expect(typeof snap.body.data.path).toBe('string')
    expectError(await send('POST', '/database/snapshot', {}), 429, 'RATE_LIMITED')
    expectStatus(await send('POST', '/database/check-data-integrity'), 202)
    expectStatus(await send('GET', '/database/data-integrity-results'), 200)
    const inspected = await send('POST', '/inspections', { appRegex: '.*', requestedValues: ['stackdump'] })
    expect([inspected.status, inspected.body.success, inspected.body.errors.length]).toEqual([200, false, 1])
    expectError(await send('GET', '/cluster/list-members'), 400, 'SERVER_NOT_RUNNING_IN_HA_MODE')
  })

  it('ziti edge validate service-hosting: the services, every terminator (limit none), each service\'s Bind identities', async () => {
    const services = await srv.as(token, 'management').get(`/services${q('sort by name limit none')}`)
    expectStatus(services, 200)
    const terminators = await send('GET', `/terminators${q('limit none')}`)
    expectStatus(terminators, 200)
    const hosted = terminators.body.data.filter((t: { serviceId: string; hostId: string }) => t.serviceId === serviceId && t.hostId === sdk.identityId)
    expect(hosted.map((t: { id: string }) => t.id)).toEqual(['fab-hosted'])
    const binders = await srv.as(token, 'management').get(`/services/${serviceId}/identities?policyType=bind&filter=${encodeURIComponent('limit none')}`)
    expect(ids(binders)).toEqual([sdk.identityId])
  })
})
