// Policy insight (edgeplane extensions, issue 15): GET /identities/{id}/access/{serviceId} and
// /identities/{id}/access/edge-routers/{edgeRouterId} explain access with the smallest verified fixes; POST
// /policy-previews answers what a write would do without writing (the LMDB transaction id does not move), and the
// write applied afterwards makes exactly the previewed difference. Answers are checked against their TypeBox schemas
// (the official spec has no such operations; they are listed in EDGEPLANE_EXTENSIONS).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import type { TSchema } from '@sinclair/typebox'
import { open, type RootDatabase } from 'lmdb'
import { join } from 'node:path'
import { PolicyPreview, RouterAccessExplanation, ServiceAccessExplanation } from '../../schemas/insight.ts'
import { expectError, expectStatus, startTestServer, type ApiResponse, type TestServer } from '../support/harness.ts'

let srv: TestServer
let env: RootDatabase
const ids: Record<string, string> = {}

function body<T = any>(res: ApiResponse, schema: TSchema, status = 200): T {
  expectStatus(res, status)
  const errors = [...Value.Errors(schema, res.body.data)].map((e) => `${e.path}: ${e.message}`)
  expect(errors).toEqual([])
  return res.body.data as T
}

const lastTxn = () => (env.getStats() as { lastTxnId: number }).lastTxnId

