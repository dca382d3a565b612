/**
 * Why the controller refused a router's request made for an SDK (a terminator, a circuit), as a router reads it: an
 * edge error code, a retry hint, a message. The router acts on the hint: TooBusy (1) → ask again later; StartOver (2)
 * and NotRetriable (3) → give up and tell the SDK; Default (0) → try again, giving up after three failures.
 * @see ziti controller/handler_edge_ctrl/errors.go; sdk-golang pb/edge_client_pb/edge_client.proto (Error),
 *   ziti/edge/messages.go (RetryHint); router/xgress_edge/hosted.go HandleCreateTerminatorResponse
 */

import type { TerminatorRefusal } from '../policy/graph-decide-terminators.ts'

/** Edge error codes (edge_client.proto `Error`). */
export const EDGE_ERROR = {
  Internal: 1,
  InvalidApiSession: 2,
  InvalidSession: 3,
  WrongSessionType: 4,
  InvalidEdgeRouterForSession: 5,
  InvalidService: 6,
  InvalidTerminator: 8,
  InvalidPrecedence: 9,
  InvalidCost: 10,
  EncryptionDataMissing: 11,
  AccessDenied: 14,
} as const
export type EdgeErrorCode = (typeof EDGE_ERROR)[keyof typeof EDGE_ERROR]

/** Retry hints (sdk-golang edge.RetryHint). */
export const RETRY_HINT = { Default: 0, TooBusy: 1, StartOver: 2, NotRetriable: 3 } as const
export type RetryHint = (typeof RETRY_HINT)[keyof typeof RETRY_HINT]

/** One refusal: its code, hint and message, as the real controller words it. */
export interface RouterRequestError {
  readonly code: EdgeErrorCode
  readonly retryHint: RetryHint
  readonly message: string
}

const err = (code: EdgeErrorCode, retryHint: RetryHint, message: string): RouterRequestError => ({ code, retryHint, message })

/** The refusals, named after the real controller's error types. */
export const RouterRequestErrors = {
  invalidApiSession: () => err(EDGE_ERROR.InvalidApiSession, RETRY_HINT.StartOver, 'invalid api session'),
  invalidSession: () => err(EDGE_ERROR.InvalidSession, RETRY_HINT.StartOver, 'invalid session'),
  wrongSessionType: () => err(EDGE_ERROR.WrongSessionType, RETRY_HINT.StartOver, 'incorrect session type'),
  invalidEdgeRouterForSession: () => err(EDGE_ERROR.InvalidEdgeRouterForSession, RETRY_HINT.StartOver, 'invalid edge router for session'),
  invalidService: () => err(EDGE_ERROR.InvalidService, RETRY_HINT.NotRetriable, 'invalid service'),
  invalidTerminator: (message: string) => err(EDGE_ERROR.InvalidTerminator, RETRY_HINT.NotRetriable, message),
  invalidCost: (message: string) => err(EDGE_ERROR.InvalidCost, RETRY_HINT.NotRetriable, message),
  invalidPrecedence: (message: string) => err(EDGE_ERROR.InvalidPrecedence, RETRY_HINT.NotRetriable, message),
  /** An encryption-requiring service without a public key on one side of a dial. */
  encryptionDataMissing: (message: string) => err(EDGE_ERROR.EncryptionDataMissing, RETRY_HINT.StartOver, message),
  /** The identity may not use this edge router for the service (a CreateCircuitV3's edge router policy check). */
  accessDenied: (message: string) => err(EDGE_ERROR.AccessDenied, RETRY_HINT.Default, message),
  /** An error of ours, or one the router may retry as it likes. */
  internal: (message: string) => err(EDGE_ERROR.Internal, RETRY_HINT.Default, message),
  /** A request that will never succeed as it is (an id taken by another terminator). */
  nonRetriable: (message: string) => err(EDGE_ERROR.Internal, RETRY_HINT.NotRetriable, message),
  /** The writes are full (the bounded write queue) or the cluster has no leader: ask again later. */
  busy: (message: string) => err(EDGE_ERROR.Internal, RETRY_HINT.TooBusy, message),
} as const

/**
 * The invalid-terminator refusal of a request (`operation`, e.g. `update.terminator`) from router `routerId` for
 * terminator `terminatorId`, worded as the real controller's verifyTerminator words it.
 */
export function invalidTerminatorOf(operation: string, terminatorId: string, routerId: string, expectedBinding: string, refusal: TerminatorRefusal): RouterRequestError {
  switch (refusal.reason) {
    case 'not-found':
      return RouterRequestErrors.invalidTerminator('invalid terminator: not found')
    case 'other-router':
      return RouterRequestErrors.invalidTerminator(`${operation} request for terminator ${terminatorId} on router ${refusal.routerId} came from router ${routerId}`)
    case 'other-binding':
      return RouterRequestErrors.invalidTerminator(`can't operate on terminator ${terminatorId} with wrong binding, expected binding ${expectedBinding}, was ${refusal.binding}`)
  }
}
