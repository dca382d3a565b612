/**
 * TOTP multi-factor authentication of the current identity: enrollment (start, verify, delete), the second factor of
 * a session (`POST /authenticate/mfa`), recovery codes, and an admin's delete.
 * - start: 409 MFA_EXISTS when the identity has an MFA record, Started or Verified
 * - verify: a Started record only (else 404), with a TOTP code only (recovery codes are no credential yet); it also
 *   completes the calling session's TOTP query (the real controller's SetMfaPassed)
 * - authenticate/mfa: 409 MFA_NOT_ENROLLED without a Verified record; a TOTP or an unused recovery code completes the
 *   session's TOTP query and stamps `mfaCompletedAt`; a complete session may answer again (a posture check's prompt)
 * - a TOTP code matches within one step of now and is accepted once (RFC 6238 §5.2); a recovery code works once
 * - delete: a Started record with no code, a Verified one with a TOTP or recovery code; admins with no code (404
 *   without a record)
 * - recovery codes (Verified only, else 404): reading needs a TOTP code and answers the unused ones (none on a record
 *   verified before schema 4, which holds only hashes of its codes until they are regenerated); regenerating takes a
 *   TOTP or recovery code, replaces all 20 (legacy hashes too) and answers the new ones
 * - an OIDC login has no stored session: `verifyEnrollment` and `acceptCode` are verify and authenticate/mfa without
 *   the session step (flows/oidc/oidc-login.ts records the factor on its auth request)
 * - every wrong, missing, stale or replayed code is refused by `refuseMfaCode`: 401 MFA_INVALID_TOKEN, counted toward
 *   the lockout of the identity's authentication policy (auth-lockout.ts); an accepted code starts the count again
 * Failure story: codes are checked and recovery codes hashed before the identity actor is asked; the actor decides
 * again on the record it holds, so a step or code is used once. Verify and authenticate/mfa then mark the session in
 * the session registry: a crash between the two commits leaves the code used and the session still owing its query,
 * and the client answers with its next code (never the other way round: no session is complete without a used code).
 * @see controller-behaviour.md §5; the seed's "TOTP enrollment of the current identity" table
 */
import { randomInt } from 'node:crypto'
import { Secret } from 'otpauth'
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Identity } from '../../domain/identity/identity-types.ts'
import type { ApiSession } from '../../domain/session/session-types.ts'
import {
  isRecoveryCodeShaped,
  matchingTotpStep,
  provisioningUrl,
  RECOVERY_CODE_ALPHABET,
  RECOVERY_CODE_COUNT,
  RECOVERY_CODE_LENGTH,
  type Mfa,
  type MfaProof,
} from '../../domain/identity/identity-mfa.ts'
import { hashRecoveryCode } from '../../auth/auth-recovery-code.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../actors/session-registry/session-registry-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import { recordFailedAttempt, recordSuccess } from './auth-lockout.ts'

export interface MfaFlowDeps {
  identities: IdentityActor
  sessions: SessionRegistryActor
  clock: Clock
  /** The issuer of provisioning URLs (config `totpIssuer`). */
  issuer: string
}

/** Who is asking: the caller's identity and API session (set `bearer` for the unstored session of an OIDC sign-in). */
export interface MfaCaller {
  identity: Identity
  session: ApiSession
  bearer?: unknown
}

export interface MfaFlows {
  /** Starts the enrollment; answers the new record's id. */
  enroll(identity: Identity, change: ChangeContext): Promise<{ id: string }>
  /** The caller's record; 404 when it has none. */
  recordOf(identity: Identity): Mfa
  /** The provisioning URL of a Started record; 404 when there is none or it is Verified. */
  provisioningUrlOf(identity: Identity): string
  verify(caller: MfaCaller, code: string | undefined, change: ChangeContext): Promise<void>
  /**
   * `verify` without a session to mark (an OIDC login, whose state is its auth request): completes the identity's
   * Started record with a TOTP code.
   */
  verifyEnrollment(identity: Identity, code: string | undefined, change: ChangeContext): Promise<void>
  authenticate(caller: MfaCaller, code: string | undefined, change: ChangeContext): Promise<void>
  /**
   * `authenticate` without a session to mark (an OIDC login): a TOTP or unused recovery code of the identity's
   * Verified record, with the same refusals and lockout counting.
   */
  acceptCode(identity: Identity, code: string | undefined, change: ChangeContext): Promise<void>
  remove(identity: Identity, code: string | undefined, change: ChangeContext): Promise<void>
  removeByAdmin(identityId: string, change: ChangeContext): Promise<void>
  /** After a TOTP code: the unused recovery codes (none on a record holding only legacy hashes). */
  readRecoveryCodes(identity: Identity, code: string | undefined, change: ChangeContext): Promise<{ mfa: Mfa; recoveryCodes: string[] }>
  regenerateRecoveryCodes(identity: Identity, code: string | undefined, change: ChangeContext): Promise<{ recoveryCodes: string[] }>
}

/**
 * The one answer to a wrong (or missing) MFA code, wherever it was given: 401 MFA_INVALID_TOKEN, after counting the
 * attempt toward the lockout of the identity's authentication policy (which may disable it and end its sessions).
 */
export async function refuseMfaCode(deps: MfaFlowDeps, identity: Identity, change: ChangeContext): Promise<never> {
  await recordFailedAttempt(deps, identity.id, change)
  throw new ApiError('MFA_INVALID_TOKEN')
}

/** RECOVERY_CODE_COUNT distinct fresh recovery codes. */
export function newRecoveryCodes(): string[] {
  const codes = new Set<string>()
  while (codes.size < RECOVERY_CODE_COUNT) {
    codes.add(Array.from({ length: RECOVERY_CODE_LENGTH }, () => RECOVERY_CODE_ALPHABET[randomInt(RECOVERY_CODE_ALPHABET.length)]).join(''))
  }
  return [...codes]
}

