// The official fabric API document the spec check reads is vendored in test/fixtures/fabric-api/
// (scripts/vendor-fabric-api.ts), so a clone needs nothing beside it (issue 31, part 1). Its shared `parameters` and
// `responses`, which operations name by `$ref`, are kept and read through the reference. The comparison with upstream
// runs when EDGEPLANE_FABRIC_API_UPSTREAM names a checkout of openziti/ziti (or a folder holding swagger.yml); without
// it, it is skipped and the rest still runs.
import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { compactSpec, renderCompactSpec } from '../../../scripts/vendor-edge-api.ts'
import { FABRIC_VENDORED_DIR, FABRIC_VENDORED_FILE, fabricUpstreamIn } from '../../../scripts/vendor-fabric-api.ts'
import { checkAnswer, checkerView, FABRIC_SPEC_DIR, findOperation, type SpecDocument } from '../../support/spec-check.ts'

const given = process.env.EDGEPLANE_FABRIC_API_UPSTREAM
const UPSTREAM = given !== undefined && given !== '' ? fabricUpstreamIn(given) : undefined

const vendoredText = (): string => readFileSync(FABRIC_VENDORED_FILE, 'utf8')
const answer = (method: string, url: string, status: number, body: unknown) =>
  checkAnswer({ method, url, status, contentType: 'application/json', text: JSON.stringify(body) })

describe('the vendored fabric document', () => {
  it('is where the spec check reads it', () => {
    expect(FABRIC_SPEC_DIR).toBe(FABRIC_VENDORED_DIR)
  })

  it('is a swagger 2.0 document of /fabric/v1 with paths and definitions, in the form the script writes, and without prose', () => {
    const text = vendoredText()
    const doc = JSON.parse(text) as Record<string, unknown>
    expect(doc.swagger).toBe('2.0')
    expect(doc.basePath).toBe('/fabric/v1')
    expect(Object.keys(doc.paths as object).length).toBeGreaterThan(20)
    expect(Object.keys(doc.definitions as object).length).toBeGreaterThan(50)
    expect(Object.keys(doc.responses as object)).toContain('listLinks')
    expect(`${JSON.stringify(doc, null, 1)}\n`).toBe(text)
    expect(compactSpec(doc)).toEqual(doc)
  })

  it('says where it comes from: upstream repository, commit, license, how to regenerate', () => {
    const source = readFileSync(`${FABRIC_VENDORED_DIR}/SOURCE`, 'utf8')
    expect(source).toContain('https://github.com/openziti/ziti')
    expect(source).toContain('controller/specs/swagger.yml')
    expect(source).toMatch(/Commit: +804f55abb\b/)
    expect(source).toContain('Apache-2.0')
    expect(source).toContain('bun run scripts/vendor-fabric-api.ts')
    expect(readFileSync(`${FABRIC_VENDORED_DIR}/LICENSE`, 'utf8')).toContain('Apache License')
  })

  it('gives the checker every operation with its parameters and responses read through their $ref', () => {
    const view = checkerView('fabric', JSON.parse(vendoredText()) as SpecDocument) as { operations: { template: string; method: string; parameters: unknown[]; responses: Record<string, unknown> }[] }
    expect(view.operations.length).toBeGreaterThan(35)
    const listLinks = view.operations.find((o) => o.method === 'GET' && o.template === '/links')!
    expect(listLinks.parameters).toEqual([{ name: 'limit', in: 'query' }, { name: 'offset', in: 'query' }, { name: 'filter', in: 'query' }])
    expect(listLinks.responses['200']).toEqual({ $ref: 'fabric:listLinksEnvelope' })
    expect(findOperation('fabric', 'DELETE', '/circuits/abc')?.parameters).toEqual([{ name: 'id', in: 'path' }, { name: 'options', in: 'body' }])
  })

  it('checks the answers under /fabric/v1 against it', () => {
    const link = {
      id: 'l1', protocol: 'tls', state: 'Connected', down: false, staticCost: 1, sourceLatency: 0, destLatency: 0, cost: 1, iteration: 1,
      sourceRouter: { entity: 'routers', id: 'r1', name: 'a', _links: { self: { href: './routers/r1' } } },
      destRouter: { entity: 'routers', id: 'r2', name: 'b', _links: { self: { href: './routers/r2' } } },
    }
    expect(answer('GET', '/fabric/v1/links/l1', 200, { data: link, meta: {} })).toEqual({ kind: 'checked', operation: 'fabric GET /links/{id} → 200' })
    expect(() => answer('GET', '/fabric/v1/links/l1', 200, { data: { ...link, staticCost: 'one' }, meta: {} })).toThrow('at /data/staticCost: must be integer')
    expect(() => answer('GET', '/fabric/v1/links', 200, { meta: {} })).toThrow("must have required property 'data'")
    // an error status the operation does not list is the error envelope
    expect(answer('PATCH', '/fabric/v1/links/l1', 409, { error: { code: 'X', message: 'y', requestId: 'r' }, meta: {} }).kind).toBe('checked')
    expect(() => answer('GET', '/fabric/v1/no-such-thing', 200, { data: {}, meta: {} })).toThrow('the official fabric spec has no such operation')
  })

  it.skipIf(UPSTREAM === undefined)('is what the script makes of the upstream document, byte for byte', () => {
    expect(renderCompactSpec(readFileSync(UPSTREAM!, 'utf8'))).toBe(vendoredText())
  })

  it.skipIf(UPSTREAM === undefined)('gives the checker the same operations, parameters, response schemas and definitions as the upstream YAML', () => {
    const upstream = Bun.YAML.parse(readFileSync(UPSTREAM!, 'utf8')) as SpecDocument
    expect(checkerView('fabric', JSON.parse(vendoredText()) as SpecDocument)).toEqual(checkerView('fabric', upstream))
  })
})

describe('the compact form of shared parameters and responses', () => {
  const upstream = {
    swagger: '2.0',
    basePath: '/fabric/v1',
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          parameters: [{ $ref: '#/parameters/limit' }],
          responses: { '200': { $ref: '#/responses/listThings' }, '401': { description: 'prose', schema: { $ref: '#/definitions/thing' } } },
        },
      },
    },
    parameters: { limit: { name: 'limit', in: 'query', type: 'integer', description: 'prose' } },
    responses: { listThings: { description: 'prose', schema: { $ref: '#/definitions/thing' }, examples: { 'application/json': {} } } },
    definitions: { thing: { type: 'object', description: 'prose' } },
  }

  it('keeps a $ref response as the $ref, and the shared sections without their prose', () => {
    expect(compactSpec(upstream)).toEqual({
      swagger: '2.0',
      basePath: '/fabric/v1',
      paths: { '/things': { get: { operationId: 'listThings', parameters: [{ $ref: '#/parameters/limit' }], responses: { '200': { $ref: '#/responses/listThings' }, '401': { schema: { $ref: '#/definitions/thing' } } } } } },
      parameters: { limit: { name: 'limit', in: 'query', type: 'integer' } },
      responses: { listThings: { schema: { $ref: '#/definitions/thing' } } },
      definitions: { thing: { type: 'object' } },
    })
  })

  it('gives the checker the same view as the document with its prose', () => {
    expect(checkerView('fabric', compactSpec(upstream) as unknown as SpecDocument)).toEqual(checkerView('fabric', upstream as unknown as SpecDocument))
  })
})
