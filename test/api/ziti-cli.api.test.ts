// What the official `ziti` CLI (openziti/ziti @ 804f55abb, `ziti edge ...`) sends, replayed without the CLI: each case
// is a request pattern the CLI was seen to send that edgeplane once refused or answered in a way the CLI could not
// use (issue 29 §6). Bodies are the CLI's own, byte for byte as a recording proxy saw them, with the ids of this run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { makeTestCa } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

/** A request with the CLI's body text as it was sent (the CLI writes some bodies with a trailing newline). */
const send = (method: string, path: string, text: string): Promise<ApiResponse> =>
  srv.mgmt(method, path, { rawBody: text, headers: { 'content-type': 'application/json' } })
const filter = (f: string) => `filter=${encodeURIComponent(f)}`
const data = async (path: string) => {
  const res = await srv.mgmt.get(path)
  expectStatus(res, 200)
  return res.body.data
}

describe('ziti edge create service', () => {
  it('creates a service without --configs (the CLI sends "configs": null)', async () => {
    const res = await send('POST', '/services', '{"configs":null,"encryptionRequired":false,"maxIdleTimeMillis":0,"name":"cli-svc-c","roleAttributes":null,"tags":{}}')
    expectStatus(res, 201)
    expect(await data(`/services/${res.body.data.id}`)).toMatchObject({ name: 'cli-svc-c', configs: [], encryptionRequired: false })
  })
})

describe('ziti edge create posture-check os', () => {
  it('reads the operating systems the CLI sends with capitalised member names (Type, Versions)', async () => {
    const res = await send(
      'POST', '/posture-checks',
      '{"name":"cli-pc-os","operatingSystems":[{"Type":"Windows","Versions":["10.0.19041","10.0.19042"]},{"Type":"Linux","Versions":[]}],"roleAttributes":["pc"],"tags":{},"typeId":"OS"}',
    )
    expectStatus(res, 201)
    expect((await data(`/posture-checks/${res.body.data.id}`)).operatingSystems).toEqual([
      { type: 'Windows', versions: ['10.0.19041', '10.0.19042'] },
      { type: 'Linux', versions: [] },
    ])
    // `ziti edge update posture-check os` sends them so too
    expectStatus(await send('PATCH', `/posture-checks/${res.body.data.id}`, '{"name":"cli-pc-os2","operatingSystems":[{"Type":"Linux","Versions":["\\u003e=5.0"]},{"Type":"macOS","Versions":[]}],"roleAttributes":["x","y"],"typeId":"OS"}'), 200)
    expect(await data(`/posture-checks/${res.body.data.id}`)).toMatchObject({
      name: 'cli-pc-os2',
      roleAttributes: ['x', 'y'],
      operatingSystems: [{ type: 'Linux', versions: ['>=5.0'] }, { type: 'macOS', versions: [] }],
    })
  })
})

describe('ziti edge list posture-checks | identities | edge-routers', () => {
  it('shows roleAttributes [] for what was created with "roleAttributes": null (the CLI dereferences it)', async () => {
    const check = await send('POST', '/posture-checks', '{"macAddresses":["00:11:22:33:44:55"],"name":"cli-pc-mac","roleAttributes":null,"tags":{},"typeId":"MAC"}')
    expectStatus(check, 201)
    const identity = await send(
      'POST', '/identities',
      '{"authPolicyId":"default","defaultHostingCost":0,"enrollment":{"ott":true},"isAdmin":false,"name":"cli-id-none","permissions":null,"roleAttributes":null,"serviceHostingCosts":{},"serviceHostingPrecedences":{},"tags":{},"type":"Default"}',
    )
    expectStatus(identity, 201)
    const router = await send('POST', '/edge-routers', '{"appData":null,"cost":0,"disabled":false,"isTunnelerEnabled":false,"name":"cli-er-none","noTraversal":false,"roleAttributes":null,"tags":{}}')
    expectStatus(router, 201)
    for (const [list, name] of [['/posture-checks', 'cli-pc-mac'], ['/identities', 'cli-id-none'], ['/edge-routers', 'cli-er-none']]) {
      const [row] = await data(`${list}?${filter(`name = "${name}"`)}`)
      expect(row.roleAttributes).toEqual([])
    }
  })
})

