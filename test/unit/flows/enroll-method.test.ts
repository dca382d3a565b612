// The enrollment seams (src/flows/enroll/enroll-method.ts): which enrollments a create asks for, and the registry's
// refusals (controller-behaviour.md §6: unknown method on /enroll is 400 INVALID_ENROLL_METHOD).
import { describe, expect, it } from 'bun:test'
import { ApiError } from '../../../src/errors/api-error.ts'
import {
  createEnrollmentMethodRegistry,
  requestedEnrollments,
  type EnrollmentMethod,
} from '../../../src/flows/enroll/enroll-method.ts'

const redeemOnly = (method: string): EnrollmentMethod => ({ method, redeem: () => Promise.resolve({}) })
const withPrepare = (method: string): EnrollmentMethod => ({
  ...redeemOnly(method),
  prepare: (request, target) =>
    Promise.resolve({ method: 'ott' as const, token: 't', jwt: 'j', expiresAt: 0, caId: null, username: request.arg ?? target.name }),
})

function errorOf(fn: () => unknown): ApiError {
  try {
    fn()
  } catch (e) {
    if (e instanceof ApiError) return e
    throw e
  }
  throw new Error('no error thrown')
}

describe('requestedEnrollments', () => {
  it('reads ott, ottca and updb; false and empty values ask for nothing', () => {
    expect(requestedEnrollments(undefined)).toEqual([])
    expect(requestedEnrollments({ ott: false, ottca: '', updb: '' })).toEqual([])
    expect(requestedEnrollments({ updb: 'user1', ott: true, ottca: 'ca-1' })).toEqual([
      { method: 'ott' },
      { method: 'ottca', arg: 'ca-1' },
      { method: 'updb', arg: 'user1' },
    ])
  })
})

describe('createEnrollmentMethodRegistry', () => {
  it('plans requests with the modules that have a create-time part', () => {
    const ott = withPrepare('ott')
    const registry = createEnrollmentMethodRegistry([ott, redeemOnly('ca')])
    const planned = registry.plan([{ method: 'ott' }], { ott: true })
    expect(planned).toHaveLength(1)
    expect(planned[0].module).toBe(ott as (typeof planned)[0]['module'])
    expect(planned[0].request).toEqual({ method: 'ott' })
    expect(registry.plan([], undefined)).toEqual([])
    expect(registry.names()).toEqual(['ott', 'ca'])
  })

  it('refuses a requested method without a module, or whose module has no create-time part, on field enrollment', () => {
    const registry = createEnrollmentMethodRegistry([withPrepare('ott'), redeemOnly('ca')])
    for (const method of ['updb', 'ca']) {
      const e = errorOf(() => registry.plan([{ method: 'ott' }, { method }], { x: 1 }))
      expect([e.status, e.code]).toEqual([400, 'COULD_NOT_VALIDATE'])
      expect(e.apiCause).toMatchObject({ kind: 'field', field: 'enrollment', value: { x: 1 } })
    }
  })

  it('resolves a redeemable method, else 400 INVALID_ENROLL_METHOD', () => {
    const ca = redeemOnly('ca')
    const registry = createEnrollmentMethodRegistry([ca])
    expect(registry.resolve('ca')).toBe(ca)
    const e = errorOf(() => registry.resolve('ott'))
    expect([e.status, e.code]).toEqual([400, 'INVALID_ENROLL_METHOD'])
  })

  it('refuses two modules with the same name as a wiring bug', () => {
    expect(() => createEnrollmentMethodRegistry([redeemOnly('ott'), withPrepare('ott')])).toThrow(TypeError)
  })
})
