/**
 * The CA actor's handlers of third-party CAs (`/cas`): decide with domain/ca checks, then apply synchronously (state,
 * the `cas` sub-db, events). A write that touches a verified CA announces the new trust list (`ca.trustChanged`).
 */
import {
  decideCaCertificateUnused,
  decideCaName,
  decideExternalIdClaim,
  decideIdentityNameFormat,
  decideIdentityRoles,
  decideVerifiable,
  type ExternalIdClaimInput,
} from '../../domain/ca/ca-decide.ts'
import type { ExternalIdClaim, ThirdPartyCa } from '../../domain/ca/ca-types.ts'
import { ApiError } from '../../errors/api-error.ts'
import { newShortId, newUuid } from '../../lib/ids.ts'
import { parseCaCertificatePem } from '../../pki/pki-certs.ts'
import type { Tx } from '../runtime/actor-runtime.ts'
import type { CaEvent, CaMsg } from './ca-messages.ts'
import type { CaState } from './ca-state.ts'

type Msg<T extends CaMsg['type']> = Extract<CaMsg, { type: T }>

export function createCa(state: CaState, msg: Msg<'ca.create'>, tx: Tx<CaEvent>): { id: string } {
  const input = msg.input
  const id = newShortId()
  const name = decideCaName(state, input.name)
  const cert = parseCaCertificatePem(input.certPem)
  decideCaCertificateUnused(state, cert.fingerprintSha1, input.certPem)
  const ca: ThirdPartyCa = {
    id,
    name,
    certPem: input.certPem,
    fingerprint: cert.fingerprintSha1,
    isVerified: false,
    verificationToken: newUuid(),
    isAutoCaEnrollmentEnabled: input.isAutoCaEnrollmentEnabled ?? false,
    isOttCaEnrollmentEnabled: input.isOttCaEnrollmentEnabled ?? false,
    isAuthEnabled: input.isAuthEnabled ?? false,
    identityRoles: decideIdentityRoles(input.identityRoles),
    identityNameFormat: decideIdentityNameFormat(input.identityNameFormat),
    externalIdClaim: input.externalIdClaim ? decideExternalIdClaim(input.externalIdClaim) : null,
    tags: input.tags ?? {},
    createdAt: tx.now,
    updatedAt: tx.now,
  }
  put(state, ca, tx)
  return { id }
}

export function updateCa(state: CaState, msg: Msg<'ca.update'>, tx: Tx<CaEvent>): void {
  const prev = state.cas.get(msg.id)
  if (!prev) throw ApiError.notFound()
  const input = msg.input
  const next: ThirdPartyCa = {
    ...prev,
    name: input.name === undefined ? prev.name : decideCaName(state, input.name, prev.id),
    isAutoCaEnrollmentEnabled: input.isAutoCaEnrollmentEnabled ?? prev.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: input.isOttCaEnrollmentEnabled ?? prev.isOttCaEnrollmentEnabled,
    isAuthEnabled: input.isAuthEnabled ?? prev.isAuthEnabled,
    // a null in a PATCH is no value (the CLI sends `identityRoles: null` when it changes other fields)
    identityRoles: input.identityRoles === undefined || (input.identityRoles === null && !msg.replace) ? prev.identityRoles : decideIdentityRoles(input.identityRoles),
    identityNameFormat: input.identityNameFormat === undefined ? prev.identityNameFormat : decideIdentityNameFormat(input.identityNameFormat),
    externalIdClaim: nextClaim(prev.externalIdClaim, input.externalIdClaim, msg.replace),
    tags: input.tags !== undefined ? (input.tags ?? {}) : msg.replace ? {} : prev.tags,
    updatedAt: tx.now,
  }
  put(state, next, tx)
}

/**
 * The claim after an update, as the real controller's CA store keeps it (the official CLI relies on it):
 * - PUT replaces the claim; absent or null removes it
 * - PATCH without a claim, or with null, removes it (the CLI's `--clear-external-id-claim` omits it)
 * - PATCH with a claim lays its members over the stored one; `{}` keeps the stored claim (the CLI sends it with every
 *   other change), and on a CA without one adds none
 */
function nextClaim(stored: ExternalIdClaim | null, given: ExternalIdClaimInput | null | undefined, replace: boolean): ExternalIdClaim | null {
  if (given === null || given === undefined) return null
  if (replace) return decideExternalIdClaim(given)
  const givenMembers = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined))
  if (stored === null && Object.keys(givenMembers).length === 0) return null
  return decideExternalIdClaim({ ...(stored ?? {}), ...givenMembers })
}

export function verifyCa(state: CaState, msg: Msg<'ca.verify'>, tx: Tx<CaEvent>): void {
  const prev = decideVerifiable(state.cas.get(msg.id))
  put(state, { ...prev, isVerified: true, updatedAt: tx.now }, tx)
}

export function deleteCa(state: CaState, msg: Msg<'ca.delete'>, tx: Tx<CaEvent>): void {
  if (!state.cas.has(msg.id)) throw ApiError.notFound()
  const { removed, trustChanged } = state.removeCa(msg.id)
  tx.remove('cas', msg.id)
  if (removed) tx.emit({ type: 'ca.deleted', ca: removed })
  if (trustChanged) emitTrust(state, tx)
}

function put(state: CaState, ca: ThirdPartyCa, tx: Tx<CaEvent>): void {
  const trustChanged = state.putCa(ca)
  tx.put('cas', ca.id, ca)
  if (trustChanged) emitTrust(state, tx)
}

function emitTrust(state: CaState, tx: Tx<CaEvent>): void {
  tx.emit({ type: 'ca.trustChanged', verified: state.verifiedCas(), trustVersion: state.trustVersion })
}
