/**
 * Messages of the identity actor: plain, cloneable data. Password hashes are computed in flows/ before asking.
 */
import type { ChangeContext } from '../runtime/actor-runtime.ts'
import type { Authenticator, EnvInfo, Identity, SdkInfo } from '../../domain/identity/identity-types.ts'
import type { Writable } from '../../lib/deep-readonly.ts'
import type { EnrollmentMethodName, NewEnrollment } from '../../domain/enrollment/enrollment-types.ts'
import type { AuthPolicyInput } from '../../domain/identity/identity-auth-policy.ts'
import type { MfaProof } from '../../domain/identity/identity-mfa.ts'
import type { NewRevocation, Revocation } from '../../domain/identity/identity-revocation.ts'

/** Fields an admin may set on an identity (create, put, patch). Absent means "leave as is" on patch. */
export type IdentityFields = Partial<
  Writable<Pick<
    Identity,
    | 'name'
    | 'typeId'
    | 'isAdmin'
    | 'roleAttributes'
    | 'externalId'
    | 'authPolicyId'
    | 'appData'
    | 'tags'
    | 'defaultHostingCost'
    | 'defaultHostingPrecedence'
    | 'serviceHostingCosts'
    | 'serviceHostingPrecedences'
  >>
>

export type IdentityMsg =
  /**
   * Creates an identity, with the enrollments made for it in the same transaction. `id` is given when the
   * enrollments were made for it (their JWTs name it); a taken id is a bug (TypeError).
   */
  | {
      type: 'identity.create'
      input: IdentityFields & { name: string }
      id?: string
      isDefaultAdmin?: boolean
      updb?: { username: string; passwordHash: string }
      enrollments?: readonly NewEnrollment[]
      change: ChangeContext
    }
  | { type: 'identity.update'; id: string; input: IdentityFields; replace: boolean; change: ChangeContext }
  /** Deletes an identity with its authenticators, enrollments and MFA; its OIDC tokens are revoked in the same commit. */
  | { type: 'identity.delete'; id: string; change: ChangeContext }
  | { type: 'identity.recordClientInfo'; id: string; envInfo?: EnvInfo; sdkInfo?: SdkInfo; change: ChangeContext }
  /**
   * Makes the identity of a tunneler-enabled edge router match it: `present` ⇒ an identity with id = router id,
   * the router's name, type Router, not admin, marked `isRouterIdentity` (created, renamed or marked); otherwise none
   * (deleted with its authenticators, without the admin delete guard). Sent only by flows/routers/router-identity.ts.
   */
  | { type: 'identity.syncRouterIdentity'; routerId: string; name: string; present: boolean; change: ChangeContext }
  /**
   * Redeems the enrollment of `token` (by `method`) with a certificate: creates the identity's cert authenticator
   * and removes the enrollment in one transaction, so a token is used once and never without its authenticator.
   * INVALID_ENROLLMENT_TOKEN / ENROLLMENT_EXPIRED when the token is no longer redeemable (another request won).
   */
  | {
      type: 'enrollment.redeemWithCertificate'
      token: string
      method: EnrollmentMethodName
      certPem: string
      fingerprint: string
      isIssuedByNetwork: boolean
      /** ottca: the third-party CA the certificate chains to (kept on the authenticator). */
      caId?: string
      change: ChangeContext
    }
  /**
   * CA auto-enrollment: creates identity `id` (type Default, not admin, `roleAttributes`) named `name`, or `name`
   * with the real controller's collision counter, and in the same transaction either its cert authenticator (`cert`)
   * or, when the CA maps certificates to an `externalId`, the identity with that externalId and no authenticator.
   * CERT_IN_USE when the certificate belongs to an authenticator meanwhile.
   */
  | {
      type: 'identity.enrollByCa'
      id: string
      name: string
      roleAttributes: readonly string[]
      externalId: string | null
      cert: { certPem: string; fingerprint: string; caId: string } | null
      change: ChangeContext
    }
  /**
   * Token enrollment (`POST /enroll/token`): creates identity `id` (type Default, not admin) from a verified external
   * JWT, with `externalId` = the token's id claim, and in the same transaction its network-issued cert authenticator
   * when it enrolled with a CSR (`cert`), or none when it logs in by ext-jwt. 409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED
   * when an identity holds the externalId meanwhile; the name, role attributes and auth policy are decided as an
   * admin's create decides them (400 COULD_NOT_VALIDATE on the field).
   */
  | {
      type: 'identity.enrollByToken'
      id: string
      name: string
      roleAttributes: readonly string[]
      authPolicyId: string
      externalId: string
      cert: { certPem: string; fingerprint: string } | null
      change: ChangeContext
    }
  /**
   * Redeems the updb enrollment of `token`: creates the identity's updb authenticator with the enrollment's username
   * and removes the enrollment, in one transaction.
   */
  | { type: 'enrollment.redeemWithPassword'; token: string; passwordHash: string; change: ChangeContext }
  /** Adds an enrollment to an existing identity (409 ENROLLMENT_EXISTS when one of its method is outstanding). */
  | { type: 'enrollment.create'; identityId: string; enrollment: NewEnrollment; change: ChangeContext }
  /** Gives an enrollment a new token, JWT and expiry: the old token stops working. */
  | { type: 'enrollment.refresh'; id: string; token: string; jwt: string; expiresAt: number; change: ChangeContext }
  | { type: 'enrollment.delete'; id: string; change: ChangeContext }
  | { type: 'authenticator.createUpdb'; identityId: string; username: string; passwordHash: string; tags: Authenticator['tags']; change: ChangeContext }
  | { type: 'authenticator.update'; id: string; username?: string; passwordHash?: string; tags?: Authenticator['tags']; replaceTags: boolean; change: ChangeContext }
  /** Deletes an authenticator; every OIDC token of its identity is revoked in the same commit (README differences). */
  | { type: 'authenticator.delete'; id: string; change: ChangeContext }
  /**
   * Keeps the certificate an extension issued as the cert authenticator's pending certificate (a later extension
   * replaces it); the current certificate keeps logging in. `identityId` is the caller's (domain/identity
   * identity-cert-extend.ts decides again).
   */
  | { type: 'authenticator.extendCert'; id: string; identityId: string; certPem: string; fingerprint: string; change: ChangeContext }
  /**
   * Makes the pending certificate whose fingerprint the client proved the authenticator's certificate: from then on
   * only it logs in. INVALID_CLIENT_CERT for any other fingerprint.
   */
  | {
      type: 'authenticator.verifyExtendedCert'
      id: string
      identityId: string
      fingerprint: string
      /** Whether the verified certificate's key differs from the one it replaces (the flow compared them). */
      rolledKeys: boolean
      change: ChangeContext
    }
  /**
   * An admin asks the holder of a cert authenticator to extend its certificate early (and with `rollKeys` to use a new
   * key): the authenticator is flagged now; a verified extension clears the flags (domain/identity
   * identity-cert-extend.ts decideExtendRequest).
   */
  | { type: 'authenticator.requestExtend'; id: string; rollKeys: boolean; change: ChangeContext }
  /** An admin's cert authenticator for a certificate verified before (`caId`: the third-party CA it chains to). */
  | { type: 'authenticator.createCert'; identityId: string; certPem: string; fingerprint: string; caId: string | null; tags: Authenticator['tags']; change: ChangeContext }
  /**
   * Turns authenticator `id` back into an enrollment (made for it before asking): the authenticator is removed and
   * the enrollment stored in one transaction. 409 ENROLLMENT_EXISTS when one of that method is outstanding.
   */
  | { type: 'authenticator.reEnroll'; id: string; enrollment: NewEnrollment; change: ChangeContext }
  /** A third-party CA is gone: its cert authenticators and ottca enrollments go too (subscriber of `ca.deleted`). */
  | { type: 'identity.forgetCa'; caId: string; change: ChangeContext }
  /** Creates an authentication policy (name unique, signers known; values normalised as domain/identity says). */
  | { type: 'authPolicy.create'; input: AuthPolicyInput & { name: string }; change: ChangeContext }
  /** Put (`replace`: absent members take the default policy's values) or patch of an authentication policy. */
  | { type: 'authPolicy.update'; id: string; input: AuthPolicyInput; replace: boolean; change: ChangeContext }
  /** 409 CAN_NOT_DELETE_REFERENCED_ENTITY while an identity names it; the `default` policy is never deleted. */
  | { type: 'authPolicy.delete'; id: string; change: ChangeContext }
  /**
   * Disables an identity from now for `durationMinutes` (0: until enabled) and revokes its OIDC tokens in the same
   * commit. Its API sessions are ended by the flow that sent this (flows/identity/identity-disable.ts).
   */
  | { type: 'identity.disable'; id: string; durationMinutes: number; change: ChangeContext }
  /** Clears every disabled state of an identity (disabledAt, disabledUntil) and its failed-attempt count. */
  | { type: 'identity.enable'; id: string; change: ChangeContext }
  /**
   * One failed authentication attempt of an identity (a wrong password or second-factor code): counted toward its
   * policy's `maxAttempts` and persisted; reaching it disables the identity and revokes its OIDC tokens in the same
   * commit (`disabled: true` in the reply).
   */
  | { type: 'identity.recordAuthFailure'; id: string; change: ChangeContext }
  /** A successful authentication: the identity's failed-attempt count starts again. */
  | { type: 'identity.recordAuthSuccess'; id: string; change: ChangeContext }
  /** Starts the identity's TOTP enrollment (409 MFA_EXISTS when it has an MFA record, verified or not). */
  | { type: 'mfa.create'; identityId: string; secret: string; recoveryCodes: readonly string[]; change: ChangeContext }
  /** Verifies a Started MFA with the TOTP code of time step `step` (its recovery codes work from now on). 404 when not Started. */
  | { type: 'mfa.verify'; identityId: string; mfaId: string; step: number; change: ChangeContext }
  /** Uses a TOTP step or a recovery code (when `allowRecovery`) on a Verified MFA; 409 MFA_NOT_ENROLLED when Started. */
  | { type: 'mfa.accept'; identityId: string; mfaId: string; proof: MfaProof; allowRecovery: boolean; change: ChangeContext }
  /** Uses a proof on a Verified MFA, then replaces all its recovery codes, legacy hashes included (404 when not Verified). */
  | { type: 'mfa.replaceRecoveryCodes'; identityId: string; mfaId: string; proof: MfaProof; recoveryCodes: readonly string[]; change: ChangeContext }
  /**
   * Removes the identity's MFA: a Started one with no proof, a Verified one with a proof that holds, any with
   * `proof: 'admin'`. `mfaId`, when given, is the record the proof was worked out on. 404 when there is none.
   */
  | { type: 'mfa.delete'; identityId: string; mfaId?: string; proof: MfaProof | 'admin' | null; change: ChangeContext }
  /** Repairs found by the integrity fix (flows/integrity/integrity-run.ts); the reply counts those that changed something. */
  | { type: 'integrity.repair'; repairs: IdentityRepair[]; change: ChangeContext }
  /**
   * Stores revocations of OIDC tokens in one commit (domain/identity/identity-revocation.ts): each created now, an
   * existing one of the same id replaced; `expiresAt` absent: now + the revocation lifetime (the refresh-token
   * lifetime + 1 minute). `validate`: an admin's request, checked as the real controller checks it (an IDENTITY
   * revocation names an existing identity, else 404; JTI and API_SESSION ids are UUIDs, else COULD_NOT_VALIDATE).
   * The reply lists the ids stored; the event `revocation.created` carries the records.
   */
  | { type: 'revocation.create'; revocations: readonly NewRevocation[]; validate?: boolean; change: ChangeContext }
  /** Removes the revocations whose `expiresAt` has passed (a timer sends it every minute). */
  | { type: 'revocation.prune' }

