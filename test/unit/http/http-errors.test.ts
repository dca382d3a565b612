// The error renderer: envelope shape, causes, the message table, and that our own bugs never leak their message.
import { describe, expect, it } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ApiError } from '../../../src/errors/api-error.ts'
import { API_ERRORS } from '../../../src/errors/error-codes.ts'
import { renderApiError, renderThrown, validationToApiError } from '../../../src/http/http-errors.ts'

describe('renderThrown', () => {
  it('answers a bug with 500 UNHANDLED and never its message', async () => {
    const lines: string[] = []
    const res = renderThrown(new TypeError('secret internal detail'), { method: 'GET', path: '/edge/client/v1/y', requestId: 'req-1' }, (l) => lines.push(l))
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(text).not.toContain('secret')
    const body = JSON.parse(text)
    expect(body.error.code).toBe('UNHANDLED')
    expect(body.error.requestId).toBe('req-1')
    expect(body.meta).toEqual({ apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' })
    // the log line carries the request id, the request and the bug's detail
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('req-1')
    expect(lines[0]).toContain('GET /edge/client/v1/y')
    expect(lines[0]).toContain('secret internal detail')
  })

  it('survives a thrown value that cannot be turned into a string', async () => {
    const lines: string[] = []
    const res = renderThrown(Object.create(null), { method: 'POST', path: '/p', requestId: 'req-2' }, (l) => lines.push(l))
    expect(res.status).toBe(500)
    expect(lines[0]).toContain('req-2')
  })
})

describe('renderApiError', () => {
  it('renders every catalogue code with its status and message', async () => {
    for (const [code, { status, message }] of Object.entries(API_ERRORS)) {
      const res = renderApiError(new ApiError(code as keyof typeof API_ERRORS))
      expect(res.status).toBe(status)
      const body = (await res.json()) as any
      expect(body.error).toMatchObject({ code, message })
      expect(typeof body.error.requestId).toBe('string')
    }
  })

  it('renders field causes as {field, reason, value}', async () => {
    const body = (await renderApiError(ApiError.invalidField('name', 'name is required', '')).json()) as any
    expect(body.error.cause).toEqual({ field: 'name', reason: 'name is required', value: '' })
  })

  it('writes a field cause\'s value as text for the fabric API, whose spec types it as a string', async () => {
    const cause = async (value: unknown) => ((await renderApiError(ApiError.invalidField('f', 'r', value), 'q', { textValues: true }).json()) as any).error.cause.value
    expect(await cause('as is')).toBe('as is')
    expect(await cause(5)).toBe('5')
    expect(await cause(true)).toBe('true')
    expect(await cause({ a: [1] })).toBe('{"a":[1]}')
    expect(await cause(null)).toBe('null')
    expect(await cause(undefined)).toBe('')
    // the edge APIs keep the value as it was sent
    expect(((await renderApiError(ApiError.invalidField('f', 'r', 5)).json()) as any).error.cause.value).toBe(5)
  })

  it('renders message causes with code and requestId', async () => {
    const body = (await renderApiError(ApiError.invalidFilter('unknown symbol')).json()) as any
    expect(body.error.cause).toMatchObject({ code: 'UNHANDLED', message: 'unknown symbol' })
    expect(body.error.cause.requestId).toBe(body.error.requestId)
  })

  it('never uses a 6xx, 422 or 403 status', () => {
    for (const { status } of Object.values(API_ERRORS)) {
      expect(status).toBeLessThan(600)
      expect([403, 422]).not.toContain(status)
    }
  })
})

describe('validationToApiError', () => {
  it('names the first missing property as the field', () => {
    const e = validationToApiError('body', [
      { path: '/type', message: 'Expected union value' },
      { path: '/name', message: 'Expected required property', value: undefined },
    ])
    expect(e.code).toBe('COULD_NOT_VALIDATE')
    expect(e.apiCause).toMatchObject({ kind: 'field', field: 'name', reason: 'name in body is required' })
  })

  it('says what a union accepts instead of "expected union value"', () => {
    const cases = [
      [Type.Union([Type.String(), Type.Null()]), { toString: 'x' }, 'expected a string or null'],
      [Type.Union([Type.Literal('Dial'), Type.Literal('Bind')]), 'Both', 'expected "Dial" or "Bind"'],
      [Type.Union([Type.Record(Type.String(), Type.Union([Type.Null(), Type.String(), Type.Boolean()])), Type.Null()]), { a: 1 }, 'expected an object of null or string or boolean values or null'],
      [Type.Union([Type.Array(Type.String()), Type.Null()]), 'x', 'expected an array or null'],
      [Type.Union([Type.Integer(), Type.Number(), Type.Boolean()]), 'x', 'expected an integer or a number or a boolean'],
    ] as const
    for (const [schema, value, expected] of cases) {
      const errors = [...TypeCompiler.Compile(Type.Object({ f: schema })).Errors({ f: value })]
      const e = validationToApiError('body', errors)
      expect(e.apiCause).toMatchObject({ kind: 'field', field: 'f', reason: `f in body: ${expected}`, value })
    }
  })

  it('names the member that failed inside an object-or-null union, not the union', () => {
    const schema = Type.Object({
      claim: Type.Union([Type.Object({ location: Type.Union([Type.Literal('A'), Type.Literal('B'), Type.Null()]), index: Type.Integer() }), Type.Null()]),
    })
    const check = TypeCompiler.Compile(schema)
    const bad = validationToApiError('body', [...check.Errors({ claim: { location: 'C', index: 1 } })])
    expect(bad.apiCause).toMatchObject({ kind: 'field', field: 'claim.location', reason: 'claim.location in body: expected "A" or "B" or null', value: 'C' })
    const missing = validationToApiError('body', [...check.Errors({ claim: { location: 'A' } })])
    expect(missing.apiCause).toMatchObject({ field: 'claim.index', reason: 'claim.index in body is required' })
    const notObject = validationToApiError('body', [...check.Errors({ claim: 'x' })])
    expect(notObject.apiCause).toMatchObject({ field: 'claim', reason: 'claim in body: expected an object or null' })
  })
})
