// Router enrollment (erott): the enrollment every new router gets, its redemption by POST /enroll/erott and the
// generic POST /enroll?token= (method=erott, or none: the token's record names erott), certificate extension over
// the router's current client certificate (POST /enroll/extend/router) and POST /edge-routers/{id}/re-enroll
// (controller-behaviour.md §6; edge-api client.yml enrollErOtt, extendRouterEnrollment; management.yml
// edgeRouterDetail, reEnrollEdgeRouter).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose'
import { exportPrivateKeyPem, generateKeyPair, type KeySpec } from '../../src/pki/pki-keys.ts'
import { parseCertificatesPem } from '../../src/pki/pki-certs.ts'
import { verifyCertificateChain } from '../../src/pki/pki-chain.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hasOpenssl, makeCsrPem, runOpenssl } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

interface RouterView {
  id: string
  name: string
  isVerified: boolean
  fingerprint: string
  enrollmentJwt: string | null
  enrollmentToken: string | null
  enrollmentCreatedAt: string | null
  enrollmentExpiresAt: string | null
  roleAttributes?: string[]
}

const edgeRouter = async (id: string): Promise<RouterView> => {
  const res = await srv.mgmt.get(`/edge-routers/${id}`)
  expectStatus(res, 200)
  return res.body.data
}

/** A router's two CSRs (client CN = `cn`) and the client key, as a router makes them before enrolling. */
async function routerCsrs(cn: string, opts: { spec?: KeySpec; dnsNames?: string[]; ipAddresses?: string[] } = {}) {
  const clientKeys = await generateKeyPair(opts.spec ?? 'ec-p256')
  const serverKeys = await generateKeyPair(opts.spec ?? 'ec-p256')
  const sans = { dnsNames: opts.dnsNames ?? ['router.example.net'], ipAddresses: opts.ipAddresses ?? ['192.0.2.7'] }
  return {
    client: await makeCsrPem(clientKeys, { commonName: cn, ...sans }),
    server: await makeCsrPem(serverKeys, { commonName: cn, ...sans }),
    clientKey: await exportPrivateKeyPem(clientKeys.privateKey),
  }
}

const enrollErott = (body: Record<string, unknown>) => srv.client.post('/enroll/erott', body)

/** Creates an edge router and enrolls it; answers its id, the enroll answer and the client certificate with its key. */
async function enrolledRouter(name: string) {
  const id = await srv.create('/edge-routers', { name })
  const { enrollmentToken } = await edgeRouter(id)
  const csrs = await routerCsrs(id)
  const res = await enrollErott({ token: enrollmentToken, clientCsr: csrs.client, serverCsr: csrs.server })
  expectStatus(res, 200)
  return { id, data: res.body.data, tls: { cert: res.body.data.cert as string, key: csrs.clientKey } }
}

const extend = (body: Record<string, unknown>, tls?: { cert: string; key: string }): Promise<ApiResponse> =>
  srv.raw.post('/edge/client/v1/enroll/extend/router', body, { tls })