export function createMfaFlows(deps: MfaFlowDeps): MfaFlows {
  const recordOf = (identity: Identity): Mfa => {
    const mfa = deps.identities.snapshot().mfaOf(identity.id)
    if (!mfa) throw ApiError.notFound()
    return mfa
  }
  const verifiedOf = (identity: Identity): Mfa => {
    const mfa = recordOf(identity)
    if (!mfa.isVerified) throw ApiError.notFound()
    return mfa
  }

  /** What proves `code` on `mfa`: a TOTP step, else (when allowed) a recovery code's hash; undefined for neither. */
  const proofOf = async (mfa: Mfa, code: string | undefined, allowRecovery: boolean): Promise<MfaProof | undefined> => {
    if (!code) return undefined
    const step = matchingTotpStep(mfa, code, deps.clock.now())
    if (step !== undefined) return { kind: 'totp', step }
    if (!allowRecovery || !mfa.isVerified || !isRecoveryCodeShaped(code)) return undefined
    // a record verified before schema 4 holds hashes of its codes: the code's hash is worked out only for such a one
    if (mfa.recoveryCodeHashes.length === 0) return { kind: 'recovery', code }
    return { kind: 'recovery', code, hash: await hashRecoveryCode(code, mfa.recoveryCodeSalt) }
  }

  /** `accepted` from the actor (the identity's failed-attempt count starts again), or the refusal. */
  const settle = async (result: { accepted: boolean }, identity: Identity, change: ChangeContext): Promise<void> => {
    if (!result.accepted) await refuseMfaCode(deps, identity, change)
    await recordSuccess(deps, identity.id, change)
  }

  const verifyEnrollment = async (identity: Identity, code: string | undefined, change: ChangeContext): Promise<void> => {
    const mfa = recordOf(identity)
    if (mfa.isVerified) throw ApiError.notFound()
    const proof = await proofOf(mfa, code, false)
    if (proof?.kind !== 'totp') return refuseMfaCode(deps, identity, change)
    const result = await deps.identities.ask({ type: 'mfa.verify', identityId: identity.id, mfaId: mfa.id, step: proof.step, change })
    await settle(result, identity, change)
  }

  const acceptCode = async (identity: Identity, code: string | undefined, change: ChangeContext): Promise<void> => {
    const mfa = deps.identities.snapshot().mfaOf(identity.id)
    if (!mfa?.isVerified) throw new ApiError('MFA_NOT_ENROLLED')
    const proof = await proofOf(mfa, code, true)
    if (!proof) return refuseMfaCode(deps, identity, change)
    const result = await deps.identities.ask({ type: 'mfa.accept', identityId: identity.id, mfaId: mfa.id, proof, allowRecovery: true, change })
    await settle(result, identity, change)
  }

  return {
    async enroll(identity, change) {
      // before any work: the common refusal needs no secret
      if (deps.identities.snapshot().mfaOf(identity.id)) throw new ApiError('MFA_EXISTS')
      const secret = new Secret({ size: 10 }).base32
      return deps.identities.ask({
        type: 'mfa.create',
        identityId: identity.id,
        secret,
        recoveryCodes: newRecoveryCodes(),
        change,
      })
    },

    recordOf,

    provisioningUrlOf(identity) {
      const mfa = recordOf(identity)
      if (mfa.isVerified) throw ApiError.notFound()
      return provisioningUrl(deps.issuer, identity.name, mfa.secret)
    },

    async verify(caller, code, change) {
      await verifyEnrollment(caller.identity, code, change)
      // an OIDC session is stored nowhere: its tokens say what was completed at sign-in
      if (!caller.bearer) await deps.sessions.ask({ type: 'apiSession.completeMfa', id: caller.session.id, change })
    },

    verifyEnrollment,

    async authenticate(caller, code, change) {
      await acceptCode(caller.identity, code, change)
      if (!caller.bearer) await deps.sessions.ask({ type: 'apiSession.completeMfa', id: caller.session.id, change })
    },

    acceptCode,

    async remove(identity, code, change) {
      const mfa = recordOf(identity)
      let proof: MfaProof | null = null
      if (mfa.isVerified) {
        proof = (await proofOf(mfa, code, true)) ?? null
        if (!proof) return refuseMfaCode(deps, identity, change)
      }
      await settle(await deps.identities.ask({ type: 'mfa.delete', identityId: identity.id, mfaId: mfa.id, proof, change }), identity, change)
    },

    async removeByAdmin(identityId, change) {
      await deps.identities.ask({ type: 'mfa.delete', identityId, proof: 'admin', change })
    },

    async readRecoveryCodes(identity, code, change) {
      const mfa = verifiedOf(identity)
      const proof = await proofOf(mfa, code, false)
      if (!proof) return refuseMfaCode(deps, identity, change)
      const result = await deps.identities.ask({ type: 'mfa.accept', identityId: identity.id, mfaId: mfa.id, proof, allowRecovery: false, change })
      await settle(result, identity, change)
      const read = recordOf(identity)
      return { mfa: read, recoveryCodes: [...read.recoveryCodes] }
    },

    async regenerateRecoveryCodes(identity, code, change) {
      const mfa = verifiedOf(identity)
      const proof = await proofOf(mfa, code, true)
      if (!proof) return refuseMfaCode(deps, identity, change)
      const recoveryCodes = newRecoveryCodes()
      const result = await deps.identities.ask({ type: 'mfa.replaceRecoveryCodes', identityId: identity.id, mfaId: mfa.id, proof, recoveryCodes, change })
      await settle(result, identity, change)
      return { recoveryCodes }
    },
  }
}
