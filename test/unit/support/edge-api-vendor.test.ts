// The official edge-api documents the spec check reads are vendored in test/fixtures/edge-api/ (scripts/vendor-edge-api.ts),
// so a clone needs nothing beside it. Issue 29, part 1: the compact form drops only prose, and the checker makes the
// same of it as of the upstream YAML. The comparison with upstream runs when the documents are beside the clone
// (../shared/reference/edge-api, as on the developers' machines) or EDGEPLANE_EDGE_API_UPSTREAM names a folder
// holding them; without either it is skipped, and the rest still runs.
import { describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { compactSpec, renderCompactSpec, SPEC_NAMES, VENDORED_DIR } from '../../../scripts/vendor-edge-api.ts'
import { checkerView, checkAnswer, SPEC_DIR, type SpecDocument } from '../../support/spec-check.ts'

// The one read outside the repository in the tests, optional by construction (see test/unit/repo-boundary.test.ts).
const BESIDE_CLONE = join(import.meta.dir, '..', '..', '..', '..', 'shared', 'reference', 'edge-api')
const UPSTREAM = [process.env.EDGEPLANE_EDGE_API_UPSTREAM, BESIDE_CLONE].find(
  (d): d is string => d !== undefined && d !== '' && SPEC_NAMES.every((n) => existsSync(join(d, `${n}.yml`))),
)

const vendoredText = (name: string): string => readFileSync(join(VENDORED_DIR, `${name}.json`), 'utf8')

describe('the vendored edge-api documents', () => {
  it('are where the spec check reads them', () => {
    expect(SPEC_DIR).toBe(VENDORED_DIR)
  })

  for (const name of SPEC_NAMES) {
    it(`${name}.json is a swagger 2.0 document with paths and definitions, in the form the script writes, and without prose`, () => {
      const text = vendoredText(name)
      const doc = JSON.parse(text) as Record<string, unknown>
      expect(doc.swagger).toBe('2.0')
      expect(doc.basePath).toBe(`/edge/${name}/v1`)
      expect(Object.keys(doc.paths as object).length).toBeGreaterThan(name === 'client' ? 30 : 100)
      expect(Object.keys(doc.definitions as object).length).toBeGreaterThan(name === 'client' ? 100 : 300)
      expect(`${JSON.stringify(doc, null, 1)}\n`).toBe(text)
      // compacting again removes nothing: no description, example or header is left anywhere
      expect(compactSpec(doc)).toEqual(doc)
    })
  }

  it('say where they come from: upstream repository, commit, license, how to regenerate', () => {
    const source = readFileSync(join(VENDORED_DIR, 'SOURCE'), 'utf8')
    expect(source).toContain('https://github.com/openziti/edge-api')
    expect(source).toMatch(/Commit: +[0-9a-f]{40}\b/)
    expect(source).toContain('Apache-2.0')
    expect(source).toContain('bun run scripts/vendor-edge-api.ts')
    expect(readFileSync(join(VENDORED_DIR, 'LICENSE'), 'utf8')).toContain('Apache License')
  })

  it.skipIf(UPSTREAM === undefined)('are what the script makes of the upstream documents, byte for byte', () => {
    for (const name of SPEC_NAMES) expect(renderCompactSpec(readFileSync(join(UPSTREAM!, `${name}.yml`), 'utf8'))).toBe(vendoredText(name))
  })

  it.skipIf(UPSTREAM === undefined)('give the checker the same operations, parameters, response schemas and definitions as the upstream YAML', () => {
    for (const name of SPEC_NAMES) {
      const upstream = Bun.YAML.parse(readFileSync(join(UPSTREAM!, `${name}.yml`), 'utf8')) as SpecDocument
      const vendored = JSON.parse(vendoredText(name)) as SpecDocument
      const view = checkerView(name, upstream) as { operations: unknown[]; definitions: unknown[] }
      expect(view.operations.length).toBeGreaterThan(name === 'client' ? 50 : 190)
      expect(checkerView(name, vendored)).toEqual(view)
    }
  })
})

describe('the compact form', () => {
  const upstream = {
    swagger: '2.0',
    info: { title: 'T', description: 'prose', contact: { email: 'x@y' }, version: '1', license: { name: 'Apache 2.0' } },
    host: 'demo.example',
    basePath: '/edge/client/v1',
    paths: {
      '/things/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, type: 'string', description: 'prose' }],
        get: {
          operationId: 'detailThing',
          summary: 'prose',
          description: 'prose',
          tags: ['Things'],
          security: [{ ztSession: [] }],
          parameters: [{ name: 'tags', in: 'query', type: 'array', items: { type: 'string', description: 'prose' }, collectionFormat: 'multi' }],
          responses: {
            '200': { description: 'prose', headers: { 'WWW-Authenticate': { type: 'array', items: { type: 'string' } } }, schema: { $ref: '#/definitions/thing' }, examples: { 'application/json': {} } },
            '204': { description: 'no body' },
          },
        },
      },
    },
    definitions: {
      thing: {
        type: 'object',
        description: 'prose',
        required: ['description'],
        properties: {
          description: { type: 'string', description: 'a property called description stays' },
          kind: { type: 'string', enum: ['a', 'b'], 'x-nullable': true, example: 'a' },
          tags: { type: 'object', additionalProperties: { type: 'object', description: 'prose' }, 'x-omitempty': false },
          parts: { type: 'array', items: { allOf: [{ $ref: '#/definitions/part' }, { description: 'prose', minLength: 1 }] } },
        },
        discriminator: 'kind',
      },
      part: { type: 'string', title: 'prose', format: 'date-time' },
    },
    securityDefinitions: { ztSession: { type: 'apiKey', in: 'header', name: 'zt-session', description: 'prose' } },
  }

  it('drops descriptions, summaries, titles, examples, tags, headers, host and contact, and keeps the contract in upstream order', () => {
    expect(JSON.stringify(compactSpec(upstream))).toBe(
      JSON.stringify({
        swagger: '2.0',
        info: { version: '1', license: { name: 'Apache 2.0' } },
        basePath: '/edge/client/v1',
        paths: {
          '/things/{id}': {
            parameters: [{ name: 'id', in: 'path', required: true, type: 'string' }],
            get: {
              operationId: 'detailThing',
              security: [{ ztSession: [] }],
              parameters: [{ name: 'tags', in: 'query', type: 'array', items: { type: 'string' }, collectionFormat: 'multi' }],
              responses: { '200': { schema: { $ref: '#/definitions/thing' } }, '204': {} },
            },
          },
        },
        definitions: {
          thing: {
            type: 'object',
            required: ['description'],
            properties: {
              description: { type: 'string' },
              kind: { type: 'string', enum: ['a', 'b'], 'x-nullable': true },
              tags: { type: 'object', additionalProperties: { type: 'object' }, 'x-omitempty': false },
              parts: { type: 'array', items: { allOf: [{ $ref: '#/definitions/part' }, { minLength: 1 }] } },
            },
            discriminator: 'kind',
          },
          part: { type: 'string', format: 'date-time' },
        },
        securityDefinitions: { ztSession: { type: 'apiKey', in: 'header', name: 'zt-session' } },
      }),
    )
  })

  it('gives the checker the same view as the document with its prose', () => {
    expect(checkerView('client', compactSpec(upstream) as unknown as SpecDocument)).toEqual(checkerView('client', upstream as unknown as SpecDocument))
  })

  it('is what the checker reads: a vendored operation checks answers (the spec check fails an answer against it)', () => {
    expect(() => checkAnswer({ method: 'GET', url: '/edge/client/v1/version', status: 200, contentType: 'application/json', text: '{"data":{"version":1},"meta":{}}' })).toThrow(
      'at /data/version: must be string',
    )
  })
})
