// The refusals of a router's requests: code, retry hint and wording as the real controller's errors.go and
// verifyTerminator give them (the router acts on the hint: hosted.go HandleCreateTerminatorResponse).
import { describe, expect, it } from 'bun:test'
import { EDGE_ERROR, invalidTerminatorOf, RETRY_HINT, RouterRequestErrors as E } from '../../../../src/domain/router/router-request-errors.ts'

describe('RouterRequestErrors', () => {
  it('pins every code and hint', () => {
    expect([E.invalidApiSession(), E.invalidSession(), E.wrongSessionType(), E.invalidEdgeRouterForSession()].map((e) => [e.code, e.retryHint])).toEqual([
      [2, RETRY_HINT.StartOver], [3, RETRY_HINT.StartOver], [4, RETRY_HINT.StartOver], [5, RETRY_HINT.StartOver],
    ])
    expect([E.invalidService(), E.invalidTerminator('x'), E.invalidCost('x'), E.invalidPrecedence('x')].map((e) => [e.code, e.retryHint])).toEqual([
      [6, RETRY_HINT.NotRetriable], [8, RETRY_HINT.NotRetriable], [10, RETRY_HINT.NotRetriable], [9, RETRY_HINT.NotRetriable],
    ])
    expect([E.internal('x'), E.nonRetriable('x'), E.busy('x')].map((e) => [e.code, e.retryHint])).toEqual([
      [EDGE_ERROR.Internal, 0], [EDGE_ERROR.Internal, 3], [EDGE_ERROR.Internal, 1],
    ])
    expect(E.invalidApiSession().message).toBe('invalid api session')
    expect(E.wrongSessionType().message).toBe('incorrect session type')
  })

  it('words the invalid-terminator refusals as verifyTerminator does', () => {
    expect(invalidTerminatorOf('update.terminator', 't', 'r1', 'edge', { reason: 'not-found' }).message).toBe('invalid terminator: not found')
    expect(invalidTerminatorOf('update.terminator', 't', 'r1', 'edge', { reason: 'other-router', routerId: 'r2' }).message).toBe('update.terminator request for terminator t on router r2 came from router r1')
    expect(invalidTerminatorOf('update.terminator', 't', 'r1', 'edge', { reason: 'other-binding', binding: 'transport' }).message).toBe("can't operate on terminator t with wrong binding, expected binding edge, was transport")
    expect(invalidTerminatorOf('x', 't', 'r', 'edge', { reason: 'not-found' })).toMatchObject({ code: 8, retryHint: 3 })
  })
})
