// Request validation: members a schema does not declare are dropped at any depth (the real controller ignores them),
// declared members stay strictly checked, explicit `additionalProperties: false` still refuses, free maps keep
// everything as own properties.
import { describe, expect, it } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { validatorOf, withoutUnknownMembers } from '../../../src/http/http-validate.ts'
import { ApiError } from '../../../src/errors/api-error.ts'
import { Tags } from '../../../schemas/common.ts'
import { IdentityUpdate } from '../../../schemas/identity.ts'

const Inner = Type.Object({ a: Type.String(), list: Type.Optional(Type.Array(Type.Object({ x: Type.Number() }))) })
const Body = Type.Object({
  name: Type.String({ minLength: 1 }),
  inner: Type.Optional(Inner),
  maybe: Type.Optional(Type.Union([Inner, Type.Null()])),
  tags: Type.Optional(Tags),
  data: Type.Optional(Type.Object({}, { additionalProperties: true })),
})

function failure(f: () => unknown): ApiError {
  try {
    f()
  } catch (e) {
    return e as ApiError
  }
  throw new Error('expected a failure')
}

describe('withoutUnknownMembers', () => {
  it('drops undeclared members at every depth, through arrays and unions', () => {
    const value = {
      name: 'n', extra: 1, toString: 'x',
      inner: { a: 'a', extra: { deep: true }, list: [{ x: 1, y: 2 }] },
      maybe: { a: 'b', constructor: 'c' },
    }
    expect(withoutUnknownMembers(Body, value)).toEqual({ name: 'n', inner: { a: 'a', list: [{ x: 1 }] }, maybe: { a: 'b' } })
    // the input is left as it was
    expect(value.inner.extra).toEqual({ deep: true })
  })

  it('keeps every member of free maps, as own properties, whatever their names', () => {
    const value = JSON.parse('{"name":"n","tags":{"__proto__":"p","toString":"t","valueOf":null},"data":{"any":{"thing":[1]},"constructor":true}}')
    const out = withoutUnknownMembers(Body, value) as Record<string, any>
    expect(Object.keys(out.tags)).toEqual(['__proto__', 'toString', 'valueOf'])
    expect(Object.getPrototypeOf(out.tags)).toBe(Object.prototype)
    expect(out.tags.__proto__).toBe('p')
    expect(out.data).toEqual(value.data)
  })

  it('leaves an object that must be exactly empty as it is, so the check refuses extra members', () => {
    const Exact = Type.Object({}, { additionalProperties: false })
    expect(withoutUnknownMembers(Exact, { a: 1 })).toEqual({ a: 1 })
    expect(failure(() => validatorOf(Exact, 'body')({ a: 1 })).code).toBe('COULD_NOT_VALIDATE')
  })
})

describe('withoutUnknownMembers on bodies (as Go decodes them)', () => {
  const Os = Type.Object({ type: Type.String(), versions: Type.Array(Type.String()) })
  const Check = Type.Object({ name: Type.String(), operatingSystems: Type.Optional(Type.Array(Os)), configs: Type.Optional(Type.Array(Type.String())), tags: Type.Optional(Tags) })

  it('reads a member named but for case as the declared one, at every depth (the CLI sends OS checks so)', () => {
    const out = withoutUnknownMembers(Check, { name: 'n', operatingSystems: [{ Type: 'Linux', Versions: ['5'] }] }, true)
    expect(out).toEqual({ name: 'n', operatingSystems: [{ type: 'Linux', versions: ['5'] }] })
    // the later of two spellings wins, as in Go
    expect(withoutUnknownMembers(Check, { name: 'a', NAME: 'b' }, true)).toEqual({ name: 'b' })
  })

  it('keeps the keys of free maps and query members as they are', () => {
    expect(withoutUnknownMembers(Check, { name: 'n', tags: { Name: 'x' } }, true)).toEqual({ name: 'n', tags: { Name: 'x' } })
    expect(withoutUnknownMembers(Check, { Name: 'n' })).toEqual({})
  })

  it('reads a null on an optional member that takes no null as no value, and keeps it where it means something', () => {
    expect(withoutUnknownMembers(Check, { name: 'n', configs: null }, true)).toEqual({ name: 'n' })
    expect(withoutUnknownMembers(Check, { name: 'n', configs: ['c'], Configs: null }, true)).toEqual({ name: 'n', configs: ['c'] })
    expect(withoutUnknownMembers(Body, { name: 'n', maybe: null }, true)).toEqual({ name: 'n', maybe: null })
    // a required member stays, so the check names it
    const e = failure(() => validatorOf(Check, 'body')({ name: null }))
    expect(e.apiCause).toMatchObject({ kind: 'field', field: 'name' })
    expect(failure(() => validatorOf(Check, 'query')({ name: 'n', configs: null })).code).toBe('COULD_NOT_VALIDATE')
  })
})

describe('validatorOf', () => {
  it('accepts an identity update with a member it does not know (enrollment) and drops it', () => {
    const out = validatorOf(IdentityUpdate, 'body')({ name: 'i', type: 'User', isAdmin: false, enrollment: { ott: true } })
    expect(out).toEqual({ name: 'i', type: 'User', isAdmin: false })
  })

  it('still checks declared members strictly, naming the field', () => {
    const e = failure(() => validatorOf(Body, 'body')({ name: 'n', inner: { a: 5 }, unknown: 1 }))
    expect(e.code).toBe('COULD_NOT_VALIDATE')
    expect(e.apiCause).toMatchObject({ kind: 'field', field: 'inner.a' })
  })

  it('names a missing required member', () => {
    const e = failure(() => validatorOf(Body, 'body')({ toString: 'x', constructor: 'y' }))
    expect(e.apiCause).toMatchObject({ kind: 'field', field: 'name', reason: 'name in body is required' })
  })

  it('refuses a tag value of the wrong type even under a prototype name', () => {
    const e = failure(() => validatorOf(Body, 'body')(JSON.parse('{"name":"n","tags":{"__proto__":{"isAdmin":true}}}')))
    expect(e.code).toBe('COULD_NOT_VALIDATE')
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
  })
})