describe('a new router gets an erott enrollment', () => {
  it('shows the enrollment on an edge router, unverified and without a fingerprint', async () => {
    const id = await srv.create('/edge-routers', { name: 'er-new', roleAttributes: ['east'] })
    const r = await edgeRouter(id)
    expect(r.isVerified).toBe(false)
    expect(r.fingerprint).toBe('')
    expect(r.enrollmentToken).toMatch(/^[0-9a-f-]{36}$/)
    expect(Date.parse(r.enrollmentCreatedAt!)).toBe(srv.clock.now())
    // default lifetime: 180 minutes
    expect(Date.parse(r.enrollmentExpiresAt!) - Date.parse(r.enrollmentCreatedAt!)).toBe(180 * 60_000)
    const list = await srv.mgmt.get(`/edge-routers?filter=${encodeURIComponent(`id="${id}"`)}`)
    expect(list.body.data[0].enrollmentJwt).toBe(r.enrollmentJwt)
  })

  it('signs the JWT with the TLS server key, em erott and sub = router id', async () => {
    const id = await srv.create('/edge-routers', { name: 'er-jwt' })
    const r = await edgeRouter(id)
    const header = decodeProtectedHeader(r.enrollmentJwt!)
    expect(header.kid).toBe(srv.server.pki.server.view.fingerprintSha1)
    const key = await importX509(srv.server.pki.server.certPem, header.alg!)
    const { payload } = await jwtVerify(r.enrollmentJwt!, key, { currentDate: new Date(srv.clock.now()) })
    expect(payload).toEqual({
      iss: srv.server.advertisedUrl,
      sub: id,
      aud: [''],
      jti: r.enrollmentToken!,
      exp: Math.floor(Date.parse(r.enrollmentExpiresAt!) / 1000),
      em: 'erott',
      ctrls: [srv.server.ctrlEndpoint],
    })
  })

  it('gives a fabric router one too, shown on /routers', async () => {
    const id = await srv.create('/routers', { name: 'fabric-new' })
    const res = await srv.mgmt.get(`/routers/${id}`)
    expectStatus(res, 200)
    expect(res.body.data).toMatchObject({ isVerified: false, fingerprint: '' })
    expect(res.body.data.enrollmentToken).toMatch(/^[0-9a-f-]{36}$/)
    const { payload } = await jwtVerify(res.body.data.enrollmentJwt, await importX509(srv.server.pki.server.certPem, decodeProtectedHeader(res.body.data.enrollmentJwt).alg!), {
      currentDate: new Date(srv.clock.now()),
    })
    expect(payload).toMatchObject({ sub: id, em: 'erott' })
  })
})

