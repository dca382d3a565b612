// The TypeBox schema is the single source of the shape rules; the committed JSON Schema for editors must be exactly
// what the generator produces from it, and a standard checker reading the same schema must agree with the validator.
import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { Value } from '@sinclair/typebox/value'
import { parse } from 'yaml'
import { RouterConfigSchema } from '../../../schemas/router-config.ts'
import { ROUTER_CONFIG_JSON_SCHEMA_PATH, renderRouterConfigJsonSchema } from '../../../scripts/gen-router-config-schema.ts'
import { VALUE_KINDS } from '../../../src/router-config/router-config-formats.ts'
import { fixture } from './router-config-support.ts'

describe('schemas/router-config.v3.schema.json', () => {
  it('equals a fresh generation from schemas/router-config.ts (run bun run scripts/gen-router-config-schema.ts)', () => {
    expect(readFileSync(ROUTER_CONFIG_JSON_SCHEMA_PATH, 'utf8')).toBe(renderRouterConfigJsonSchema())
  })

  it('is a draft-07 schema requiring v, ctrl and identity', () => {
    const doc = JSON.parse(renderRouterConfigJsonSchema())
    expect(doc.$schema).toBe('http://json-schema.org/draft-07/schema#')
    expect(doc.required).toEqual(['v', 'ctrl', 'identity'])
  })

  it('names every section of the seed', () => {
    const sections = ['ctrl', 'csr', 'dialers', 'edge', 'forwarder', 'healthChecks', 'identity', 'link', 'listeners', 'metrics', 'trace', 'transport', 'profile', 'web', 'v']
    for (const s of sections) expect(Object.keys(RouterConfigSchema.properties)).toContain(s)
  })

  it('uses only value kinds the validator knows', () => {
    const kinds = new Set<string>()
    JSON.stringify(RouterConfigSchema, (key, value) => {
      if (key === 'x-kind') kinds.add(value)
      return value
    })
    for (const k of kinds) expect(Object.keys(VALUE_KINDS)).toContain(k)
  })
})

describe('a standard checker reading the same schema', () => {
  const data = (name: string) => parse(fixture(name), { version: '1.1', merge: true })

  it('accepts the valid fixtures', () => {
    for (const name of ['edge-router.yml', 'tunneler-router.yml', 'minimal.yml']) expect(Value.Check(RouterConfigSchema, data(name))).toBe(true)
  })

  it('rejects the broken fixture', () => {
    const paths = [...Value.Errors(RouterConfigSchema, data('broken-router.yml'))].map((e) => e.path)
    expect(paths).toContain('/ctrl/defaultRequestTimeout')
    expect(paths).toContain('/forwarder/xgressDialWorkerCount')
  })
})