beforeAll(async () => {
  srv = await startTestServer()
  env = open({ path: join(srv.dataDir, 'edgeplane.mdb'), readOnly: true })
  ids.laptop = await srv.create('/identities', { name: 'laptop', type: 'User', isAdmin: false, roleAttributes: ['employees'] })
  ids.other = await srv.create('/identities', { name: 'other', type: 'User', isAdmin: false, roleAttributes: ['employees', 'finance'] })
  ids.payroll = await srv.create('/services', { name: 'payroll', encryptionRequired: true, roleAttributes: ['finance-apps'] })
  ids.wiki = await srv.create('/services', { name: 'wiki', encryptionRequired: true, roleAttributes: ['public'] })
  ids.payrollDial = await srv.create('/service-policies', {
    name: 'payroll-dial', type: 'Dial', semantic: 'AllOf', identityRoles: ['#employees', '#finance'], serviceRoles: ['#finance-apps'],
  })
  ids.wikiDial = await srv.create('/service-policies', {
    name: 'wiki-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#employees', '#contractors'], serviceRoles: ['#public'],
  })
  ids.er1 = await srv.create('/edge-routers', { name: 'er1', roleAttributes: ['eu'] })
  ids.er2 = await srv.create('/edge-routers', { name: 'er2', roleAttributes: ['us'] })
  ids.serp = await srv.create('/service-edge-router-policies', { name: 'all-services-eu', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#eu'] })
  ids.erp = await srv.create('/edge-router-policies', { name: 'eu-staff', semantic: 'AllOf', identityRoles: ['#eu-staff'], edgeRouterRoles: ['#eu'] })
}, 30_000)

afterAll(async () => {
  env.close()
  await srv.stop()
})

describe('GET /identities/{id}/access/{serviceId}', () => {
  it('case=names the missing role of an AllOf policy and proposes the smallest verified fixes', async () => {
    const e = body(await srv.mgmt.get(`/identities/${ids.laptop}/access/${ids.payroll}`), ServiceAccessExplanation)
    expect(e.dial.allowed).toBe(false)
    expect(e.dial.policies).toHaveLength(1)
    expect(e.dial.policies[0]).toMatchObject({ policy: { id: ids.payrollDial, name: 'payroll-dial' }, matches: false, matchedBy: null, missingRoles: ['#finance'] })
    expect(e.dial.fixes.map((f: any) => [f.action, f.attributes, f.policies.map((p: any) => p.id)])).toEqual([
      ['add-attributes', ['finance'], [ids.payrollDial]],
      ['name-in-policy', [], [ids.payrollDial]],
    ])
    // no Bind policy names the service: only a new policy would do
    expect(e.bind).toMatchObject({ allowed: false, policies: [] })
    expect(e.bind.fixes.map((f: any) => f.action)).toEqual(['create-policy'])
  })

  it('case=an AnyOf policy is satisfied by one attribute; the edge router side shows policies and the fix that gives a common router', async () => {
    const e = body(await srv.mgmt.get(`/identities/${ids.laptop}/access/${ids.wiki}`), ServiceAccessExplanation)
    expect(e.dial.allowed).toBe(true)
    expect(e.dial.policies[0]).toMatchObject({ matches: true, matchedBy: 'attributes', missingRoles: [] })
    expect(e.dial.fixes).toEqual([])
    expect(e.edgeRouters).toMatchObject({ identityEdgeRouterPolicies: [], identityRouterCount: 0, serviceRouterCount: 1, commonRouters: [] })
    expect(e.edgeRouters.serviceEdgeRouterPolicies.map((p: any) => p.id)).toEqual([ids.serp])
    expect(e.edgeRouters.fixes.map((f: any) => [f.action, f.attributes])).toEqual([['add-attributes', ['eu-staff']], ['name-in-policy', []]])
  })

  it('case=applying a proposed fix grants access', async () => {
    expectStatus(await srv.mgmt.patch(`/identities/${ids.laptop}`, { roleAttributes: ['employees', 'finance', 'eu-staff'] }), 200)
    const e = body(await srv.mgmt.get(`/identities/${ids.laptop}/access/${ids.payroll}`), ServiceAccessExplanation)
    expect(e.dial).toMatchObject({ allowed: true, fixes: [] })
    expect(e.edgeRouters.commonRouters.map((r: any) => [r.id, r.isOnline])).toEqual([[ids.er1, false]])
    expect(e.edgeRouters.fixes).toEqual([])
    expectStatus(await srv.mgmt.patch(`/identities/${ids.laptop}`, { roleAttributes: ['employees'] }), 200)
  })

  it('case=shows the posture checks gating a granting policy, per API session of the identity', async () => {
    const checkId = await srv.create('/posture-checks', { typeId: 'MFA', name: 'mfa-for-wiki', roleAttributes: ['mfa'] })
    expectStatus(await srv.mgmt.patch(`/service-policies/${ids.wikiDial}`, { postureCheckRoles: ['#mfa'] }), 200)
    expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId: ids.laptop, username: 'laptop', password: 'laptop-pass-1' }), 201)
    const token = await srv.login('laptop', 'laptop-pass-1', 'client')
    const sessionId = (await srv.as(token, 'client').get('/current-api-session')).body.data.id
    const e = body(await srv.mgmt.get(`/identities/${ids.laptop}/access/${ids.wiki}`), ServiceAccessExplanation)
    expect(e.dial.policies[0].postureChecks).toEqual([
      expect.objectContaining({ postureCheck: expect.objectContaining({ id: checkId }), typeId: 'MFA', apiSessions: [{ apiSessionId: sessionId, isPassing: false }] }),
    ])
    expectStatus(await srv.mgmt.patch(`/service-policies/${ids.wikiDial}`, { postureCheckRoles: [] }), 200)
  })

  it('case=404 for an unknown identity or service', async () => {
    expectError(await srv.mgmt.get(`/identities/nope/access/${ids.payroll}`), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.get(`/identities/${ids.laptop}/access/nope`), 404, 'NOT_FOUND')
  })

  it('case=refuses a non-admin session', async () => {
    const res = await srv.raw.get(`/edge/management/v1/identities/${ids.laptop}/access/${ids.payroll}`)
    expect(res.status).toBe(401)
  })
})

describe('GET /identities/{id}/access/edge-routers/{edgeRouterId}', () => {
  it('case=explains a refused router and, once fixed, an allowed one', async () => {
    const no = body(await srv.mgmt.get(`/identities/${ids.laptop}/access/edge-routers/${ids.er1}`), RouterAccessExplanation)
    expect(no).toMatchObject({ allowed: false, serviceCount: 0 })
    expect(no.policies).toEqual([expect.objectContaining({ policy: expect.objectContaining({ id: ids.erp }), matches: false, missingRoles: ['#eu-staff'] })])
    expect(no.fixes[0]).toMatchObject({ action: 'add-attributes', attributes: ['eu-staff'] })
    const other = body(await srv.mgmt.get(`/identities/${ids.laptop}/access/edge-routers/${ids.er2}`), RouterAccessExplanation)
    expect(other).toMatchObject({ allowed: false, policies: [] })
    expect(other.fixes.map((f: any) => f.action)).toEqual(['create-policy'])
    expectStatus(await srv.mgmt.patch(`/identities/${ids.laptop}`, { roleAttributes: ['employees', 'eu-staff'] }), 200)
    const yes = body(await srv.mgmt.get(`/identities/${ids.laptop}/access/edge-routers/${ids.er1}`), RouterAccessExplanation)
    // wiki over er1 (payroll needs #finance)
    expect(yes).toMatchObject({ allowed: true, fixes: [], serviceCount: 1 })
    expectStatus(await srv.mgmt.patch(`/identities/${ids.laptop}`, { roleAttributes: ['employees'] }), 200)
  })
})