describe('POST /enroll/erott', () => {
  it('issues a client and a server certificate, marks the router verified with its fingerprint and consumes the token', async () => {
    const id = await srv.create('/edge-routers', { name: 'er-enroll' })
    const { enrollmentToken } = await edgeRouter(id)
    const csrs = await routerCsrs(id, { dnsNames: ['er.example.net', 'localhost'], ipAddresses: ['192.0.2.9', '::1'] })
    const res = await enrollErott({ token: enrollmentToken, clientCsr: csrs.client, serverCsr: csrs.server })
    expectStatus(res, 200)
    const { ca, cert, serverCert } = res.body.data
    expect(ca).toBe(srv.server.pki.caBundlePem)
    const [client, clientIssuer] = parseCertificatesPem(cert)
    expect(client.subjectCn).toBe(id)
    expect(client.extKeyUsages).toEqual(['clientAuth'])
    expect(client.dnsNames).toEqual([])
    expect(client.isCa).toBe(false)
    expect(clientIssuer.fingerprintSha1).toBe(srv.server.pki.intermediate.view.fingerprintSha1)
    const [server] = parseCertificatesPem(serverCert)
    expect(server.subjectCn).toBe(id)
    expect(server.extKeyUsages).toEqual(['serverAuth'])
    expect(server.dnsNames).toEqual(['er.example.net', 'localhost'])
    expect(server.ipAddresses).toEqual(['192.0.2.9', '::1'])
    for (const leaf of [cert, serverCert]) {
      expect((await verifyCertificateChain({ leaf, trusted: [srv.server.pki.root.certPem], at: srv.clock.now() })).ok).toBe(true)
    }

    const r = await edgeRouter(id)
    expect(r).toMatchObject({ isVerified: true, fingerprint: client.fingerprintSha1, enrollmentToken: null, enrollmentJwt: null, enrollmentExpiresAt: null })
    const filtered = await srv.mgmt.get(`/edge-routers?filter=${encodeURIComponent(`fingerprint="${client.fingerprintSha1}"`)}`)
    expect(filtered.body.data.map((x: RouterView) => x.id)).toEqual([id])

    expectError(await enrollErott({ token: enrollmentToken, clientCsr: csrs.client, serverCsr: csrs.server }), 400, 'INVALID_ENROLLMENT_TOKEN')
  })

  it('enrolls RSA keys too, and a fabric router through the generic form with certCsr and serverCertCsr', async () => {
    const id = await srv.create('/routers', { name: 'fabric-enroll' })
    const token = (await srv.mgmt.get(`/routers/${id}`)).body.data.enrollmentToken
    const csrs = await routerCsrs(id, { spec: 'rsa-2048' })
    const res = await srv.client.post(`/enroll?method=erott&token=${token}`, { certCsr: csrs.client, serverCertCsr: csrs.server })
    expectStatus(res, 200)
    const [client] = parseCertificatesPem(res.body.data.cert)
    expect(client.publicKeyAlgorithm).toBe('rsa')
    const r = (await srv.mgmt.get(`/routers/${id}`)).body.data
    expect(r).toMatchObject({ isVerified: true, fingerprint: client.fingerprintSha1, enrollmentToken: null })
  })

  describe('the generic POST /enroll?token= without a method (the router token names erott)', () => {
    it('enrolls an edge router from {certCsr, serverCertCsr}: verified with the client certificate, the token consumed', async () => {
      const id = await srv.create('/edge-routers', { name: 'er-generic-no-method' })
      const { enrollmentToken } = await edgeRouter(id)
      const csrs = await routerCsrs(id)
      const res = await srv.client.post(`/enroll?token=${enrollmentToken}`, { certCsr: csrs.client, serverCertCsr: csrs.server })
      expectStatus(res, 200)
      expect(res.body.data.ca).toBe(srv.server.pki.caBundlePem)
      const [client] = parseCertificatesPem(res.body.data.cert)
      const [server] = parseCertificatesPem(res.body.data.serverCert)
      expect(client.subjectCn).toBe(id)
      expect(server.extKeyUsages).toEqual(['serverAuth'])
      expect(await edgeRouter(id)).toMatchObject({ isVerified: true, fingerprint: client.fingerprintSha1, enrollmentToken: null, enrollmentJwt: null })
      expectError(await srv.client.post(`/enroll?token=${enrollmentToken}`, { certCsr: csrs.client, serverCertCsr: csrs.server }), 400, 'INVALID_ENROLLMENT_TOKEN')
      // the enrolled router extends over the certificate it got
      const next = await routerCsrs(id)
      expectStatus(await extend({ certCsr: next.client, serverCertCsr: next.server }, { cert: res.body.data.cert, key: csrs.clientKey }), 200)
    })

    // the generic form's members are the spec's genericEnroll (certCsr or clientCsr, serverCertCsr); serverCsr is the
    // erott form's only
    it('enrolls a fabric router from {clientCsr, serverCertCsr}, with the empty method= too', async () => {
      const id = await srv.create('/routers', { name: 'fabric-generic-no-method' })
      const token = (await srv.mgmt.get(`/routers/${id}`)).body.data.enrollmentToken
      const csrs = await routerCsrs(id)
      const res = await srv.client.post(`/enroll?method=&token=${token}`, { clientCsr: csrs.client, serverCertCsr: csrs.server })
      expectStatus(res, 200)
      const [client] = parseCertificatesPem(res.body.data.cert)
      expect((await srv.mgmt.get(`/routers/${id}`)).body.data).toMatchObject({ isVerified: true, fingerprint: client.fingerprintSha1, enrollmentToken: null })
    })

    it('reads the body as erott does: a PEM body is 400 COULD_NOT_PROCESS_CSR, and the router stays unenrolled', async () => {
      const id = await srv.create('/edge-routers', { name: 'er-generic-pem' })
      const { enrollmentToken } = await edgeRouter(id)
      const csrs = await routerCsrs(id)
      const res = await srv.client('POST', `/enroll?token=${enrollmentToken}`, { rawBody: csrs.client, headers: { 'content-type': 'application/x-pem-file' } })
      expectError(res, 400, 'COULD_NOT_PROCESS_CSR')
      expect(await edgeRouter(id)).toMatchObject({ isVerified: false, fingerprint: '', enrollmentToken })
    })

    it('keeps an explicit method: a router token under method=ott is 400 INVALID_ENROLLMENT_TOKEN', async () => {
      const id = await srv.create('/edge-routers', { name: 'er-generic-explicit-ott' })
      const { enrollmentToken } = await edgeRouter(id)
      const csrs = await routerCsrs(id)
      expectError(await srv.client.post(`/enroll?method=ott&token=${enrollmentToken}`, { clientCsr: csrs.client }), 400, 'INVALID_ENROLLMENT_TOKEN')
      expect(await edgeRouter(id)).toMatchObject({ isVerified: false, enrollmentToken })
    })
  })

  it('lets exactly one of racing redeems of a token through', async () => {
    const id = await srv.create('/edge-routers', { name: 'er-race' })
    const { enrollmentToken } = await edgeRouter(id)
    const csrs = await routerCsrs(id)
    const results = await Promise.all(Array.from({ length: 6 }, () => enrollErott({ token: enrollmentToken, clientCsr: csrs.client, serverCsr: csrs.server })))
    const ok = results.filter((r) => r.status === 200)
    expect(ok.length).toBe(1)
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 400, 'INVALID_ENROLLMENT_TOKEN')
    const [winner] = parseCertificatesPem(ok[0].body.data.cert)
    expect((await edgeRouter(id)).fingerprint).toBe(winner.fingerprintSha1)
  })

  describe('refusals (nothing is written: the router stays unenrolled and its token usable)', () => {
    let id: string
    let token: string
    let csrs: Awaited<ReturnType<typeof routerCsrs>>
    beforeAll(async () => {
      id = await srv.create('/edge-routers', { name: 'er-refused' })
      token = (await edgeRouter(id)).enrollmentToken!
      csrs = await routerCsrs(id)
    })
    const unchanged = async () => {
      const r = await edgeRouter(id)
      expect(r).toMatchObject({ isVerified: false, fingerprint: '', enrollmentToken: token })
    }

    it('refuses a missing or unknown token with INVALID_ENROLLMENT_TOKEN', async () => {
      expectError(await enrollErott({ clientCsr: csrs.client, serverCsr: csrs.server }), 400, 'INVALID_ENROLLMENT_TOKEN')
      expectError(await enrollErott({ token: crypto.randomUUID(), clientCsr: csrs.client, serverCsr: csrs.server }), 400, 'INVALID_ENROLLMENT_TOKEN')
      await unchanged()
    })

    it('refuses an identity enrollment token (another method) with INVALID_ENROLLMENT_TOKEN', async () => {
      const identityId = await srv.create('/identities', { name: 'not-a-router', type: 'Device', isAdmin: false, enrollment: { ott: true } })
      const ott = (await srv.mgmt.get(`/identities/${identityId}`)).body.data.enrollment.ott
      expectError(await enrollErott({ token: ott.token, clientCsr: csrs.client, serverCsr: csrs.server }), 400, 'INVALID_ENROLLMENT_TOKEN')
      // and the router's token is not an ott token
      expectError(await srv.client.post('/enroll/ott', { token, clientCsr: csrs.client }), 400, 'INVALID_ENROLLMENT_TOKEN')
      await unchanged()
    })

    it('refuses a client CSR whose CN is not the router id with EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID', async () => {
      const other = await routerCsrs('someone-else')
      const res = await enrollErott({ token, clientCsr: other.client, serverCsr: csrs.server })
      expectError(res, 400, 'EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID')
      expect(res.body.error.cause.message).toContain('someone-else')
      await unchanged()
    })

    it('refuses missing, garbage, truncated and CA-asking CSRs with COULD_NOT_PROCESS_CSR naming the CSR', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ token, serverCsr: csrs.server }, 'clientCsr'],
        [{ token, clientCsr: csrs.client }, 'serverCsr'],
        [{ token, clientCsr: 'garbage', serverCsr: csrs.server }, 'client CSR'],
        [{ token, clientCsr: csrs.client, serverCsr: csrs.server.slice(0, 200) }, 'server CSR'],
        [{ token, clientCsr: await makeCsrPem(await generateKeyPair(), { commonName: id, askCa: true }), serverCsr: csrs.server }, 'CA rights'],
        // a server certificate must name the router's listeners
        [{ token, clientCsr: csrs.client, serverCsr: await makeCsrPem(await generateKeyPair(), { commonName: id }) }, 'server CSR'],
      ]
      for (const [body, said] of cases) {
        const res = await enrollErott(body)
        expectError(res, 400, 'COULD_NOT_PROCESS_CSR')
        expect(res.body.error.cause.message).toContain(said)
      }
      await unchanged()
    })

  })
})

