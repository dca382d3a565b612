// The wire format both APIs share: envelopes, error shapes and codes, body limits, aliases, CORS, version, specs,
// EST cacerts, summary (seed "Response envelope", "Errors"; reference controller-behaviour.md §0, §1, §9).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { parseCertsOnlyPkcs7 } from '../../src/pki/pki-pkcs7.ts'
import { parseCertificatePem } from '../../src/pki/pki-certs.ts'
import { ApiErrorBody } from '../../schemas/common.ts'
import { API_ERRORS } from '../../src/errors/error-codes.ts'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { hasOpenssl, makeTestCa, runOpenssl } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

describe('error envelope', () => {
  it('renders every error with code, message, requestId and the versions in meta', async () => {
    const res = await srv.mgmt.get('/identities/nope')
    expectError(res, 404, 'NOT_FOUND')
    expect(Value.Check(ApiErrorBody, res.body)).toBe(true)
    expect(res.body.error.message).toBe(API_ERRORS.NOT_FOUND.message)
    expect(res.body.error.requestId).toMatch(/^[0-9a-zA-Z][0-9a-zA-Z.-]+$/)
  })

  it('answers an unknown path with 404 NOT_FOUND', async () => {
    const offSpec = 'a path no spec has, to see the 404'
    expectError(await srv.mgmt.get('/no-such-thing', { offSpec }), 404, 'NOT_FOUND')
    expectError(await srv.raw.get('/edge/nothing/v9/x', { offSpec }), 404, 'NOT_FOUND')
  })

  it('answers a known path with the wrong verb with 405 METHOD_NOT_ALLOWED', async () => {
    const offSpec = 'a method the spec does not have on the path, to see the 405'
    expectError(await srv.mgmt.put('/identities', {}, { offSpec }), 405, 'METHOD_NOT_ALLOWED')
    expectError(await srv.mgmt.post('/summary', {}, { offSpec }), 405, 'METHOD_NOT_ALLOWED')
  })

  it('answers malformed JSON with 400 COULD_NOT_PARSE_BODY', async () => {
    const res = await srv.mgmt('POST', '/identities', { rawBody: '{"name": "x",', headers: { 'content-type': 'application/json' } })
    expectError(res, 400, 'COULD_NOT_PARSE_BODY')
  })

  it('answers malformed JSON without a content type with 400 COULD_NOT_PARSE_BODY', async () => {
    const res = await srv.raw('POST', '/edge/client/v1/authenticate?method=password', { rawBody: 'not json' })
    expectError(res, 400, 'COULD_NOT_PARSE_BODY')
  })

  it('answers a JSON body of the wrong shape with 400 COULD_NOT_VALIDATE', async () => {
    expectError(await srv.mgmt.post('/identities', [1, 2, 3]), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/identities', 'a string'), 400, 'COULD_NOT_VALIDATE')
  })

  it('answers a body over 1 MiB with 413 REQUEST_ENTITY_TOO_LARGE and stores nothing', async () => {
    const before = (await srv.mgmt.get('/summary')).body.data.identities
    const res = await srv.mgmt.post('/identities', { name: 'big', type: 'User', isAdmin: false, tags: { pad: 'x'.repeat(1024 * 1024) } })
    expectError(res, 413, 'REQUEST_ENTITY_TOO_LARGE')
    expect((await srv.mgmt.get('/summary')).body.data.identities).toBe(before)
  })

  it('accepts a body just under 1 MiB', async () => {
    const res = await srv.mgmt.post('/identities', { name: 'almost-big', type: 'User', isAdmin: false, tags: { pad: 'x'.repeat(1000 * 1000) } })
    expectStatus(res, 201)
  })
})

describe('aliases, headers and CORS', () => {
  it('serves /version at the root, at /, and on both APIs without authentication', async () => {
    const paths = ['/version', '/', '/edge/client/v1/version', '/edge/management/v1/version', '/edge/v1/version']
    // the APIs' roots answer the version document too (listRoot in both specs)
    paths.push('/edge/client/v1', '/edge/client/v1/', '/edge/management/v1', '/edge/management/v1/', '/edge/v1')
    for (const p of paths) {
      const res = await srv.raw.get(p)
      expectStatus(res, 200)
      expect(res.body.data.version).toBe('0.1.0')
      // OIDC is served (test/api/oidc-sdk.api.test.ts has the setting that turns it off)
      expect(res.body.data.capabilities).toEqual(['OIDC_AUTH'])
      expect(res.body.data.apiVersions['edge-oidc'].v1.path).toBe('/oidc')
      expect(res.body.data.apiVersions['edge-management'].v1.path).toBe('/edge/management/v1')
      expect(res.body.data.apiVersions.edge.v1.apiBaseUrls[0]).toBe(`${srv.url}/edge/client/v1`)
    }
  })

  it('routes bare paths to the Client API', async () => {
    const res = await srv.raw.post('/authenticate?method=password', { username: 'admin', password: 'admin-pass-1' })
    expectStatus(res, 200)
  })

  it('sends the server and instance headers', async () => {
    const res = await srv.raw.get('/version')
    expect(res.headers.get('server')).toBe('edgeplane/0.1.0')
    expect(res.headers.get('ziti-instance-id')).toBeTruthy()
  })

  it('answers a CORS preflight with 200 and the allowed headers and methods', async () => {
    const res = await srv.raw('OPTIONS', '/edge/management/v1/identities', { headers: { origin: 'https://console.example', 'access-control-request-method': 'POST' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://console.example')
    expect(res.headers.get('access-control-allow-headers')).toContain('zt-session')
    expect(res.headers.get('access-control-allow-methods')).toContain('PATCH')
    expect(res.headers.get('access-control-allow-credentials')).toBe('true')
  })

  it('sends CORS headers to a request with an Origin only (an SDK sends none and gets none)', async () => {
    const bare = await srv.raw.get('/version')
    expect([...bare.headers.keys()].filter((k) => k.startsWith('access-control-') || k === 'vary')).toEqual([])
    const browser = await srv.raw('GET', '/version', { headers: { origin: 'https://console.example' } })
    expect(browser.headers.get('access-control-allow-origin')).toBe('https://console.example')
    expect(browser.headers.get('vary')).toBe('Origin')
    expect(browser.headers.get('access-control-allow-credentials')).toBe('true')
  })
})

describe('capabilities and specs', () => {
  it('lists enumerated capabilities', async () => {
    const res = await srv.client.get('/enumerated-capabilities')
    expectStatus(res, 200)
    expect(res.body.data).toEqual(['OIDC_AUTH', 'HA_CONTROLLER'])
  })

  it('lists the two API specs and serves each as swagger 2.0 generated from the routes', async () => {
    const list = await srv.client.get('/specs')
    expectStatus(list, 200)
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual(['edge-client', 'edge-management'])
    expectStatus(await srv.mgmt.get('/specs/edge-management'), 200)
    expectError(await srv.mgmt.get('/specs/nope'), 404, 'NOT_FOUND')
    const res = await srv.mgmt.get('/specs/edge-management/spec')
    expectStatus(res, 200)
    // detailSpecBody: the document is the string `data` of the usual envelope
    expect(res.body.meta).toEqual({})
    const spec = { body: JSON.parse(res.body.data) }
    expect(spec.body.swagger).toBe('2.0')
    expect(spec.body.basePath).toBe('/edge/management/v1')
    const create = spec.body.paths['/identities'].post
    const bodySchema = create.parameters.find((p: { in: string }) => p.in === 'body').schema
    expect(bodySchema.required).toEqual(expect.arrayContaining(['name', 'type', 'isAdmin']))
    expect(bodySchema.properties.type.enum).toEqual(['User', 'Device', 'Service', 'Router', 'Default'])
    expect(spec.body.paths['/identities/{id}'].get.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true })
    const client = JSON.parse((await srv.client.get('/specs/edge-client/spec')).body.data)
    expect(client.paths['/identities']).toBeUndefined()
    expect(client.paths['/current-identity'].get).toBeDefined()
  })
})

describe('GET /.well-known/est/cacerts', () => {
  it('answers the CA chain as base64 PKCS#7 in 64-character lines', async () => {
    for (const p of ['/.well-known/est/cacerts', '/edge/client/v1/.well-known/est/cacerts']) {
      const res = await srv.raw.get(p)
      expectStatus(res, 200)
      expect(res.headers.get('content-type')).toBe('application/pkcs7-mime')
      const lines = res.text.split('\n')
      expect(lines.slice(0, -1).every((l) => l.length === 64)).toBe(true)
      expect(res.text.endsWith('\n')).toBe(false)
      const certs = parseCertsOnlyPkcs7(res.text).map(parseCertificatePem)
      expect(certs.map((c) => c.isCa)).toEqual([true, true])
      expect(certs[1].fingerprintSha1).toBe(parseCertificatePem(srv.caPem).fingerprintSha1)
    }
  })

  it.skipIf(!hasOpenssl)('is readable by openssl pkcs7', async () => {
    const res = await srv.raw.get('/.well-known/est/cacerts')
    const der = Buffer.from(res.text.replace(/\n/g, ''), 'base64')
    const out = await runOpenssl(['pkcs7', '-inform', 'DER', '-print_certs', '-noout'], der)
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('subject=')
  })
})

describe('GET /summary', () => {
  it('counts identities, authenticators and API sessions', async () => {
    const res = await srv.mgmt.get('/summary')
    expectStatus(res, 200)
    expect(res.body.data.identities).toBeGreaterThanOrEqual(1)
    expect(res.body.data.authenticators).toBeGreaterThanOrEqual(1)
    expect(res.body.data.apiSessions).toBeGreaterThanOrEqual(1)
    expect(res.body.data.identityTypes).toBe(5)
  })

  it('is admin only', async () => {
    expectError(await srv.mgmt.get('/summary', { session: null }), 401, 'UNAUTHORIZED')
  })

  it('counts enrollments, MFA records, CAs and service sessions as their resources list them', async () => {
    const count = async () => (await srv.mgmt.get('/summary')).body.data as Record<string, number>
    const before = await count()
    await srv.create('/identities', { name: 'summary-enrollee', type: 'User', isAdmin: false, enrollment: { ott: true } })
    const ca = await makeTestCa({ commonName: 'summary CA', clock: srv.clock })
    await srv.create('/cas', { name: 'summary-ca', certPem: ca.certPem, isAutoCaEnrollmentEnabled: false, isOttCaEnrollmentEnabled: false, isAuthEnabled: false, identityRoles: [] })
    const userId = await srv.create('/identities', { name: 'summary-mfa', type: 'User', isAdmin: false })
    expectStatus(await srv.mgmt.post('/authenticators', { identityId: userId, method: 'updb', username: 'summary-mfa', password: 'summary-pass-1' }), 201)
    const user = srv.as(await srv.login('summary-mfa', 'summary-pass-1', 'client'), 'client')
    expectStatus(await user.post('/current-identity/mfa', {}), 201)
    const after = await count()
    expect(after.enrollments).toBe(before.enrollments + 1)
    expect(after.cas).toBe(before.cas + 1)
    expect(after.mfas).toBe(before.mfas + 1)
    expect(after.enrollments).toBe((await srv.mgmt.get('/enrollments')).body.meta.pagination.totalCount)
    expect(after.cas).toBe((await srv.mgmt.get('/cas')).body.meta.pagination.totalCount)
    expect(after.sessions).toBe((await srv.mgmt.get('/sessions')).body.meta.pagination.totalCount)
    expect(after.apiSessionCertificates).toBe(0)
  })
})
