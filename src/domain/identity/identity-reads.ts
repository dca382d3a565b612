/**
 * What the identity aggregate shows everyone but its own actor: lookups over identities and authenticators. Routes
 * and flows read through this (the actor's snapshot), never through the state class and its mutators. Records are
 * deeply read-only and replaced on every change; arrays answered are fresh or shared and must not be changed.
 */
import type { IdentityLookup } from './identity-decide.ts'
import type { Authenticator, Identity } from './identity-types.ts'
import type { Enrollment } from '../enrollment/enrollment-types.ts'
import type { ReadTable } from '../../lib/entity-table.ts'
import type { AuthPolicy, AuthPolicyLookup } from './identity-auth-policy.ts'
import type { Mfa } from './identity-mfa.ts'
import type { RevocableToken, Revocation } from './identity-revocation.ts'

/** The identity aggregate's reads: what the identity actor's `snapshot()` answers. */
export interface IdentityReads extends IdentityLookup, AuthPolicyLookup {
  /** Every identity by id. */
  readonly identities: ReadonlyMap<string, Identity>
  /** Every authenticator by id. */
  readonly authenticators: ReadonlyMap<string, Authenticator>
  identity(id: string): Identity | undefined
  identityIdByName(name: string): string | undefined
  /** Ids of the identities carrying a role attribute. */
  idsWithRole(attr: string): ReadonlySet<string>
  /** All identities in ascending id order. */
  identitiesById(): readonly Identity[]
  /** The updb authenticator holding a username. */
  updbByUsername(username: string): Authenticator | undefined
  authenticatorsOf(identityId: string): Iterable<Authenticator>
  /** Every outstanding enrollment by id. */
  readonly enrollments: ReadonlyMap<string, Enrollment>
  /** The outstanding enrollment of a one-time token. */
  enrollmentOfToken(token: string): Enrollment | undefined
  enrollmentsOf(identityId: string): Iterable<Enrollment>
  /** The cert authenticator of a certificate, by the SHA-1 fingerprint of its DER (lowercase hex). */
  certByFingerprintOf(fingerprint: string): Authenticator | undefined
  /** The identity whose externalId this is (certificate login through a CA's externalIdClaim). */
  identityByExternalId(externalId: string): Identity | undefined
  /** Every authentication policy (the `default` one always among them). */
  readonly authPolicies: ReadTable<AuthPolicy>
  authPolicy(id: string): AuthPolicy | undefined
  /** Failed authentication attempts of an identity counted toward its policy's lockout (0 when none). */
  authFailuresOf(identityId: string): number
  /** Ids of the identities naming an auth policy, ascending. */
  identityIdsWithAuthPolicy(policyId: string): string[]
  /** The identity's MFA record (TOTP), Started or Verified. */
  mfaOf(identityId: string): Mfa | undefined
  /** How many identities have an MFA record, Started or Verified. */
  mfaCount(): number
  /** The stored revocation of an id (a jti, an identity id or an API-session id), expired or not (until pruned). */
  revocation(id: string): Revocation | undefined
  /** Every stored revocation, in no particular order (the list route sorts). */
  revocations(): Iterable<Revocation>
  /** How many revocations are stored (expired ones included until pruned), as `GET /revocations` counts them. */
  revocationCount(): number
  /**
   * Whether a token is revoked at `now` (domain/identity/identity-revocation.ts `isRevokedBy`): by its `jti`, its
   * API session or its identity with the `iat` cut-off; expired revocations are ignored. O(1), allocates nothing.
   */
  isTokenRevoked(t: RevocableToken, now: number): boolean
}