describe('POST /enroll/extend/router', () => {
  it('answers new certificates over the current client certificate; the previous one stops extending at once', async () => {
    const { id, tls } = await enrolledRouter('er-extend')
    const next = await routerCsrs(id, { dnsNames: ['renewed.example.net'] })
    const res = await extend({ certCsr: next.client, serverCertCsr: next.server }, tls)
    expectStatus(res, 200)
    const [client] = parseCertificatesPem(res.body.data.cert)
    const [server] = parseCertificatesPem(res.body.data.serverCert)
    expect(client.subjectCn).toBe(id)
    expect(server.dnsNames).toEqual(['renewed.example.net'])
    expect((await edgeRouter(id)).fingerprint).toBe(client.fingerprintSha1)

    expectError(await extend({ certCsr: next.client, serverCertCsr: next.server }, tls), 401, 'UNAUTHORIZED')
    // the new certificate extends in turn
    expectStatus(await extend({ certCsr: next.client, serverCertCsr: next.server }, { cert: res.body.data.cert, key: next.clientKey }), 200)
  })

  it('refuses callers without a router certificate, and CSRs as enrollment does', async () => {
    const { id, tls } = await enrolledRouter('er-extend-refused')
    const next = await routerCsrs(id)
    expectError(await extend({ certCsr: next.client, serverCertCsr: next.server }), 401, 'UNAUTHORIZED')
    // an identity's enrolled certificate is not a router's
    const identityId = await srv.create('/identities', { name: 'extend-identity', type: 'Device', isAdmin: false, enrollment: { ott: true } })
    const ott = (await srv.mgmt.get(`/identities/${identityId}`)).body.data.enrollment.ott
    const keys = await generateKeyPair()
    const enrolled = await srv.client.post('/enroll/ott', { token: ott.token, clientCsr: await makeCsrPem(keys) })
    expectStatus(enrolled, 200)
    const identityTls = { cert: enrolled.body.data.cert, key: await exportPrivateKeyPem(keys.privateKey) }
    expectError(await extend({ certCsr: next.client, serverCertCsr: next.server }, identityTls), 401, 'UNAUTHORIZED')

    const before = (await edgeRouter(id)).fingerprint
    const wrongCn = await routerCsrs('not-the-router')
    expectError(await extend({ certCsr: wrongCn.client, serverCertCsr: next.server }, tls), 400, 'EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID')
    expectError(await extend({ certCsr: 'garbage', serverCertCsr: next.server }, tls), 400, 'COULD_NOT_PROCESS_CSR')
    expectError(await extend({ certCsr: next.client }, tls), 400, 'COULD_NOT_VALIDATE')
    expect((await edgeRouter(id)).fingerprint).toBe(before)
  })
})

