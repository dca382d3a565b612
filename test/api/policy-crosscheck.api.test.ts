// The precomputed policy index, checked over HTTPS against a brute-force evaluation of the policies: a random graph
// is built and changed through the Management API, and after every round each identity's services, permissions and
// edge routers (Management sub-lists and the Client API) must equal what evaluating every policy directly gives.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'
import { rolesMatch, splitRoles } from '../../src/domain/policy/policy-roles.ts'
import { rng } from '../support/rng.ts'

type Kind = 'identity' | 'service' | 'router'
type Pol = { id: string; kind: 'sp' | 'erp' | 'serp'; type?: 'Dial' | 'Bind'; semantic: 'AllOf' | 'AnyOf'; roles: Partial<Record<Kind, string[]>> }

const ATTRS = ['red', 'green', 'blue', 'gold']
const PATH: Record<Kind, string> = { identity: '/identities', service: '/services', router: '/edge-routers' }
const POL_PATH = { sp: '/service-policies', erp: '/edge-router-policies', serp: '/service-edge-router-policies' } as const
const ROLE_FIELD: Record<Kind, string> = { identity: 'identityRoles', service: 'serviceRoles', router: 'edgeRouterRoles' }

let srv: TestServer
const entities: Record<Kind, Map<string, string[]>> = { identity: new Map(), service: new Map(), router: new Map() }
const policies = new Map<string, Pol>()
const logins = new Map<string, ApiClient>()
const r = rng(20261121)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
const attrs = () => ATTRS.filter(() => r() < 0.4)

beforeAll(async () => {
  srv = await startTestServer()
  // the default admin is an identity too (no attributes): #all policies select it
  const me = await srv.mgmt.get('/current-identity')
  entities.identity.set(me.body.data.id, [])
})
afterAll(async () => {
  await srv.stop()
})

function roles(kind: Kind): string[] {
  const x = r()
  if (x < 0.1) return ['#all']
  const out = new Set<string>()
  for (let i = 0; i < 1 + Math.floor(r() * 2); i++) {
    const ids = [...entities[kind].keys()]
    if (r() < 0.7 || ids.length === 0) out.add('#' + pick(ATTRS))
    else out.add('@' + pick(ids))
  }
  return [...out]
}

async function createEntity(kind: Kind, n: number): Promise<void> {
  const a = attrs()
  const body: Record<string, unknown> = { name: `${kind}-${n}`, roleAttributes: a }
  if (kind === 'identity') Object.assign(body, { type: 'User', isAdmin: false })
  if (kind === 'service') body.encryptionRequired = true
  const res = await srv.mgmt.post(PATH[kind], body)
  expectStatus(res, 201)
  entities[kind].set(res.body.data.id, a)
  if (kind === 'identity' && n < 3) {
    const id = res.body.data.id
    expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId: id, username: `user-${n}`, password: `pass-${n}-secret` }), 201)
    logins.set(id, srv.as(await srv.login(`user-${n}`, `pass-${n}-secret`, 'client'), 'client'))
  }
}

function policyBody(p: Pol): Record<string, unknown> {
  const body: Record<string, unknown> = { name: `pol-${p.id}`, semantic: p.semantic }
  for (const [k, v] of Object.entries(p.roles)) body[ROLE_FIELD[k as Kind]] = v
  if (p.kind === 'sp') Object.assign(body, { type: p.type, postureCheckRoles: [] })
  return body
}

function randomPolicy(id: string, kind: Pol['kind']): Pol {
  const semantic = r() < 0.5 ? 'AllOf' : 'AnyOf'
  if (kind === 'sp') return { id, kind, type: r() < 0.5 ? 'Dial' : 'Bind', semantic, roles: { identity: roles('identity'), service: roles('service') } }
  if (kind === 'erp') return { id, kind, semantic, roles: { identity: roles('identity'), router: roles('router') } }
  return { id, kind, semantic, roles: { service: roles('service'), router: roles('router') } }
}