describe('ziti edge create identity --permissions', () => {
  it('refuses permissions it would not enforce, and takes the CLI\'s "permissions": null', async () => {
    const body = (permissions: string) =>
      `{"authPolicyId":"default","defaultHostingCost":0,"enrollment":{"ott":true},"isAdmin":false,"name":"cli-perm","permissions":${permissions},"roleAttributes":null,"serviceHostingCosts":{},"serviceHostingPrecedences":{},"tags":{},"type":"Default"}`
    const refused = await send('POST', '/identities', body('["config"]'))
    expectError(refused, 400, 'COULD_NOT_VALIDATE')
    expect(refused.body.error.cause.field).toBe('permissions')
    expect(await data(`/identities?${filter('name = "cli-perm"')}`)).toEqual([])
    const id = (await send('POST', '/identities', body('null'))).body.data.id
    expectError(await send('PATCH', `/identities/${id}`, '{"permissions":["ops"]}'), 400, 'COULD_NOT_VALIDATE')
    expectStatus(await send('PATCH', `/identities/${id}`, '{"permissions":[]}'), 200)
  })
})

describe('ziti edge update ca', () => {
  let seq = 0
  const newCa = async (extra: string) => {
    const ca = await makeTestCa({ commonName: `cli ca ${++seq}`, clock: srv.clock })
    const body = JSON.stringify({ certPem: ca.certPem, identityRoles: ['caid'], isAuthEnabled: true, isAutoCaEnrollmentEnabled: true, isOttCaEnrollmentEnabled: true, name: `cli-ca-${seq}`, tags: {} })
    const res = await send('POST', '/cas', body.replace(/}$/, extra))
    expectStatus(res, 201)
    return res.body.data.id as string
  }
  const claimOf = async (id: string) => (await data(`/cas/${id}`)).externalIdClaim

  it('changes a CA without a claim: "externalIdClaim": {} adds none, "identityRoles": null keeps the roles', async () => {
    const id = await newCa('}')
    expectStatus(await send('PATCH', `/cas/${id}`, '{"externalIdClaim":{},"identityRoles":null,"isAutoCaEnrollmentEnabled":false}\n'), 200)
    const ca = await data(`/cas/${id}`)
    expect(ca).toMatchObject({ isAutoCaEnrollmentEnabled: false, identityRoles: ['caid'] })
    expect(ca.externalIdClaim).toBeUndefined()
  })

  it('keeps the claim on other changes, merges given members, and --clear-external-id-claim (no claim sent) removes it', async () => {
    const id = await newCa(',"externalIdClaim":{"index":1,"location":"SAN_URI","matcher":"SCHEME","matcherCriteria":"spiffe","parser":"SPLIT","parserCriteria":"/"}}')
    const claim = { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'SPLIT', parserCriteria: '/', index: 1 }
    expectStatus(await send('PATCH', `/cas/${id}`, '{"externalIdClaim":{},"identityNameFormat":"[caId]-x","identityRoles":["r1","r2"],"name":"cli-ca-renamed","tags":{"q":"r"}}\n'), 200)
    expect(await claimOf(id)).toEqual(claim)
    expectStatus(await send('PATCH', `/cas/${id}`, '{"externalIdClaim":{"location":"COMMON_NAME","matcher":"ALL","parser":"NONE"},"identityRoles":null}\n'), 200)
    expect(await claimOf(id)).toEqual({ ...claim, location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE' })
    expect((await data(`/cas/${id}`)).identityRoles).toEqual(['r1', 'r2'])
    expectStatus(await send('PATCH', `/cas/${id}`, '{"identityRoles":null}\n'), 200)
    expect(await claimOf(id)).toBeUndefined()
  })
})

describe('ziti edge list services --as-identity', () => {
  it('shows every service with the permissions of the identity named by id or name; an unknown one is 404', async () => {
    const identity = await srv.create('/identities', { name: 'cli-viewer', type: 'User', isAdmin: false, roleAttributes: ['viewers'] })
    const seen = await srv.create('/services', { name: 'cli-seen', encryptionRequired: true, roleAttributes: ['cli-seen'] })
    await srv.create('/services', { name: 'cli-unseen', encryptionRequired: true })
    await srv.create('/service-policies', { name: 'cli-viewers-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#viewers'], serviceRoles: [`@${seen}`] })
    for (const as of ['cli-viewer', identity]) {
      const rows = await data(`/services?asIdentity=${encodeURIComponent(as)}&${filter('name contains "cli-"')}`)
      const byName = Object.fromEntries(rows.map((s: { name: string; permissions: string[] }) => [s.name, s.permissions]))
      expect(byName['cli-seen']).toEqual(['Dial'])
      expect(byName['cli-unseen']).toEqual(['Invalid'])
    }
    // without it the admin sees its own permissions
    const [own] = await data(`/services?${filter('name = "cli-seen"')}`)
    expect(own.permissions).toEqual(['Invalid'])
    expectError(await srv.mgmt.get('/services?asIdentity=nosuch'), 404, 'NOT_FOUND')
  })
})