describe('POST /edge-routers/{id}/re-enroll', () => {
  it('removes the certificate, unverifies the router and gives it a new enrollment; everything else is kept', async () => {
    const { id, tls } = await enrolledRouter('er-reenroll')
    await srv.mgmt.patch(`/edge-routers/${id}`, { roleAttributes: ['west'], cost: 7 })
    const res = await srv.mgmt.post(`/edge-routers/${id}/re-enroll`, {})
    expectStatus(res, 200)
    expect(res.body).toEqual({ data: {}, meta: {} })
    const r = await edgeRouter(id)
    expect(r).toMatchObject({ name: 'er-reenroll', roleAttributes: ['west'], cost: 7, isVerified: false, fingerprint: '' })
    expect(r.enrollmentToken).toMatch(/^[0-9a-f-]{36}$/)
    const { payload } = await jwtVerify(r.enrollmentJwt!, await importX509(srv.server.pki.server.certPem, decodeProtectedHeader(r.enrollmentJwt!).alg!), {
      currentDate: new Date(srv.clock.now()),
    })
    expect(payload).toMatchObject({ sub: id, em: 'erott', jti: r.enrollmentToken })

    // the previous certificate no longer extends; the new token enrolls again
    const next = await routerCsrs(id)
    expectError(await extend({ certCsr: next.client, serverCertCsr: next.server }, tls), 401, 'UNAUTHORIZED')
    expectStatus(await enrollErott({ token: r.enrollmentToken, clientCsr: next.client, serverCsr: next.server }), 200)
    expect((await edgeRouter(id)).isVerified).toBe(true)
  })

  it('replaces an outstanding enrollment: the previous token stops working', async () => {
    const id = await srv.create('/edge-routers', { name: 'er-reenroll-outstanding' })
    const first = (await edgeRouter(id)).enrollmentToken
    expectStatus(await srv.mgmt.post(`/edge-routers/${id}/re-enroll`, {}), 200)
    const second = (await edgeRouter(id)).enrollmentToken
    expect(second).not.toBe(first)
    const csrs = await routerCsrs(id)
    expectError(await enrollErott({ token: first, clientCsr: csrs.client, serverCsr: csrs.server }), 400, 'INVALID_ENROLLMENT_TOKEN')
    expectStatus(await enrollErott({ token: second, clientCsr: csrs.client, serverCsr: csrs.server }), 200)
  })

  it('is 404 for an unknown id or a fabric router, and admin only', async () => {
    expectError(await srv.mgmt.post('/edge-routers/nope/re-enroll', {}), 404, 'NOT_FOUND')
    const fabric = await srv.create('/routers', { name: 'fabric-reenroll' })
    expectError(await srv.mgmt.post(`/edge-routers/${fabric}/re-enroll`, {}), 404, 'NOT_FOUND')
    const id = await srv.create('/edge-routers', { name: 'er-reenroll-anon' })
    expectError(await srv.as(undefined, 'management').post(`/edge-routers/${id}/re-enroll`, {}), 401, 'UNAUTHORIZED')
  })
})

