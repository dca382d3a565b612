// The fabric API's own write rules (src/domain/fabric/fabric-decide.ts): a router's fingerprint repeated but never
// changed, no hosting identity chosen by an admin, no snapshot path chosen by a client; each refusal is 400
// COULD_NOT_VALIDATE naming its field.
import { describe, expect, it } from 'bun:test'
import { decideNoHostId, decideRouterFingerprint, decideSnapshotPath } from '../../../../src/domain/fabric/fabric-decide.ts'
import type { ApiError } from '../../../../src/errors/api-error.ts'

const refusal = (f: () => void): { code: string; field?: string } => {
  try {
    f()
  } catch (e) {
    const err = e as ApiError
    return { code: err.code, field: err.apiCause?.kind === 'field' ? err.apiCause.field : undefined }
  }
  throw new Error('not refused')
}

describe('decideRouterFingerprint', () => {
  const fp = 'ab'.repeat(20)
  it('lets a write leave it out, send null, or repeat it ("" for a router without one)', () => {
    for (const given of [undefined, null, fp]) expect(() => decideRouterFingerprint(fp, given)).not.toThrow()
    expect(() => decideRouterFingerprint(null, '')).not.toThrow()
  })
  it('refuses another one, or one for a router that has none', () => {
    expect(refusal(() => decideRouterFingerprint(fp, 'cd'.repeat(20)))).toEqual({ code: 'COULD_NOT_VALIDATE', field: 'fingerprint' })
    expect(refusal(() => decideRouterFingerprint(fp, ''))).toEqual({ code: 'COULD_NOT_VALIDATE', field: 'fingerprint' })
    expect(refusal(() => decideRouterFingerprint(null, fp))).toEqual({ code: 'COULD_NOT_VALIDATE', field: 'fingerprint' })
  })
})

describe('decideNoHostId and decideSnapshotPath', () => {
  it('take absent or empty values only', () => {
    expect(() => decideNoHostId(undefined)).not.toThrow()
    expect(() => decideNoHostId('')).not.toThrow()
    expect(refusal(() => decideNoHostId('ident'))).toEqual({ code: 'COULD_NOT_VALIDATE', field: 'hostId' })
    expect(() => decideSnapshotPath(undefined)).not.toThrow()
    expect(() => decideSnapshotPath('')).not.toThrow()
    expect(refusal(() => decideSnapshotPath('/tmp/x'))).toEqual({ code: 'COULD_NOT_VALIDATE', field: 'path' })
  })
})
