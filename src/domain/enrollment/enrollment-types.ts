/**
 * Enrollment records: an outstanding way for an identity to become usable (a one-time token, its JWT, its expiry),
 * stored with the identity by the identity actor and removed when redeemed or when the identity goes.
 * Times are epoch milliseconds.
 * @see edge-api management.yml enrollmentDetail, identityEnrollments; controller-behaviour.md §6
 */
import type { DeepReadonly } from '../../lib/deep-readonly.ts'

/** The enrollment methods an identity enrollment record can have. */
export const ENROLLMENT_METHODS = ['ott', 'ottca', 'updb'] as const
export type EnrollmentMethodName = (typeof ENROLLMENT_METHODS)[number]

/** A stored enrollment: replaced on change, never mutated. */
export type Enrollment = DeepReadonly<{
  id: string
  method: EnrollmentMethodName
  identityId: string
  /** The one-time token (a UUID; the JWT's `jti`). */
  token: string
  /** The enrollment JWT, signed by the CA with the server certificate's key. */
  jwt: string
  expiresAt: number
  /** ottca: the CA the enrolling certificate must chain to. */
  caId: string | null
  /** updb: the username the password is set for. */
  username: string | null
  createdAt: number
  updatedAt: number
}>

/** What a create-time enrollment module makes: the record without its ids and times (the identity actor adds them). */
export type NewEnrollment = Pick<Enrollment, 'method' | 'token' | 'jwt' | 'expiresAt' | 'caId' | 'username'>
