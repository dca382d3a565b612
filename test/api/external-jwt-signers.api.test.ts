// /external-jwt-signers (seed "External JWT signer"; edge-api management.yml externalJwtSignerCreate/Update/Patch/
// Detail, client.yml listExternalJwtSigners with no security): the Management API's CRUD for admins and the public
// Client API list of enabled signers an SDK reads before it logs in.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { authPolicyBody } from '../support/auth-policy.ts'
import { makeTestCa } from '../support/pki.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

let seq = 0
/** A create body for a certPem signer with a fresh certificate, issuer and name. */
async function certSignerBody(over: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const ca = await makeTestCa({ commonName: `signer cert ${++seq}`, clock: srv.clock })
  return { name: `signer-${seq}`, enabled: true, issuer: `https://idp-${seq}.example.com`, audience: 'edgeplane', certPem: ca.certPem, ...over }
}
function jwksSignerBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  seq++
  return { name: `jwks-${seq}`, enabled: true, issuer: `https://jwks-${seq}.example.com`, audience: 'edgeplane', jwksEndpoint: `https://jwks-${seq}.example.com/keys`, ...over }
}

describe('POST /external-jwt-signers', () => {
  it('creates a certPem signer and shows the certificate facts derived from it', async () => {
    const body = await certSignerBody({ kid: 'kid-a', externalAuthUrl: 'https://idp.example.com/auth', clientId: 'cli', scopes: ['openid'], tags: { team: 'x' } })
    const id = await srv.create('/external-jwt-signers', body)
    const view = (await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data
    expect(view).toMatchObject({
      id,
      name: body.name,
      certPem: body.certPem,
      jwksEndpoint: null,
      enabled: true,
      issuer: body.issuer,
      audience: 'edgeplane',
      kid: 'kid-a',
      claimsProperty: 'sub',
      useExternalId: false,
      externalAuthUrl: 'https://idp.example.com/auth',
      clientId: 'cli',
      scopes: ['openid'],
      targetToken: 'ACCESS',
      commonName: `signer cert ${seq}`,
      tags: { team: 'x' },
    })
    expect(view.fingerprint).toMatch(/^[0-9a-f]{40}$/)
    expect(Date.parse(view.notAfter)).toBeGreaterThan(Date.parse(view.notBefore))
  })

  it('creates a JWKS signer: no certificate facts (the zero time), the endpoint shown', async () => {
    const body = jwksSignerBody({ claimsProperty: 'email', useExternalId: true })
    const id = await srv.create('/external-jwt-signers', body)
    const view = (await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data
    expect(view).toMatchObject({ certPem: null, jwksEndpoint: body.jwksEndpoint, fingerprint: '', commonName: '', kid: '', claimsProperty: 'email', useExternalId: true })
    expect(view.notBefore).toBe('0001-01-01T00:00:00.000Z')
  })

  it('refuses both or neither of certPem and jwksEndpoint with 400 on certPem', async () => {
    for (const body of [await certSignerBody({ jwksEndpoint: 'https://x.example.com/k' }), jwksSignerBody({ jwksEndpoint: null })]) {
      const res = await srv.mgmt.post('/external-jwt-signers', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe('certPem')
    }
  })

  it('refuses a bad PEM with 400 INVALID_CERT_PEM naming certPem, and two certificates too', async () => {
    const two = (await makeTestCa({ clock: srv.clock })).certPem + (await makeTestCa({ clock: srv.clock })).certPem
    for (const certPem of ['not a pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', two]) {
      const res = await srv.mgmt.post('/external-jwt-signers', await certSignerBody({ certPem }))
      expectError(res, 400, 'INVALID_CERT_PEM')
      expect(res.body.error.cause.field).toBe('certPem')
    }
  })

  it('refuses malformed URLs with 400 naming the field; plain http only to a loopback JWKS endpoint', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [jwksSignerBody({ jwksEndpoint: 'not a url' }), 'jwksEndpoint'],
      [jwksSignerBody({ jwksEndpoint: 'ftp://x.example.com/keys' }), 'jwksEndpoint'],
      [jwksSignerBody({ jwksEndpoint: 'http://idp.example.com/keys' }), 'jwksEndpoint'],
      [jwksSignerBody({ externalAuthUrl: '/relative' }), 'externalAuthUrl'],
    ]
    for (const [body, field] of cases) {
      const res = await srv.mgmt.post('/external-jwt-signers', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    }
    await srv.create('/external-jwt-signers', jwksSignerBody({ jwksEndpoint: 'http://127.0.0.1:9/keys' }))
  })

  it('refuses a duplicate name, issuer or kid, an empty issuer or audience, and a missing required member', async () => {
    const first = await certSignerBody({ kid: 'dup-kid' })
    await srv.create('/external-jwt-signers', first)
    const cases: [Record<string, unknown>, string][] = [
      [await certSignerBody({ name: first.name }), 'name'],
      [await certSignerBody({ issuer: first.issuer }), 'issuer'],
      [await certSignerBody({ kid: 'dup-kid' }), 'kid'],
      [await certSignerBody({ issuer: ' ' }), 'issuer'],
      [await certSignerBody({ audience: null }), 'audience'],
    ]
    for (const [body, field] of cases) {
      const res = await srv.mgmt.post('/external-jwt-signers', body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    }
    const { enabled: _, ...noEnabled } = await certSignerBody()
    expectError(await srv.mgmt.post('/external-jwt-signers', noEnabled), 400, 'COULD_NOT_VALIDATE')
  })

  it('needs an admin', async () => {
    expectError(await srv.raw.post('/edge/management/v1/external-jwt-signers', await certSignerBody()), 401, 'UNAUTHORIZED')
  })
})

describe('PUT and PATCH /external-jwt-signers/{id}', () => {
  it('PATCH changes the given fields only; null clears a nullable one; a new certificate gives new facts', async () => {
    const body = await certSignerBody({ kid: 'patch-kid', clientId: 'c1' })
    const id = await srv.create('/external-jwt-signers', body)
    const before = (await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data
    expectStatus(await srv.mgmt.patch(`/external-jwt-signers/${id}`, { enabled: false, clientId: null, name: null }), 200)
    const after = (await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data
    expect(after).toMatchObject({ name: body.name, enabled: false, clientId: '', kid: 'patch-kid', issuer: body.issuer, fingerprint: before.fingerprint })
    const other = await makeTestCa({ commonName: 'rotated', clock: srv.clock })
    expectStatus(await srv.mgmt.patch(`/external-jwt-signers/${id}`, { certPem: other.certPem }), 200)
    const rotated = (await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data
    expect(rotated.commonName).toBe('rotated')
    expect(rotated.fingerprint).not.toBe(before.fingerprint)
  })

  it('PATCH switches a signer from certPem to a JWKS endpoint when certPem is cleared in the same request', async () => {
    const id = await srv.create('/external-jwt-signers', await certSignerBody())
    const res = await srv.mgmt.patch(`/external-jwt-signers/${id}`, { jwksEndpoint: 'https://keys.example.com/jwks' })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expectStatus(await srv.mgmt.patch(`/external-jwt-signers/${id}`, { certPem: null, jwksEndpoint: 'https://keys.example.com/jwks' }), 200)
    expect((await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data).toMatchObject({ certPem: null, fingerprint: '', jwksEndpoint: 'https://keys.example.com/jwks' })
  })

  it('PUT replaces every field: absent optional ones go back to their defaults', async () => {
    const body = await certSignerBody({ kid: 'put-kid', claimsProperty: 'email', useExternalId: true, tags: { a: 'b' } })
    const id = await srv.create('/external-jwt-signers', body)
    const { kid: _k, claimsProperty: _c, useExternalId: _u, tags: _t, ...rest } = body
    expectStatus(await srv.mgmt.put(`/external-jwt-signers/${id}`, { ...rest, name: 'renamed signer' }), 200)
    expect((await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data).toMatchObject({ name: 'renamed signer', kid: '', claimsProperty: 'sub', useExternalId: false, tags: {} })
  })

  it('answers 404 for an unknown signer', async () => {
    expectError(await srv.mgmt.patch('/external-jwt-signers/nope', { enabled: true }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.put('/external-jwt-signers/nope', await certSignerBody()), 404, 'NOT_FOUND')
  })
})

describe('GET and DELETE /external-jwt-signers', () => {
  it('lists with filters, counts in /summary, deletes, and 404s afterwards', async () => {
    const body = await certSignerBody()
    const id = await srv.create('/external-jwt-signers', body)
    const total = (await srv.mgmt.get('/external-jwt-signers')).body.meta.pagination.totalCount
    expect((await srv.mgmt.get('/summary')).body.data.externalJwtSigners).toBe(total)
    const listed = await srv.mgmt.get('/external-jwt-signers?filter=' + encodeURIComponent(`name = "${body.name}"`))
    expectStatus(listed, 200)
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([id])
    expectStatus(await srv.mgmt.del(`/external-jwt-signers/${id}`), 200)
    expectError(await srv.mgmt.get(`/external-jwt-signers/${id}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del(`/external-jwt-signers/${id}`), 404, 'NOT_FOUND')
  })

  it('refuses to delete a signer an auth policy names (allowed signer or second factor) until the policy lets go', async () => {
    const allowed = await srv.create('/external-jwt-signers', await certSignerBody())
    const second = await srv.create('/external-jwt-signers', await certSignerBody())
    const base = authPolicyBody(`names signers ${++seq}`)
    const policyId = await srv.create('/auth-policies', {
      ...base,
      primary: { ...base.primary, extJwt: { allowed: true, allowedSigners: [allowed] } },
      secondary: { requireTotp: false, requireExtJwtSigner: second },
    })
    for (const id of [allowed, second]) {
      const refused = await srv.mgmt.del(`/external-jwt-signers/${id}`)
      expectError(refused, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY')
      expect(JSON.stringify(refused.body.error.cause)).toContain(policyId)
    }
    expectStatus(await srv.mgmt.del(`/auth-policies/${policyId}`), 200)
    expectStatus(await srv.mgmt.del(`/external-jwt-signers/${allowed}`), 200)
    expectStatus(await srv.mgmt.del(`/external-jwt-signers/${second}`), 200)
    // a policy may name only signers that exist
    const unknown = await srv.mgmt.post('/auth-policies', { ...base, name: `names a gone signer ${seq}`, secondary: { requireTotp: false, requireExtJwtSigner: second } })
    expectError(unknown, 400, 'COULD_NOT_VALIDATE')
  })

  it('keeps signers across a restart', async () => {
    const body = await certSignerBody({ kid: 'restart-kid' })
    const id = await srv.create('/external-jwt-signers', body)
    await srv.restart()
    expect((await srv.mgmt.get(`/external-jwt-signers/${id}`)).body.data).toMatchObject({ name: body.name, kid: 'restart-kid', certPem: body.certPem })
    // the kid index was rebuilt: a second signer with that kid is still a duplicate
    expectError(await srv.mgmt.post('/external-jwt-signers', await certSignerBody({ kid: 'restart-kid' })), 400, 'COULD_NOT_VALIDATE')
  })
})

describe('GET /edge/client/v1/external-jwt-signers', () => {
  it('lists the enabled signers without a session, with what a client needs to get a token', async () => {
    const on = await certSignerBody({ externalAuthUrl: 'https://idp.example.com/login', clientId: 'sdk', scopes: ['openid', 'email'] })
    const onId = await srv.create('/external-jwt-signers', on)
    const offId = await srv.create('/external-jwt-signers', await certSignerBody({ enabled: false }))
    const res = await srv.raw.get('/edge/client/v1/external-jwt-signers?limit=500')
    expectStatus(res, 200)
    const ids = res.body.data.map((s: { id: string }) => s.id)
    expect(ids).toContain(onId)
    expect(ids).not.toContain(offId)
    const item = res.body.data.find((s: { id: string }) => s.id === onId)
    expect(item).toMatchObject({ name: on.name, externalAuthUrl: 'https://idp.example.com/login', clientId: 'sdk', scopes: ['openid', 'email'], audience: 'edgeplane' })
    expect(item.certPem).toBeUndefined()
    expect(item.issuer).toBeUndefined()
    expect(res.body.meta.pagination.totalCount).toBe(ids.length)
  })

  it('checks the filter like every list', async () => {
    expectStatus(await srv.raw.get('/edge/client/v1/external-jwt-signers?filter=' + encodeURIComponent('name = "x"')), 200)
    expectError(await srv.raw.get('/edge/client/v1/external-jwt-signers?filter=' + encodeURIComponent('nope = 1')), 400, 'INVALID_FILTER')
  })

  it('is admin only on the Management API', async () => {
    expectError(await srv.raw.get('/edge/management/v1/external-jwt-signers'), 401, 'UNAUTHORIZED')
  })
})
