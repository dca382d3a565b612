// The change context of a REST write names its author and carries the request's id (the one in its log line and in
// its error answers).
import { describe, expect, it } from 'bun:test'
import { changeOf } from '../../../src/http/routes/route-change.ts'
import type { RouteCtx } from '../../../src/http/http-route.ts'

describe('changeOf', () => {
  it('carries the author and the request id', () => {
    const ctx = { auth: { identity: { id: 'identity-1' } }, requestId: 'req-42' } as unknown as RouteCtx<unknown, unknown>
    expect(changeOf(ctx)).toEqual({ author: 'identity-1', source: 'rest', requestId: 'req-42' })
  })

  it('names an anonymous author on public routes', () => {
    const ctx = { requestId: 'req-43' } as unknown as RouteCtx<unknown, unknown>
    expect(changeOf(ctx)).toEqual({ author: 'anonymous', source: 'rest', requestId: 'req-43' })
  })
})
