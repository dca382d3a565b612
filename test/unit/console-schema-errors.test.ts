// The console's check of config data against its config type's JSON schema (src/console/app/ui/schema-errors.ts,
// @cfworker/json-schema): each error lands at the top-level property the form shows it at.
import { describe, expect, it } from 'bun:test'
import { validateData } from '../../src/console/app/ui/schema-errors.ts'

const SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['hostname', 'port'],
  additionalProperties: false,
  definitions: { port: { type: 'integer', minimum: 1, maximum: 65535 } },
  properties: {
    hostname: { type: 'string', minLength: 1 },
    port: { $ref: '#/definitions/port' },
    forward: { type: 'array', items: { type: 'object', required: ['low'], properties: { low: { $ref: '#/definitions/port' } } } },
  },
}

describe('validateData', () => {
  it('answers no error for valid data', () => {
    expect(validateData(SCHEMA, { hostname: 'db', port: 5432, forward: [{ low: 1 }] })).toEqual({})
  })

  it('puts a missing required property at that property', () => {
    const e = validateData(SCHEMA, { port: 5432 })
    expect(Object.keys(e)).toEqual(['hostname'])
    expect(e.hostname).toContain('hostname')
  })

  it('puts an error behind a $ref at its property, with the failing keyword\'s message', () => {
    expect(validateData(SCHEMA, { hostname: 'db', port: 99999 })).toEqual({ port: '99999 is greater than 65535.' })
    expect(validateData(SCHEMA, { hostname: 'db', port: 'x' }).port).toContain('Expected "integer"')
  })

  it('puts a nested error at its top-level property with the rest of the path', () => {
    const e = validateData(SCHEMA, { hostname: 'db', port: 1, forward: [{ low: 1 }, { low: 0 }] })
    expect(Object.keys(e)).toEqual(['forward'])
    expect(e.forward).toStartWith('1/low: ')
  })

  it('reports a property the schema does not allow once, for the data as a whole', () => {
    const e = validateData(SCHEMA, { hostname: 'db', port: 1, extra: true })
    expect(Object.keys(e)).toEqual([''])
    expect(e['']).toContain('"extra"')
  })

  it('reads a draft-04 schema by its own rules (exclusiveMaximum as a boolean)', () => {
    const draft4 = { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', properties: { n: { type: 'number', maximum: 10, exclusiveMaximum: true } } }
    expect(validateData(draft4, { n: 9 })).toEqual({})
    expect(Object.keys(validateData(draft4, { n: 10 }))).toEqual(['n'])
  })

  it('checks data that is not an object against a schema that wants one', () => {
    expect(Object.keys(validateData({ type: 'object' }, []))).toEqual([''])
  })
})
