/**
 * The identity actor's handlers for MFA records (sub-db `mfas`, keyed by identity id). Codes were checked against a
 * snapshot before asking (flows/authenticate/auth-mfa.ts); here each proof is decided again on the record held, so a
 * TOTP step or a recovery code is used once even when two requests race.
 * - a message names the record it was worked out on (`mfaId`): a record deleted and made anew meanwhile is 404
 * - a proof that no longer holds answers `{ accepted: false }` and changes nothing (the flow refuses the code)
 */
import { ApiError } from '../../errors/api-error.ts'
import { assertNever } from '../../lib/assert-never.ts'
import { newShortId } from '../../lib/ids.ts'
import { applyProof, type Mfa } from '../../domain/identity/identity-mfa.ts'
import type { Tx } from '../runtime/actor-runtime.ts'
import type { IdentityEvent, IdentityMsg } from './identity-messages.ts'
import type { IdentityState } from './identity-state.ts'

type MfaMsg<T extends IdentityMsg['type']> = Extract<IdentityMsg, { type: T }>
type AnyMfaMsg = MfaMsg<'mfa.create' | 'mfa.verify' | 'mfa.accept' | 'mfa.replaceRecoveryCodes' | 'mfa.delete'>

/** The identity actor's `mfa.*` messages. */
export function handleMfa(state: IdentityState, msg: AnyMfaMsg, tx: Tx<IdentityEvent>) {
  switch (msg.type) {
    case 'mfa.create':
      return createMfa(state, msg, tx)
    case 'mfa.verify':
      return verifyMfa(state, msg, tx)
    case 'mfa.accept':
      return acceptMfaProof(state, msg, tx)
    case 'mfa.replaceRecoveryCodes':
      return replaceRecoveryCodes(state, msg, tx)
    case 'mfa.delete':
      return deleteMfa(state, msg, tx)
    default:
      return assertNever(msg, 'MFA message')
  }
}

/** Stores an MFA record in the state and stages its write. */
function saveMfa(state: IdentityState, tx: Tx<IdentityEvent>, m: Mfa): void {
  state.putMfa(m)
  tx.put('mfas', m.identityId, m)
}

/** Removes an identity's MFA record, if it has one (apply only). */
export function removeMfa(state: IdentityState, tx: Tx<IdentityEvent>, identityId: string): boolean {
  if (!state.mfaOf(identityId)) return false
  state.removeMfa(identityId)
  tx.remove('mfas', identityId)
  return true
}

/** The record a message was worked out on; 404 when it is gone or was replaced. */
function heldMfa(state: IdentityState, identityId: string, mfaId: string): Mfa {
  const m = state.mfaOf(identityId)
  if (!m || m.id !== mfaId) throw ApiError.notFound()
  return m
}

function createMfa(state: IdentityState, msg: MfaMsg<'mfa.create'>, tx: Tx<IdentityEvent>) {
  if (!state.identity(msg.identityId)) throw ApiError.notFound()
  if (state.mfaOf(msg.identityId)) throw new ApiError('MFA_EXISTS')
  const m: Mfa = {
    id: newShortId(),
    identityId: msg.identityId,
    isVerified: false,
    secret: msg.secret,
    recoveryCodes: [...msg.recoveryCodes],
    recoveryCodeHashes: [],
    recoveryCodeSalt: '',
    lastTotpStep: null,
    tags: {},
    createdAt: tx.now,
    updatedAt: tx.now,
  }
  saveMfa(state, tx, m)
  return { id: m.id }
}

/** Started → Verified with a TOTP step: its recovery codes work from now on. */
function verifyMfa(state: IdentityState, msg: MfaMsg<'mfa.verify'>, tx: Tx<IdentityEvent>) {
  const m = heldMfa(state, msg.identityId, msg.mfaId)
  if (m.isVerified) throw ApiError.notFound()
  const used = applyProof(m, { kind: 'totp', step: msg.step }, tx.now, false)
  if (!used) return { accepted: false }
  saveMfa(state, tx, { ...used, isVerified: true })
  return { accepted: true }
}

/** Uses a proof on a Verified record (authenticate/mfa, reading recovery codes). */
function acceptMfaProof(state: IdentityState, msg: MfaMsg<'mfa.accept'>, tx: Tx<IdentityEvent>) {
  const m = heldMfa(state, msg.identityId, msg.mfaId)
  if (!m.isVerified) throw new ApiError('MFA_NOT_ENROLLED')
  const used = applyProof(m, msg.proof, tx.now, msg.allowRecovery)
  if (!used) return { accepted: false }
  saveMfa(state, tx, used)
  return { accepted: true }
}

/** A proof on a Verified record, then all its recovery codes (and any legacy hashes) replaced by `recoveryCodes`. */
function replaceRecoveryCodes(state: IdentityState, msg: MfaMsg<'mfa.replaceRecoveryCodes'>, tx: Tx<IdentityEvent>) {
  const m = heldMfa(state, msg.identityId, msg.mfaId)
  if (!m.isVerified) throw ApiError.notFound()
  const used = applyProof(m, msg.proof, tx.now, true)
  if (!used) return { accepted: false }
  saveMfa(state, tx, { ...used, recoveryCodes: [...msg.recoveryCodes], recoveryCodeHashes: [], recoveryCodeSalt: '' })
  return { accepted: true }
}

/**
 * Removes the record: a Started one freely, a Verified one with a proof that holds (TOTP or recovery code), or any one
 * for an admin (`proof: 'admin'`). 404 when there is none.
 */
function deleteMfa(state: IdentityState, msg: MfaMsg<'mfa.delete'>, tx: Tx<IdentityEvent>) {
  const m = state.mfaOf(msg.identityId)
  if (!m || (msg.mfaId !== undefined && m.id !== msg.mfaId)) throw ApiError.notFound()
  if (m.isVerified && msg.proof !== 'admin' && (msg.proof === null || !applyProof(m, msg.proof, tx.now, true))) return { accepted: false }
  removeMfa(state, tx, msg.identityId)
  return { accepted: true }
}
