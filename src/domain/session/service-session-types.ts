/**
 * Service sessions: a permission, granted to one API session, to Dial or Bind one service. They live exactly as long
 * as their API session. The token is a JWT the controller signs (see flows/sessions/session-token.ts).
 * @see edge-api client.yml sessionDetail, sessionCreate
 */
import type { PolicyType } from '../policy/policy-types.ts'
import type { PolicyReads } from '../policy/policy-reads.ts'
import type { DeepReadonly } from '../../lib/deep-readonly.ts'

/** A stored service session; never mutated, hence deeply read-only. */
export type ServiceSession = DeepReadonly<{
  id: string
  token: string
  apiSessionId: string
  identityId: string
  serviceId: string
  type: PolicyType
  tags: Record<string, unknown>
  createdAt: number
  updatedAt: number
}>

/** Sessions whose identity no longer holds the permission they were created for (the policy enforcer's work). */
export function sessionsWithoutAccess(all: Iterable<ServiceSession>, reads: PolicyReads): string[] {
  const out: string[] = []
  for (const s of all) if (!reads.permissionsOf(s.identityId, s.serviceId).includes(s.type)) out.push(s.id)
  return out
}