/**
 * One repair of the integrity fix. Each is idempotent: a record already gone (or already right) is left as it is.
 * - `authenticator.remove`, `enrollment.remove`, `mfa.remove`, `authFailures.remove`: a record whose identity (or
 *   third-party CA) is gone;
 * - `identity.resetAuthPolicy`: the identity names an auth policy that is gone: it gets the `default` one;
 * - `authPolicy.dropSigner`: the policy names an external JWT signer that is gone: the name is dropped;
 * - `revocation.remove`: a revocation of an unknown type (it revokes nothing) is removed.
 */
export type IdentityRepair =
  | { kind: 'authenticator.remove'; id: string }
  | { kind: 'enrollment.remove'; id: string }
  | { kind: 'mfa.remove'; identityId: string }
  | { kind: 'authFailures.remove'; identityId: string }
  | { kind: 'identity.resetAuthPolicy'; id: string; authPolicyId: string }
  | { kind: 'authPolicy.dropSigner'; id: string; signerId: string }
  | { kind: 'revocation.remove'; id: string }

export interface IdentityReplies {
  'identity.create': { id: string }
  'identity.update': void
  'identity.delete': void
  'identity.recordClientInfo': void
  'identity.syncRouterIdentity': void
  'enrollment.redeemWithCertificate': { identityId: string; authenticatorId: string }
  'enrollment.redeemWithPassword': { identityId: string; authenticatorId: string; username: string }
  'enrollment.create': { id: string }
  'enrollment.refresh': void
  'enrollment.delete': void
  'authenticator.createUpdb': { id: string }
  'authenticator.update': void
  'authenticator.delete': void
  'authenticator.extendCert': void
  'authenticator.verifyExtendedCert': void
  'authenticator.requestExtend': void
  'identity.enrollByToken': { id: string; authenticatorId: string | null }
  'identity.enrollByCa': { id: string; name: string; authenticatorId: string | null }
  'authenticator.createCert': { id: string }
  'authenticator.reEnroll': { id: string }
  'identity.forgetCa': { authenticators: number; enrollments: number }
  'authPolicy.create': { id: string }
  'authPolicy.update': void
  'authPolicy.delete': void
  'identity.disable': void
  'identity.enable': void
  'identity.recordAuthFailure': { disabled: boolean }
  'identity.recordAuthSuccess': void
  'mfa.create': { id: string }
  'mfa.verify': { accepted: boolean }
  'mfa.accept': { accepted: boolean }
  'mfa.replaceRecoveryCodes': { accepted: boolean }
  'mfa.delete': { accepted: boolean }
  'integrity.repair': number
  'revocation.create': { ids: string[] }
  'revocation.prune': { removed: number }
}

export type IdentityEvent =
  | { type: 'identity.created'; identity: Identity }
  | { type: 'identity.updated'; identity: Identity; previous: Identity }
  | { type: 'identity.deleted'; identity: Identity }
  | { type: 'authenticator.deleted'; authenticator: Authenticator }
  /** An authenticator created or changed (a certificate's fingerprint feeds the edge routers' view of its sessions). */
  | { type: 'authenticator.saved'; authenticator: Authenticator }
  /**
   * Revocations stored (asked for, or made with an identity's disable, lockout or delete, or an authenticator's
   * delete, in the same commit): a cache of verified tokens drops what they revoke.
   */
  | { type: 'revocation.created'; revocations: readonly Revocation[] }
  /** Revocations removed: expired ones pruned, or a malformed one repaired away. */
  | { type: 'revocation.removed'; ids: readonly string[] }