const selects = (p: Pol, kind: Kind, id: string) => {
  const rl = p.roles[kind]
  return rl !== undefined && entities[kind].has(id) && rolesMatch(splitRoles(rl), p.semantic, id, entities[kind].get(id)!)
}
const sorted = (xs: Iterable<string>) => [...xs].sort()
const permsOf = (i: string, s: string) =>
  (['Bind', 'Dial'] as const).filter((t) => [...policies.values()].some((p) => p.kind === 'sp' && p.type === t && selects(p, 'identity', i) && selects(p, 'service', s)))
const joined = (kind: 'erp' | 'serp', k1: Kind, id: string, k2: Kind) =>
  sorted([...entities[k2].keys()].filter((o) => [...policies.values()].some((p) => p.kind === kind && selects(p, k1, id) && selects(p, k2, o))))

async function ids(path: string, client: ApiClient = srv.mgmt): Promise<string[]> {
  const res = await client.get(`${path}${path.includes('?') ? '&' : '?'}limit=-1`)
  expectStatus(res, 200)
  const data = res.body.data.edgeRouters ?? res.body.data
  return sorted(data.map((x: { id?: string; name: string }) => x.id ?? x.name))
}

async function crossCheck(round: number): Promise<void> {
  for (const i of entities.identity.keys()) {
    const want = sorted([...entities.service.keys()].filter((s) => permsOf(i, s).length > 0))
    expect({ round, i, services: await ids(`/identities/${i}/services`) }).toEqual({ round, i, services: want })
    expect({ round, i, routers: await ids(`/identities/${i}/edge-routers`) }).toEqual({ round, i, routers: joined('erp', 'identity', i, 'router') })
    const c = logins.get(i)
    if (c) {
      const res = await c.get('/services?limit=-1')
      expectStatus(res, 200)
      const got = Object.fromEntries(res.body.data.map((s: { id: string; permissions: string[] }) => [s.id, s.permissions]))
      expect({ round, i, got }).toEqual({ round, i, got: Object.fromEntries(want.map((s) => [s, permsOf(i, s)])) })
    }
  }
  for (const s of entities.service.keys()) {
    expect({ round, s, routers: await ids(`/services/${s}/edge-routers`) }).toEqual({ round, s, routers: joined('serp', 'service', s, 'router') })
    expect({ round, s, identities: await ids(`/services/${s}/identities`) }).toEqual({
      round,
      s,
      identities: sorted([...entities.identity.keys()].filter((i) => permsOf(i, s).length > 0)),
    })
  }
}

describe('policy index over HTTPS', () => {
  it('equals a brute-force evaluation after every round of random changes', async () => {
    for (let n = 0; n < 8; n++) await createEntity('identity', n)
    for (let n = 0; n < 6; n++) await createEntity('service', n)
    for (let n = 0; n < 4; n++) await createEntity('router', n)
    for (let round = 0; round < 6; round++) {
      // new and changed policies of every kind
      for (let k = 0; k < 4; k++) {
        const kind = pick(['sp', 'erp', 'serp'] as const)
        const p = randomPolicy('', kind)
        const res = await srv.mgmt.post(POL_PATH[kind], policyBody({ ...p, id: `${round}-${k}` }))
        expectStatus(res, 201)
        policies.set(res.body.data.id, { ...p, id: res.body.data.id })
      }
      const existing = [...policies.values()]
      const changed = pick(existing)
      const next = { ...randomPolicy(changed.id, changed.kind), id: changed.id }
      expectStatus(await srv.mgmt.put(`${POL_PATH[changed.kind]}/${changed.id}`, policyBody(next)), 200)
      policies.set(changed.id, next)
      if (round % 2 === 1) {
        const gone = pick([...policies.values()])
        expectStatus(await srv.mgmt.del(`${POL_PATH[gone.kind]}/${gone.id}`), 200)
        policies.delete(gone.id)
      }
      // entities change attributes
      for (const kind of ['identity', 'service', 'router'] as const) {
        const id = pick([...entities[kind].keys()])
        const a = attrs()
        expectStatus(await srv.mgmt.patch(`${PATH[kind]}/${id}`, { roleAttributes: a }), 200)
        entities[kind].set(id, a)
      }
      await crossCheck(round)
    }
    // after a restart the index is rebuilt from LMDB and answers the same (API sessions survive the restart too)
    await srv.restart()
    await crossCheck(99)
  }, 120_000)
})