describe('ziti edge list configs <filter on data>', () => {
  it('filters configs on their data, nested members too (the real controller\'s data map symbol)', async () => {
    const type = await srv.create('/config-types', { name: 'cli-port-type', schema: { type: 'object' } })
    const a = await srv.create('/configs', { name: 'cli-port-80', configTypeId: type, data: { port: 80, nested: { host: 'a' } } })
    const b = await srv.create('/configs', { name: 'cli-port-81', configTypeId: type, data: { port: 81 } })
    const ids = async (f: string) => (await data(`/configs?${filter(f)}`)).map((c: { id: string }) => c.id)
    expect(await ids('data.port = 81')).toEqual([b])
    expect(await ids('data.nested.host = "a"')).toEqual([a])
    expect((await ids('data.port > 79 sort by name desc'))).toEqual([b, a])
    expect(await ids('data.missing = 1')).toEqual([])
  })
})

describe('ziti edge create edge-router --config | --bootstrap-ctrl-chan-listener', () => {
  it('refuses router configs and bootstrap listeners rather than dropping them (routers do not connect yet)', async () => {
    const type = await srv.create('/config-types', { name: 'cli-router-type', schema: { type: 'object' }, target: 'router' })
    const config = await srv.create('/configs', { name: 'cli-router-config', configTypeId: type, data: {} })
    const withConfig = await send('POST', '/edge-routers', `{"appData":null,"configs":["${config}"],"cost":0,"disabled":false,"isTunnelerEnabled":false,"name":"cli-er-config","noTraversal":false,"roleAttributes":null,"tags":{}}`)
    expectError(withConfig, 400, 'COULD_NOT_VALIDATE')
    expect(withConfig.body.error.cause.field).toBe('configs')
    const withListener = await send(
      'POST', '/edge-routers',
      '{"appData":{"x":"y"},"cost":0,"ctrlChanListeners":{"tls:1.2.3.4:6262":["g1","g2"]},"disabled":false,"isTunnelerEnabled":false,"name":"cli-er-listener","noTraversal":false,"roleAttributes":null,"tags":{"t":"1"}}',
    )
    expectError(withListener, 400, 'COULD_NOT_VALIDATE')
    expect(withListener.body.error.cause.field).toBe('ctrlChanListeners')
    const names = (await data(`/edge-routers?${filter('name contains "cli-er-"')}`)).map((r: { name: string }) => r.name)
    expect(names).not.toContain('cli-er-config')
    expect(names).not.toContain('cli-er-listener')
    const id = await srv.create('/edge-routers', { name: 'cli-er-plain' })
    expectError(await send('PATCH', `/edge-routers/${id}`, '{"ctrlChanListeners":{"tls:5.6.7.8:6262":null}}'), 400, 'COULD_NOT_VALIDATE')
    expectError(await send('PATCH', `/routers/${id}`, `{"configs":["${config}"]}`), 400, 'COULD_NOT_VALIDATE')
    expectStatus(await send('PATCH', `/edge-routers/${id}`, '{"configs":[],"ctrlChanListeners":null,"cost":3}'), 200)
    expect((await data(`/edge-routers/${id}`)).cost).toBe(3)
  })
})

describe('ziti edge update auth-policy', () => {
  it('keeps the signer references the CLI sends as null with every change, and clears them with [] and ""', async () => {
    const signer = (n: string) => srv.create('/external-jwt-signers', { name: `cli-signer-${n}`, issuer: `https://cli-${n}.example.com`, audience: n, enabled: true, jwksEndpoint: `https://cli-${n}.example.com/jwks` })
    const [a, b] = [await signer('a'), await signer('b')]
    const created = await send(
      'POST', '/auth-policies',
      `{"name":"cli-ap-jwt","primary":{"cert":{"allowExpiredCerts":false,"allowed":false},"extJwt":{"allowed":true,"allowedSigners":["${a}"]},"updb":{"allowed":false,"lockoutDurationMinutes":0,"maxAttempts":0,"minPasswordLength":5,"requireMixedCase":false,"requireNumberChar":false,"requireSpecialChar":false}},"secondary":{"requireExtJwtSigner":"${b}","requireTotp":false},"tags":{}}\n`,
    )
    expectStatus(created, 201)
    const id = created.body.data.id
    expectStatus(await send('PATCH', `/auth-policies/${id}`, '{"primary":{"cert":{"allowed":true},"extJwt":{"allowedSigners":null},"updb":{}},"secondary":{},"tags":{}}\n'), 200)
    expect(await data(`/auth-policies/${id}`)).toMatchObject({
      primary: { cert: { allowed: true }, extJwt: { allowed: true, allowedSigners: [a] } },
      secondary: { requireExtJwtSigner: b },
    })
    // --primary-ext-jwt-allowed-signers with no value, --secondary-req-ext-jwt-signer ""
    expectStatus(await send('PATCH', `/auth-policies/${id}`, '{"primary":{"cert":{},"extJwt":{"allowedSigners":[]},"updb":{}},"secondary":{"requireExtJwtSigner":""},"tags":{}}\n'), 200)
    expect(await data(`/auth-policies/${id}`)).toMatchObject({ primary: { extJwt: { allowedSigners: [] } }, secondary: { requireExtJwtSigner: null } })
  })
})

