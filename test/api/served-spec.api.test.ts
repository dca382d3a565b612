// The spec edgeplane serves at /specs/{id}/spec (generated from the route records, src/http/http-openapi.ts) says
// only what the official edge-api specs say: each operation exists there with the same method, path and path and
// query parameter names, or is one of edgeplane's extensions, all listed in EDGEPLANE_EXTENSIONS. Issue 9, part 1.
// And it says all of it: every operation of the official specs is served (issue 29 §2), so none can go missing.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { EDGEPLANE_EXTENSIONS } from '../../src/http/http-openapi.ts'
import { findOperation, specDocument, type SpecDocument, type SpecName, type SpecParameter } from '../support/spec-check.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

interface ServedSpec {
  basePath: string
  paths: Record<string, Record<string, { parameters: SpecParameter[] }>>
}

async function served(api: SpecName): Promise<ServedSpec> {
  const res = await srv.raw.get(`/edge/${api}/v1/specs/edge-${api}/spec`)
  expectStatus(res, 200)
  return JSON.parse(res.body.data) as ServedSpec
}

const names = (params: readonly SpecParameter[], where: SpecParameter['in']): string[] =>
  [...new Set(params.filter((p) => p.in === where).map((p) => p.name))].sort()

/** What the served operation `method path` says beyond the official spec (empty when it agrees). */
function disagreements(api: SpecName, method: string, path: string, params: readonly SpecParameter[]): string[] {
  const where = `${api} ${method} ${path}`
  const official = findOperation(api, method, path)
  const extension = EDGEPLANE_EXTENSIONS.operations.find((e) => e.api === api && e.method === method && e.path === path)
  if (extension) return official ? [`${where} is listed as an extension but the official spec has it`] : []
  if (!official) return [`${where}: no such operation in the official spec, and not listed in EDGEPLANE_EXTENSIONS`]
  if (official.template !== path) return [`${where}: the official spec names the path ${official.template}`]
  const out: string[] = []
  const pathParams = names(params, 'path')
  if (pathParams.join() !== names(official.parameters, 'path').join()) {
    out.push(`${where}: path parameters ${pathParams} where the official spec has ${names(official.parameters, 'path')}`)
  }
  const query = names(params, 'query')
  const officialQuery = names(official.parameters, 'query')
  const isList = query.includes('limit')
  const added = EDGEPLANE_EXTENSIONS.queryParameters.filter((e) => e.api === api && e.method === method && e.path === path).map((e) => e.name)
  const allowed = new Set([...officialQuery, ...added, ...(isList ? EDGEPLANE_EXTENSIONS.listQuery.names : [])])
  const extra = query.filter((q) => !allowed.has(q))
  const missing = officialQuery.filter((q) => !query.includes(q))
  if (extra.length > 0) out.push(`${where}: query parameters ${extra} that the official spec does not have`)
  if (missing.length > 0) out.push(`${where}: does not describe the official query parameters ${missing}`)
  return out
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']

/** The operations (`METHOD /path`) of the official document that the served one does not describe. */
function missingOperations(official: SpecDocument, servedSpec: Pick<ServedSpec, 'paths'>): string[] {
  const out: string[] = []
  for (const [path, item] of Object.entries(official.paths)) {
    for (const method of Object.keys(item)) {
      if (HTTP_METHODS.includes(method) && !servedSpec.paths[path]?.[method]) out.push(`${method.toUpperCase()} ${path}`)
    }
  }
  return out
}

describe('the served specs against the official ones', () => {
  for (const api of ['client', 'management'] as const) {
    it(`describes every ${api} operation of the official spec (method and path)`, async () => {
      const official = specDocument(api)
      const total = Object.values(official.paths).flatMap((item) => Object.keys(item).filter((m) => HTTP_METHODS.includes(m))).length
      expect(total).toBeGreaterThan(api === 'client' ? 50 : 190)
      expect(missingOperations(official, await served(api))).toEqual([])
    })
  }

  it('finds an official operation that the served spec leaves out', () => {
    const official = { paths: { '/a': { get: {}, post: {}, parameters: [] }, '/b/{id}': { delete: {} } }, definitions: {} } as unknown as SpecDocument
    expect(missingOperations(official, { paths: { '/a': { get: { parameters: [] } } } })).toEqual(['POST /a', 'DELETE /b/{id}'])
    expect(missingOperations(official, { paths: { '/a': { get: { parameters: [] }, post: { parameters: [] } }, '/b/{id}': { delete: { parameters: [] } } } })).toEqual([])
  })

  for (const api of ['client', 'management'] as const) {
    it(`describes only ${api} operations of the official spec, with its path and query parameter names`, async () => {
      const spec = await served(api)
      expect(spec.basePath).toBe(`/edge/${api}/v1`)
      const problems: string[] = []
      let operations = 0
      for (const [path, item] of Object.entries(spec.paths)) {
        for (const [method, op] of Object.entries(item)) {
          operations++
          problems.push(...disagreements(api, method.toUpperCase(), path, op.parameters))
        }
      }
      expect(problems).toEqual([])
      expect(operations).toBeGreaterThan(api === 'client' ? 20 : 100)
    })
  }

  it('lists as extensions only operations that edgeplane serves', async () => {
    const specs = { client: await served('client'), management: await served('management') }
    const stale = EDGEPLANE_EXTENSIONS.operations.filter((e) => !specs[e.api].paths[e.path]?.[e.method.toLowerCase()])
    expect(stale).toEqual([])
    const staleQueries = EDGEPLANE_EXTENSIONS.queryParameters.filter(
      (e) => !specs[e.api].paths[e.path]?.[e.method.toLowerCase()]?.parameters.some((p) => p.in === 'query' && p.name === e.name),
    )
    expect(staleQueries).toEqual([])
  })

  it('finds an operation that is not in the official spec, or has parameters it does not have', () => {
    expect(disagreements('management', 'GET', '/no-such-list', [])).toEqual([
      'management GET /no-such-list: no such operation in the official spec, and not listed in EDGEPLANE_EXTENSIONS',
    ])
    const id = { name: 'id', in: 'path' } as const
    expect(disagreements('management', 'GET', '/identities/{id}', [id, { name: 'verbose', in: 'query' }])).toEqual([
      'management GET /identities/{id}: query parameters verbose that the official spec does not have',
    ])
    expect(disagreements('management', 'GET', '/identities/{id}', [])).toEqual([
      'management GET /identities/{id}: path parameters  where the official spec has id',
    ])
    expect(disagreements('client', 'GET', '/services', [{ name: 'limit', in: 'query' }, { name: 'sort', in: 'query' }])).toEqual([
      'client GET /services: does not describe the official query parameters configTypes,filter,offset,roleFilter,roleSemantic',
    ])
  })
})