describe('durability', () => {
  it('keeps the enrollment, the verified state and the fingerprint across a restart', async () => {
    const pending = await srv.create('/edge-routers', { name: 'er-durable-pending' })
    const token = (await edgeRouter(pending)).enrollmentToken
    const { id, tls } = await enrolledRouter('er-durable')
    const fingerprint = (await edgeRouter(id)).fingerprint
    await srv.restart()
    expect((await edgeRouter(id)).fingerprint).toBe(fingerprint)
    expect((await edgeRouter(pending)).enrollmentToken).toBe(token)
    const next = await routerCsrs(id)
    expectStatus(await extend({ certCsr: next.client, serverCertCsr: next.server }, tls), 200)
    const csrs = await routerCsrs(pending)
    expectStatus(await enrollErott({ token, clientCsr: csrs.client, serverCsr: csrs.server }), 200)
  })
})

describe('a router enrolled with openssl CSRs, as the README shows', () => {
  it.skipIf(!hasOpenssl)('enrolls, extends and is re-enrolled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeplane-openssl-router-'))
    const at = (f: string) => join(dir, f)
    const read = (f: string) => readFileSync(at(f), 'utf8')
    try {
      const id = await srv.create('/edge-routers', { name: 'edge-1' })
      const token = (await edgeRouter(id)).enrollmentToken
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
      expect((await runOpenssl(['req', '-new', ...ec, '-keyout', at('router.key'), '-subj', `/CN=${id}`, '-out', at('router-client.csr')])).code).toBe(0)
      expect((await runOpenssl(['req', '-new', ...ec, '-keyout', at('router-server.key'), '-subj', `/CN=${id}`,
        '-addext', 'subjectAltName=DNS:edge-1.example.net,IP:192.0.2.10', '-out', at('router-server.csr')])).code).toBe(0)
      const res = await enrollErott({ token, clientCsr: read('router-client.csr'), serverCsr: read('router-server.csr') })
      expectStatus(res, 200)
      const [server] = parseCertificatesPem(res.body.data.serverCert)
      expect(server).toMatchObject({ dnsNames: ['edge-1.example.net'], ipAddresses: ['192.0.2.10'] })

      const renewed = await extend({ certCsr: read('router-client.csr'), serverCertCsr: read('router-server.csr') }, { cert: res.body.data.cert, key: read('router.key') })
      expectStatus(renewed, 200)
      expect((await edgeRouter(id)).fingerprint).toBe(parseCertificatesPem(renewed.body.data.cert)[0].fingerprintSha1)
      // without a body, as curl -X POST sends it
      expectStatus(await srv.mgmt('POST', `/edge-routers/${id}/re-enroll`), 200)
      expect(await edgeRouter(id)).toMatchObject({ isVerified: false, fingerprint: '' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

// last: it moves the clock past every session and enrollment of this server
describe('an expired router enrollment', () => {
  it('is refused with ENROLLMENT_EXPIRED', async () => {
    const late = await srv.create('/edge-routers', { name: 'er-late' })
    const r = await edgeRouter(late)
    const lateCsrs = await routerCsrs(late)
    srv.clock.advance(180 * 60_000)
    expectError(await enrollErott({ token: r.enrollmentToken, clientCsr: lateCsrs.client, serverCsr: lateCsrs.server }), 400, 'ENROLLMENT_EXPIRED')
  })
})