describe('ziti edge list network-jwts', () => {
  it('lists the network JWT `default` on both APIs without a session, signed with the server key and the same each time', async () => {
    const res = await srv.mgmt.get('/network-jwts')
    expectStatus(res, 200)
    const [entry] = res.body.data
    expect(res.body.data).toHaveLength(1)
    expect(entry.name).toBe('default')
    const pki = srv.server.pki
    const header = decodeProtectedHeader(entry.token)
    expect(header.kid).toBe(pki.server.view.fingerprintSha1)
    const { payload } = await jwtVerify(entry.token, await importX509(pki.server.certPem, header.alg!), { currentDate: new Date(srv.clock.now()) })
    expect(payload).toEqual({ em: 'network', ctrls: null, aud: ['openziti-enroller'], iss: `${srv.url}/`, sub: `${srv.url}/`, jti: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    for (const api of ['client', 'management'] as const) {
      const anonymous = await srv.as(undefined, api).get('/network-jwts', { session: null })
      expectStatus(anonymous, 200)
      expect(anonymous.body.data).toEqual([{ name: 'default', token: entry.token }])
    }
  })
})

describe('ziti edge list identity service-configs', () => {
  it('answers the overrides with pagination (the CLI reads meta.pagination and fails without it)', async () => {
    const id = await srv.create('/identities', { name: 'cli-overrides', type: 'User', isAdmin: false })
    const svc = await srv.create('/services', { name: 'cli-overridden', encryptionRequired: true })
    const type = await srv.create('/config-types', { name: 'cli-override-type', schema: { type: 'object' } })
    const config = await srv.create('/configs', { name: 'cli-override', configTypeId: type, data: {} })
    const empty = await srv.mgmt.get(`/identities/${id}/service-configs`)
    expectStatus(empty, 200)
    expect(empty.body).toMatchObject({ data: [], meta: { pagination: { limit: 0, offset: 0, totalCount: 0 } } })
    // `ziti edge update identity-configs cli-overrides cli-overridden cli-override`
    expectStatus(await send('POST', `/identities/${id}/service-configs`, `[{"configId":"${config}","serviceId":"${svc}"}]`), 200)
    const res = await srv.mgmt.get(`/identities/${id}/service-configs`)
    expectStatus(res, 200)
    expect(res.body.data).toMatchObject([{ serviceId: svc, configId: config, service: { name: 'cli-overridden' }, config: { name: 'cli-override' } }])
    expect(res.body.meta.pagination).toEqual({ limit: 1, offset: 0, totalCount: 1 })
  })
})

describe('ziti edge trace identity --disable', () => {
  it('answers a trace id and an until as strings, with a trace running and without (the CLI reads both)', async () => {
    const id = await srv.create('/identities', { name: 'cli-traced', type: 'User', isAdmin: false })
    const started = await send('PUT', `/identities/${id}/trace`, '{"duration":"1m","enabled":true}')
    expectStatus(started, 200)
    srv.clock.advance(5_000)
    const ended = await send('PUT', `/identities/${id}/trace`, '{"duration":"10m","enabled":false}')
    expectStatus(ended, 200)
    expect(ended.body.data).toEqual({ enabled: false, traceId: started.body.data.traceId, until: new Date(srv.clock.now()).toISOString() })
    const none = await send('PUT', `/identities/${id}/trace`, '{"duration":"10m","enabled":false}')
    expect(none.body.data).toEqual({ enabled: false, traceId: '', until: '0001-01-01T00:00:00.000Z' })
  })
})

describe('ziti edge list summary', () => {
  it('counts the revocations `ziti edge list revocations` shows', async () => {
    const count = async () => (await data('/summary')).revocations as number
    const before = await count()
    // `ziti edge create revocation jti <jti>`
    expectStatus(await send('POST', '/revocations', '{"id":"0e7a1b8c-1111-2222-3333-444455556666","type":"JTI"}'), 201)
    expect(await count()).toBe(before + 1)
    expect(await count()).toBe((await srv.mgmt.get('/revocations')).body.meta.pagination.totalCount)
  })
})
