/**
 * What the volatile posture store shows routes and flows: each API session's posture data and each identity's most
 * recent refused service requests. Records are deeply read-only and replaced on every change.
 */
import type { FailedServiceRequest, PostureData } from './posture-types.ts'

export interface PostureDataReads {
  /** The posture data the client of an API session has reported, if any. */
  dataOf(apiSessionId: string): PostureData | undefined
  /** The identity's most recent refused service requests, oldest first (at most MAX_FAILED_REQUESTS). */
  failedRequestsOf(identityId: string): readonly FailedServiceRequest[]
}

/** How many refused service requests are kept per identity. */
export const MAX_FAILED_REQUESTS = 20