/** Every (identity, service) → permissions and whether routers are in common, from the real policy advice. */
async function accessMap(): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const identities = (await srv.mgmt.get('/identities?limit=500')).body.data as { id: string }[]
  const services = (await srv.mgmt.get('/services?limit=500')).body.data as { id: string }[]
  for (const i of identities) {
    for (const s of services) {
      const a = (await srv.mgmt.get(`/identities/${i.id}/policy-advice/${s.id}`)).body.data
      const perms = [...(a.isBindAllowed ? ['Bind'] : []), ...(a.isDialAllowed ? ['Dial'] : [])]
      if (perms.length > 0) out.set(`${i.id} ${s.id}`, `${perms.join(',')} ${a.commonRouters.length > 0 ? 'routers' : 'none'}`)
    }
  }
  return out
}

function differenceOf(before: Map<string, string>, after: Map<string, string>): string[] {
  const rows: string[] = []
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const [bp = '', br = 'none'] = (before.get(key) ?? '').split(' ')
    const [ap = '', ar = 'none'] = (after.get(key) ?? '').split(' ')
    for (const p of ['Bind', 'Dial']) {
      const was = bp.split(',').includes(p)
      const is = ap.split(',').includes(p)
      if (was !== is) rows.push(`${key} ${is ? 'gained' : 'lost'} ${p}`)
    }
    if (bp !== '' && ap !== '' && br === 'routers' && ar === 'none') rows.push(`${key} routers-lost`)
  }
  return rows.sort()
}

const rowsOf = (p: any): string[] =>
  p.changes.map((c: any) => `${c.identity.id} ${c.service.id} ${c.change === 'routers-lost' ? 'routers-lost' : `${c.change} ${c.permission}`}`).sort()

describe('POST /policy-previews', () => {
  it('case=previews a policy update without writing, and applying it makes exactly that difference', async () => {
    const change = { operation: 'patch', entityType: 'service-policies', id: ids.payrollDial, body: { identityRoles: ['#employees'] } }
    const before = await accessMap()
    const txn = lastTxn()
    const p = body(await srv.mgmt.post('/policy-previews', change), PolicyPreview)
    expect(lastTxn()).toBe(txn)
    expect(p.totals).toMatchObject({ dialGained: 1, dialLost: 0, identities: 1, services: 1 })
    expect(rowsOf(p)).toEqual([`${ids.laptop} ${ids.payroll} gained Dial`])
    expect(p.changes[0].identity.name).toBe('laptop')
    expectStatus(await srv.mgmt.patch(`/service-policies/${ids.payrollDial}`, change.body), 200)
    expect(differenceOf(before, await accessMap())).toEqual(rowsOf(p))
  })

  it('case=previews a delete, an identity attribute change and a router change, each equal to its applied difference', async () => {
    const cases: { change: any; apply: () => Promise<ApiResponse> }[] = [
      { change: { operation: 'patch', entityType: 'edge-routers', id: ids.er1, body: { roleAttributes: ['us'] } }, apply: () => srv.mgmt.patch(`/edge-routers/${ids.er1}`, { roleAttributes: ['us'] }) },
      { change: { operation: 'delete', entityType: 'service-edge-router-policies', id: ids.serp }, apply: () => srv.mgmt.del(`/service-edge-router-policies/${ids.serp}`) },
      { change: { operation: 'update', entityType: 'identities', id: ids.other, body: { name: 'other', type: 'User', isAdmin: false, roleAttributes: ['contractors'] } },
        apply: () => srv.mgmt.put(`/identities/${ids.other}`, { name: 'other', type: 'User', isAdmin: false, roleAttributes: ['contractors'] }) },
      { change: { operation: 'create', entityType: 'service-policies', body: { name: 'wiki-bind', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#all'], serviceRoles: [`@${ids.wiki}`] } },
        apply: () => srv.mgmt.post('/service-policies', { name: 'wiki-bind', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#all'], serviceRoles: [`@${ids.wiki}`] }) },
    ]
    // give the pairs routers first, so that removing the SERP has something to take
    ids.serp2 = await srv.create('/service-edge-router-policies', { name: 'all-services-us', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#us'] })
    await srv.create('/edge-router-policies', { name: 'everyone-eu', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#eu'] })
    for (const c of cases) {
      const before = await accessMap()
      const txn = lastTxn()
      const p = body(await srv.mgmt.post('/policy-previews', c.change), PolicyPreview)
      expect(lastTxn()).toBe(txn)
      expect(p.totals.dialGained + p.totals.dialLost + p.totals.bindGained + p.totals.bindLost + p.totals.routersLost).toBe(p.pagination.totalCount)
      const res = await c.apply()
      expect(res.status).toBeLessThan(300)
      if (c.change.entityType === 'edge-routers') expect(p.totals.routersLost).toBeGreaterThan(0)
      expect({ change: c.change, rows: differenceOf(before, await accessMap()) }).toEqual({ change: c.change, rows: rowsOf(p) })
    }
  })

  it('case=pages the changes and summarises them per service and identity role attribute', async () => {
    for (let n = 0; n < 5; n++) await srv.create('/identities', { name: `bulk-${n}`, type: 'User', isAdmin: false, roleAttributes: ['bulk'] })
    const change = { operation: 'create', entityType: 'service-policies', body: { name: 'bulk-dial', type: 'Dial', semantic: 'AllOf', identityRoles: ['#bulk'], serviceRoles: ['#all'] } }
    const all = body(await srv.mgmt.post('/policy-previews?limit=1000', change), PolicyPreview)
    expect(all.totals.dialGained).toBe(10)
    const pages: string[] = []
    for (let offset = 0; offset < 10; offset += 3) pages.push(...rowsOf(body(await srv.mgmt.post(`/policy-previews?limit=3&offset=${offset}`, change), PolicyPreview)))
    expect(pages.sort()).toEqual(rowsOf(all))
    const s = body(await srv.mgmt.post('/policy-previews?summary=true', change), PolicyPreview)
    expect(s.changes).toEqual([])
    expect(s.summary!.services.map((x: any) => [x.service.name, x.dialGained])).toEqual(
      [[ids.payroll, 'payroll'], [ids.wiki, 'wiki']].sort(([a], [b]) => (a! < b! ? -1 : 1)).map(([, name]) => [name, 5]),
    )
    expect(s.summary!.identityRoleAttributes).toEqual([{ attribute: 'bulk', gaining: 5, losing: 0, losingRouters: 0 }])
  })

  it('case=refuses what the real operation refuses, with the same errors, and writes nothing', async () => {
    const txn = lastTxn()
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'create', entityType: 'service-policies', body: { name: 'payroll-dial', type: 'Dial', semantic: 'AllOf', identityRoles: [], serviceRoles: [] } }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'create', entityType: 'service-policies', body: { name: 'x', type: 'Dial', semantic: 'AllOf', identityRoles: ['nope'] } }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'create', entityType: 'edge-router-policies', body: { name: 'x', identityRoles: ['@ghost'] } }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'create', entityType: 'services', body: { name: 'no-encryption-flag' } }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'patch', entityType: 'identities', id: ids.laptop, body: { roleAttributes: ['#bad'] } }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'delete', entityType: 'service-policies', id: 'nope' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'patch', entityType: 'edge-routers', id: 'nope', body: {} }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'update', entityType: 'services', body: {} }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/policy-previews', { operation: 'rename', entityType: 'services', id: ids.wiki }), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.post('/policy-previews?limit=x', { operation: 'delete', entityType: 'services', id: ids.wiki }), 400, 'COULD_NOT_VALIDATE')
    expect(lastTxn()).toBe(txn)
  })
})
