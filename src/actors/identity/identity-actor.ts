/**
 * The identity actor: sole writer of the `identities`, `authenticators`, `enrollments`, `mfas`, `auth-policies`,
 * `auth-failures` and `revocations` sub-dbs. An identity's enrollments and its MFA are part of its aggregate: made in its create
 * transaction (enrollments), redeemed (enrollment removed, authenticator created) in one transaction, removed with it.
 * Authentication policies are here because identities name them (an identity's policy is checked in the same mailbox
 * as the identity). Revocations of OIDC tokens are here because an identity's disable, lockout and delete and an
 * authenticator's delete revoke the identity's tokens in the same commit (identity-revocation-apply.ts).
 * Handlers decide with domain/identity and domain/enrollment checks, then apply synchronously.
 */
import { ApiError } from '../../errors/api-error.ts'
import { assertNever } from '../../lib/assert-never.ts'
import { newShortId } from '../../lib/ids.ts'
import {
  decideAuthPolicyId,
  decideCertUnused,
  decideDeleteIdentity,
  decideExternalId,
  decideName,
  decideNewCertAuthenticator,
  decideNewUpdbAuthenticator,
  decideRoleAttributes,
  decideUpdbChange,
  decideUpdbUsername,
  type IdentityLookup,
} from '../../domain/identity/identity-decide.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import { decideCertExtendable, decideExtendRequest, decideExtendVerify } from '../../domain/identity/identity-cert-extend.ts'
import { decideNewEnrollment, decideRedeemable } from '../../domain/enrollment/enrollment-decide.ts'
import { uniqueIdentityName } from '../../domain/ca/ca-claims.ts'
import type { Enrollment } from '../../domain/enrollment/enrollment-types.ts'
import { DEFAULT_AUTH_POLICY, type Authenticator, type Identity } from '../../domain/identity/identity-types.ts'
import {
  decideAuthPolicy,
  decideDeleteAuthPolicy,
  decideFailedAttempt,
  disabledFor,
  type AuthPolicy,
} from '../../domain/identity/identity-auth-policy.ts'
import type { Store } from '../../store/store-env.ts'
import { Actor, type ActorBehavior, type ActorSystemDeps, type Tx } from '../runtime/actor-runtime.ts'
import type { IdentityEvent, IdentityFields, IdentityMsg, IdentityRepair, IdentityReplies } from './identity-messages.ts'
import { IdentityState } from './identity-state.ts'
import { handleMfa, removeMfa } from './identity-mfa-apply.ts'
import type { Mfa } from '../../domain/identity/identity-mfa.ts'
import { handleRevocation, removeMalformedRevocation, revokeIdentity } from './identity-revocation-apply.ts'
import { DEFAULT_REFRESH_TOKEN_MS, revocationLifetimeMs, type Revocation } from '../../domain/identity/identity-revocation.ts'

export type IdentityActor = Actor<IdentityState, IdentityMsg, IdentityReplies, IdentityEvent, IdentityReads>

const behavior: ActorBehavior<IdentityState, IdentityMsg, IdentityReplies, IdentityEvent> = {
  owner: 'identity',
  handle(state, msg, tx) {
    switch (msg.type) {
      case 'identity.create':
        return createIdentity(state, msg, tx)
      case 'identity.update':
        return updateIdentity(state, msg.id, msg.input, msg.replace, tx)
      case 'identity.delete':
        return deleteIdentity(state, msg.id, tx)
      case 'identity.syncRouterIdentity':
        return syncRouterIdentity(state, msg, tx)
      case 'identity.recordClientInfo': {
        const prev = state.identity(msg.id)
        if (!prev) return
        const next: Identity = {
          ...prev,
          envInfo: msg.envInfo ?? prev.envInfo,
          sdkInfo: msg.sdkInfo ?? prev.sdkInfo,
          updatedAt: tx.now,
        }
        state.putIdentity(next)
        tx.put('identities', next.id, next)
        return
      }
      case 'enrollment.redeemWithCertificate':
        return redeemWithCertificate(state, msg, tx)
      case 'enrollment.redeemWithPassword':
        return redeemWithPassword(state, msg, tx)
      case 'enrollment.create': {
        if (!state.identity(msg.identityId)) {
          throw ApiError.invalidField('identityId', `no identity found with id '${msg.identityId}'`, msg.identityId)
        }
        decideNewEnrollment(state.enrollmentsOf(msg.identityId), msg.enrollment.method)
        if (msg.enrollment.username !== null) decideUpdbUsername(state, msg.enrollment.username)
        const e: Enrollment = { ...msg.enrollment, id: newShortId(), identityId: msg.identityId, createdAt: tx.now, updatedAt: tx.now }
        saveEnrollment(state, tx, e)
        return { id: e.id }
      }
      case 'enrollment.refresh': {
        const prev = state.enrollments.get(msg.id)
        if (!prev) throw ApiError.notFound()
        const next: Enrollment = { ...prev, token: msg.token, jwt: msg.jwt, expiresAt: msg.expiresAt, updatedAt: tx.now }
        saveEnrollment(state, tx, next)
        return
      }
      case 'enrollment.delete': {
        if (!state.enrollments.has(msg.id)) throw ApiError.notFound()
        state.removeEnrollment(msg.id)
        tx.remove('enrollments', msg.id)
        return
      }
      case 'authenticator.createUpdb': {
        decideNewUpdbAuthenticator(state, msg.identityId, msg.username)
        const a = updbAuthenticator(msg.identityId, msg.username, msg.passwordHash, msg.tags ?? {}, tx.now)
        saveAuthenticator(state, tx, a)
        return { id: a.id }
      }
      case 'authenticator.update': {
        const prev = state.authenticators.get(msg.id)
        if (!prev) throw ApiError.notFound()
        decideUpdbChange(prev, msg.username !== undefined || msg.passwordHash !== undefined)
        if (msg.username !== undefined) decideUpdbUsername(state, msg.username, prev.id)
        const next: Authenticator = {
          ...prev,
          username: msg.username ?? prev.username,
          passwordHash: msg.passwordHash ?? prev.passwordHash,
          // given tags replace the map (put and patch alike); a put without tags clears them
          tags: msg.tags !== undefined ? msg.tags : msg.replaceTags ? {} : prev.tags,
          updatedAt: tx.now,
        }
        saveAuthenticator(state, tx, next)
        return
      }
      case 'authenticator.delete': {
        const prev = state.authenticators.get(msg.id)
        if (!prev) throw ApiError.notFound()
        removeAuthenticator(state, prev, tx)
        return
      }
      case 'authenticator.extendCert': {
        const prev = decideCertExtendable(state.authenticators.get(msg.id), msg.identityId)
        if (state.certByFingerprintOf(msg.fingerprint)) throw new TypeError(`certificate ${msg.fingerprint} already belongs to an authenticator`)
        const next: Authenticator = { ...prev, unverifiedCertPem: msg.certPem, unverifiedFingerprint: msg.fingerprint, updatedAt: tx.now }
        saveAuthenticator(state, tx, next)
        return
      }
      case 'authenticator.verifyExtendedCert': {
        const prev = state.authenticators.get(msg.id)
        const proven = decideExtendVerify(prev, msg.identityId, msg.fingerprint)
        const { unverifiedCertPem: _pem, unverifiedFingerprint: _fp, ...rest } = prev!
        const next: Authenticator = {
          ...rest,
          certPem: proven.certPem,
          fingerprint: proven.fingerprint,
          // the extension an admin asked for is done
          isExtendRequested: false,
          isKeyRollRequested: false,
          extendRequestedAt: null,
          lastExtendRolledKeys: msg.rolledKeys,
          updatedAt: tx.now,
        }
        saveAuthenticator(state, tx, next)
        return
      }
      case 'authenticator.requestExtend': {
        const prev = decideExtendRequest(state.authenticators.get(msg.id))
        saveAuthenticator(state, tx, { ...prev, isExtendRequested: true, isKeyRollRequested: msg.rollKeys, extendRequestedAt: tx.now, updatedAt: tx.now })
        return
      }
      case 'authenticator.createCert': {
        decideNewCertAuthenticator(state, msg.identityId, msg.fingerprint)
        const a = certAuthenticator(msg.identityId, msg, false, msg.caId, msg.tags ?? {}, tx.now)
        saveAuthenticator(state, tx, a)
        return { id: a.id }
      }
      case 'authenticator.reEnroll':
        return reEnroll(state, msg, tx)
      case 'identity.enrollByCa':
        return enrollByCa(state, msg, tx)
      case 'identity.enrollByToken':
        return enrollByToken(state, msg, tx)
      case 'identity.forgetCa':
        return forgetCa(state, msg.caId, tx)
      case 'authPolicy.create': {
        const policy = decideAuthPolicy(state, newShortId(), undefined, msg.input, true, tx.now)
        saveAuthPolicy(state, tx, policy)
        return { id: policy.id }
      }
      case 'authPolicy.update': {
        const prev = state.authPolicy(msg.id)
        if (!prev) throw ApiError.notFound()
        saveAuthPolicy(state, tx, decideAuthPolicy(state, prev.id, prev, msg.input, msg.replace, tx.now))
        return
      }
      case 'authPolicy.delete': {
        const policy = decideDeleteAuthPolicy(state.authPolicy(msg.id), state.identityIdsWithAuthPolicy(msg.id), state.signersEnrollingInto(msg.id))
        state.authPolicies.remove(policy.id)
        tx.remove('auth-policies', policy.id)
        return
      }
      case 'identity.disable': {
        const prev = state.identity(msg.id)
        if (!prev) throw ApiError.notFound()
        putIdentity(state, tx, disabledFor(prev, msg.durationMinutes, tx.now), prev)
        revokeIdentity(state, tx, prev.id)
        return
      }
      case 'identity.enable': {
        const prev = state.identity(msg.id)
        if (!prev) throw ApiError.notFound()
        setAuthFailures(state, tx, prev.id, 0)
        if (prev.disabledAt !== null || prev.disabledUntil !== null) {
          putIdentity(state, tx, { ...prev, disabledAt: null, disabledUntil: null, updatedAt: tx.now }, prev)
        }
        return
      }
      case 'identity.recordAuthFailure': {
        const prev = state.identity(msg.id)
        if (!prev) return { disabled: false }
        const policy = state.authPolicy(prev.authPolicyId)
        if (!policy) throw new TypeError(`identity ${prev.id} names the unknown auth policy '${prev.authPolicyId}'`)
        const outcome = decideFailedAttempt(policy.primary.updb, state.authFailuresOf(prev.id), tx.now)
        setAuthFailures(state, tx, prev.id, outcome.failures)
        if (!outcome.disable) return { disabled: false }
        putIdentity(state, tx, { ...prev, ...outcome.disable, updatedAt: tx.now }, prev)
        revokeIdentity(state, tx, prev.id)
        return { disabled: true }
      }
      case 'identity.recordAuthSuccess':
        setAuthFailures(state, tx, msg.id, 0)
        return
      case 'mfa.create':
      case 'mfa.verify':
      case 'mfa.accept':
      case 'mfa.replaceRecoveryCodes':
      case 'mfa.delete':
        return handleMfa(state, msg, tx)
      case 'integrity.repair':
        return msg.repairs.filter((r) => repair(state, r, tx)).length
      case 'revocation.create':
      case 'revocation.prune':
        return handleRevocation(state, msg, tx)
      default:
        return assertNever(msg, 'identity message')
    }
  },
}

/** Applies one integrity repair; false when there was nothing (left) to change. */
function repair(state: IdentityState, r: IdentityRepair, tx: Tx<IdentityEvent>): boolean {
  switch (r.kind) {
    // the identity's existence is re-checked here (a finding may be older than the latest writes); a third-party CA's
    // is not this actor's to know: a record naming one is removed as found
    case 'authenticator.remove': {
      const a = state.authenticators.get(r.id)
      if (!a || (state.identity(a.identityId) && !a.caId)) return false
      removeAuthenticator(state, a, tx)
      return true
    }
    case 'enrollment.remove': {
      const e = state.enrollments.get(r.id)
      if (!e || (state.identity(e.identityId) && !e.caId)) return false
      state.removeEnrollment(r.id)
      tx.remove('enrollments', r.id)
      return true
    }
    case 'mfa.remove':
      return !state.identity(r.identityId) && removeMfa(state, tx, r.identityId)
    case 'authFailures.remove': {
      if (state.identity(r.identityId) || state.authFailuresOf(r.identityId) === 0) return false
      setAuthFailures(state, tx, r.identityId, 0)
      return true
    }
    case 'identity.resetAuthPolicy': {
      const prev = state.identity(r.id)
      if (!prev || prev.authPolicyId !== r.authPolicyId || state.authPolicy(r.authPolicyId)) return false
      putIdentity(state, tx, { ...prev, authPolicyId: DEFAULT_AUTH_POLICY.id, updatedAt: tx.now }, prev)
      return true
    }
    case 'authPolicy.dropSigner': {
      const prev = state.authPolicy(r.id)
      if (!prev || state.knownSigner(r.signerId)) return false
      const allowed = prev.primary.extJwt.allowedSigners
      const required = prev.secondary.requireExtJwtSigner
      if (!allowed?.includes(r.signerId) && required !== r.signerId) return false
      saveAuthPolicy(state, tx, {
        ...prev,
        primary: { ...prev.primary, extJwt: { ...prev.primary.extJwt, allowedSigners: allowed ? allowed.filter((s) => s !== r.signerId) : null } },
        secondary: { ...prev.secondary, requireExtJwtSigner: required === r.signerId ? null : required },
        updatedAt: tx.now,
      })
      return true
    }
    case 'revocation.remove':
      return removeMalformedRevocation(state, tx, r.id)
    default:
      return assertNever(r, 'identity repair')
  }
}

function createIdentity(
  state: IdentityState,
  msg: Extract<IdentityMsg, { type: 'identity.create' }>,
  tx: Tx<IdentityEvent>,
  id = msg.id ?? newShortId(),
  isRouterIdentity = false,
) {
  if (state.identity(id)) throw new TypeError(`identity id '${id}' is taken`)
  const input = msg.input
  const { name, roleAttributes, authPolicyId } = decideNewIdentity(state, input, id)
  if (msg.updb) decideUpdbUsername(state, msg.updb.username)
  const enrollments: Enrollment[] = []
  for (const e of msg.enrollments ?? []) {
    decideNewEnrollment(enrollments, e.method)
    if (e.username !== null) decideUpdbUsername(state, e.username)
    enrollments.push({ ...e, id: newShortId(), identityId: id, createdAt: tx.now, updatedAt: tx.now })
  }
  const identity: Identity = {
    id,
    name,
    typeId: input.typeId ?? 'Default',
    isAdmin: input.isAdmin ?? false,
    isDefaultAdmin: msg.isDefaultAdmin ?? false,
    ...(isRouterIdentity ? { isRouterIdentity: true } : {}),
    roleAttributes,
    externalId: input.externalId ?? null,
    authPolicyId,
    appData: input.appData ?? null,
    tags: input.tags ?? {},
    defaultHostingCost: input.defaultHostingCost ?? 0,
    defaultHostingPrecedence: input.defaultHostingPrecedence ?? 'default',
    serviceHostingCosts: input.serviceHostingCosts ?? {},
    serviceHostingPrecedences: input.serviceHostingPrecedences ?? {},
    envInfo: {},
    sdkInfo: {},
    disabledAt: null,
    disabledUntil: null,
    createdAt: tx.now,
    updatedAt: tx.now,
  }
  state.putIdentity(identity)
  tx.put('identities', identity.id, identity)
  if (msg.updb) {
    const a = updbAuthenticator(identity.id, msg.updb.username, msg.updb.passwordHash, {}, tx.now)
    saveAuthenticator(state, tx, a)
  }
  for (const e of enrollments) {
    saveEnrollment(state, tx, e)
  }
  tx.emit({ type: 'identity.created', identity })
  return { id: identity.id }
}

/** The checks of a new identity's own fields (name, role attributes, auth policy, externalId); writes nothing. */
export function decideNewIdentity(lookup: IdentityLookup, input: IdentityFields & { name: string }, id?: string) {
  const name = decideName(lookup, input.name, id)
  const roleAttributes = decideRoleAttributes(input.roleAttributes)
  const authPolicyId = decideAuthPolicyId(lookup, input.authPolicyId)
  decideExternalId(lookup, input.externalId)
  return { name, roleAttributes, authPolicyId }
}

function updateIdentity(state: IdentityState, id: string, input: IdentityFields, replace: boolean, tx: Tx<IdentityEvent>) {
  const { next, prev } = buildIdentityUpdate(state, id, input, replace, tx.now)
  state.putIdentity(next)
  tx.put('identities', id, next)
  tx.emit({ type: 'identity.updated', identity: next, previous: prev })
}

/** Decides an identity put (`replace`) or patch: the record it would store and the one it replaces; writes nothing. */
export function buildIdentityUpdate(state: IdentityLookup, id: string, input: IdentityFields, replace: boolean, now: number): { next: Identity; prev: Identity } {
  const prev = state.identity(id)
  if (!prev) throw ApiError.notFound()
  // put replaces every settable field (absent optional ones reset to defaults); patch changes only what is given
  const pick = <K extends keyof IdentityFields>(k: K, dflt: Identity[K]): Identity[K] =>
    input[k] !== undefined ? (input[k] as Identity[K]) : replace ? dflt : prev[k]
  const name = input.name !== undefined ? decideName(state, input.name, id) : prev.name
  const roleAttributes =
    input.roleAttributes !== undefined ? decideRoleAttributes(input.roleAttributes) : replace ? null : prev.roleAttributes
  const authPolicyId =
    input.authPolicyId !== undefined ? decideAuthPolicyId(state, input.authPolicyId) : replace ? decideAuthPolicyId(state, null) : prev.authPolicyId
  const next: Identity = {
    ...prev,
    name,
    roleAttributes,
    authPolicyId,
    typeId: pick('typeId', prev.typeId),
    isAdmin: pick('isAdmin', false),
    externalId: decideExternalId(state, pick('externalId', null), id) ?? null,
    appData: pick('appData', null),
    tags: pick('tags', {}),
    defaultHostingCost: pick('defaultHostingCost', 0),
    defaultHostingPrecedence: pick('defaultHostingPrecedence', 'default'),
    serviceHostingCosts: pick('serviceHostingCosts', {}),
    serviceHostingPrecedences: pick('serviceHostingPrecedences', {}),
    updatedAt: now,
  }
  return { next, prev }
}

function deleteIdentity(state: IdentityState, id: string, tx: Tx<IdentityEvent>) {
  removeIdentity(state, decideDeleteIdentity(state.identity(id), id), tx)
}

/** Removes an identity with its authenticators (apply only: the caller decided). */
function removeIdentity(state: IdentityState, identity: Identity, tx: Tx<IdentityEvent>) {
  const id = identity.id
  for (const a of [...state.authenticatorsOf(id)]) {
    state.removeAuthenticator(a.id)
    tx.remove('authenticators', a.id)
  }
  for (const e of [...state.enrollmentsOf(id)]) {
    state.removeEnrollment(e.id)
    tx.remove('enrollments', e.id)
  }
  setAuthFailures(state, tx, id, 0)
  removeMfa(state, tx, id)
  state.removeIdentity(id)
  tx.remove('identities', id)
  revokeIdentity(state, tx, id)
  tx.emit({ type: 'identity.deleted', identity })
}

/** Stores a changed identity in the state, stages its write and tells subscribers. */
function putIdentity(state: IdentityState, tx: Tx<IdentityEvent>, next: Identity, previous: Identity): void {
  state.putIdentity(next)
  tx.put('identities', next.id, next)
  tx.emit({ type: 'identity.updated', identity: next, previous })
}

/** Stores an auth policy in the state and stages its write. */
function saveAuthPolicy(state: IdentityState, tx: Tx<IdentityEvent>, p: AuthPolicy): void {
  state.authPolicies.put(p)
  tx.put('auth-policies', p.id, p)
}

/** Sets an identity's failed-attempt count, persisted; 0 removes it (nothing is written when nothing changes). */
function setAuthFailures(state: IdentityState, tx: Tx<IdentityEvent>, identityId: string, failures: number): void {
  if (state.authFailuresOf(identityId) === failures) return
  if (failures === 0) {
    state.authFailures.delete(identityId)
    tx.remove('auth-failures', identityId)
  } else {
    state.authFailures.set(identityId, failures)
    tx.put('auth-failures', identityId, failures)
  }
}

/** Consumes an enrollment and creates the cert authenticator it was redeemed for, in one transaction. */
/** Stores an authenticator in the state and stages its write (the two never go apart). */
function saveAuthenticator(state: IdentityState, tx: Tx<IdentityEvent>, a: Authenticator): void {
  state.putAuthenticator(a)
  tx.put('authenticators', a.id, a)
  tx.emit({ type: 'authenticator.saved', authenticator: a })
}

/** Stores an enrollment in the state and stages its write. */
function saveEnrollment(state: IdentityState, tx: Tx<IdentityEvent>, e: Enrollment): void {
  state.putEnrollment(e)
  tx.put('enrollments', e.id, e)
}

function redeemWithCertificate(state: IdentityState, msg: Extract<IdentityMsg, { type: 'enrollment.redeemWithCertificate' }>, tx: Tx<IdentityEvent>) {
  const enrollment = decideRedeemable(state.enrollmentOfToken(msg.token), msg.method, tx.now)
  if (msg.isIssuedByNetwork && state.certByFingerprintOf(msg.fingerprint)) {
    // the CA issued this certificate moments ago with a random serial: a second holder is a bug, not a client's doing
    throw new TypeError(`certificate ${msg.fingerprint} already belongs to an authenticator`)
  }
  // a pre-exchanged certificate (ottca) may have been taken meanwhile
  decideCertUnused(state, msg.fingerprint)
  const a = certAuthenticator(enrollment.identityId, msg, msg.isIssuedByNetwork, msg.caId ?? null, {}, tx.now)
  state.removeEnrollment(enrollment.id)
  tx.remove('enrollments', enrollment.id)
  saveAuthenticator(state, tx, a)
  return { identityId: enrollment.identityId, authenticatorId: a.id }
}

/** Consumes an updb enrollment and creates the updb authenticator with its username, in one transaction. */
function redeemWithPassword(state: IdentityState, msg: Extract<IdentityMsg, { type: 'enrollment.redeemWithPassword' }>, tx: Tx<IdentityEvent>) {
  const enrollment = decideRedeemable(state.enrollmentOfToken(msg.token), 'updb', tx.now)
  const username = enrollment.username
  if (username === null) throw new TypeError(`updb enrollment ${enrollment.id} has no username`)
  decideNewUpdbAuthenticator(state, enrollment.identityId, username)
  const a = updbAuthenticator(enrollment.identityId, username, msg.passwordHash, {}, tx.now)
  state.removeEnrollment(enrollment.id)
  tx.remove('enrollments', enrollment.id)
  saveAuthenticator(state, tx, a)
  return { identityId: enrollment.identityId, authenticatorId: a.id, username }
}

/** A new cert authenticator record (the caller decided it may exist). */
function certAuthenticator(
  identityId: string,
  cert: { certPem: string; fingerprint: string },
  isIssuedByNetwork: boolean,
  caId: string | null,
  tags: Authenticator['tags'],
  now: number,
): Authenticator {
  return {
    id: newShortId(),
    identityId,
    method: 'cert',
    certPem: cert.certPem,
    fingerprint: cert.fingerprint,
    isIssuedByNetwork,
    ...(caId !== null ? { caId } : {}),
    tags,
    createdAt: now,
    updatedAt: now,
  }
}

/** Removes an authenticator (apply only); the tokens of its identity are revoked in the same transaction. */
function removeAuthenticator(state: IdentityState, a: Authenticator, tx: Tx<IdentityEvent>): void {
  state.removeAuthenticator(a.id)
  tx.remove('authenticators', a.id)
  revokeIdentity(state, tx, a.identityId)
  tx.emit({ type: 'authenticator.deleted', authenticator: a })
}

/** An authenticator becomes an enrollment again: removed, and the enrollment made for it stored, in one transaction. */
function reEnroll(state: IdentityState, msg: Extract<IdentityMsg, { type: 'authenticator.reEnroll' }>, tx: Tx<IdentityEvent>) {
  const prev = state.authenticators.get(msg.id)
  if (!prev) throw ApiError.notFound()
  const others = [...state.enrollmentsOf(prev.identityId)]
  decideNewEnrollment(others, msg.enrollment.method)
  const e: Enrollment = { ...msg.enrollment, id: newShortId(), identityId: prev.identityId, createdAt: tx.now, updatedAt: tx.now }
  removeAuthenticator(state, prev, tx)
  saveEnrollment(state, tx, e)
  return { id: e.id }
}

/** CA auto-enrollment: the identity and its cert authenticator (or its externalId), in one transaction. */
function enrollByCa(state: IdentityState, msg: Extract<IdentityMsg, { type: 'identity.enrollByCa' }>, tx: Tx<IdentityEvent>) {
  if (msg.cert) decideCertUnused(state, msg.cert.fingerprint)
  // taken: held by an identity, or reserved for a router's identity (decideName's two refusals)
  const name = uniqueIdentityName(msg.name, (n) => state.identityIdByName(n) !== undefined || state.reservedNameHolder(n) !== undefined)
  const created = createIdentity(
    state,
    { type: 'identity.create', input: { name, typeId: 'Default', isAdmin: false, roleAttributes: [...msg.roleAttributes], externalId: msg.externalId }, change: msg.change },
    tx,
    msg.id,
  )
  let authenticatorId: string | null = null
  if (msg.cert) {
    const a = certAuthenticator(created.id, msg.cert, false, msg.cert.caId, {}, tx.now)
    saveAuthenticator(state, tx, a)
    authenticatorId = a.id
  }
  return { id: created.id, name, authenticatorId }
}

/** Token enrollment: the identity and, for a certificate enrollment, its network-issued cert authenticator, in one transaction. */
function enrollByToken(state: IdentityState, msg: Extract<IdentityMsg, { type: 'identity.enrollByToken' }>, tx: Tx<IdentityEvent>) {
  // another enrollment of the same token (or an admin's identity with that externalId) won
  if (state.identityByExternalId(msg.externalId)) throw new ApiError('ENROLLMENT_IDENTITY_ALREADY_ENROLLED')
  if (msg.cert && state.certByFingerprintOf(msg.cert.fingerprint)) {
    // the CA issued this certificate moments ago with a random serial: a second holder is a bug, not a client's doing
    throw new TypeError(`certificate ${msg.cert.fingerprint} already belongs to an authenticator`)
  }
  const created = createIdentity(
    state,
    {
      type: 'identity.create',
      input: {
        name: msg.name,
        typeId: 'Default',
        isAdmin: false,
        roleAttributes: [...msg.roleAttributes],
        authPolicyId: msg.authPolicyId,
        externalId: msg.externalId,
      },
      change: msg.change,
    },
    tx,
    msg.id,
  )
  if (!msg.cert) return { id: created.id, authenticatorId: null }
  const a = certAuthenticator(created.id, msg.cert, true, null, {}, tx.now)
  saveAuthenticator(state, tx, a)
  return { id: created.id, authenticatorId: a.id }
}

/** What hangs on a deleted third-party CA goes: its cert authenticators and its ottca enrollments. */
function forgetCa(state: IdentityState, caId: string, tx: Tx<IdentityEvent>) {
  const authenticators = [...state.authenticators.values()].filter((a) => a.method === 'cert' && a.caId === caId)
  const enrollments = [...state.enrollments.values()].filter((e) => e.method === 'ottca' && e.caId === caId)
  for (const a of authenticators) removeAuthenticator(state, a, tx)
  for (const e of enrollments) {
    state.removeEnrollment(e.id)
    tx.remove('enrollments', e.id)
  }
  return { authenticators: authenticators.length, enrollments: enrollments.length }
}

/** A new updb authenticator record (the caller decided it may exist). */
function updbAuthenticator(identityId: string, username: string, passwordHash: string, tags: Authenticator['tags'], now: number): Authenticator {
  return { id: newShortId(), identityId, method: 'updb', username, passwordHash, tags, createdAt: now, updatedAt: now }
}

/** The identity of a tunneler-enabled edge router follows the router: created, renamed, or deleted. */
function syncRouterIdentity(state: IdentityState, msg: Extract<IdentityMsg, { type: 'identity.syncRouterIdentity' }>, tx: Tx<IdentityEvent>) {
  const prev = state.identity(msg.routerId)
  if (!msg.present) {
    // not decideDeleteIdentity: the router is gone or no longer tunnels, so its identity goes (the guard is for admins)
    if (prev) removeIdentity(state, prev, tx)
    return
  }
  const name = decideName(state, msg.name, msg.routerId)
  if (prev) {
    if (prev.name === name && prev.typeId === 'Router' && prev.isRouterIdentity) return
    const next: Identity = { ...prev, name, typeId: 'Router', isRouterIdentity: true, updatedAt: tx.now }
    state.putIdentity(next)
    tx.put('identities', next.id, next)
    tx.emit({ type: 'identity.updated', identity: next, previous: prev })
    return
  }
  createIdentity(state, { type: 'identity.create', input: { name, typeId: 'Router', isAdmin: false }, change: msg.change }, tx, msg.routerId, true)
}

/** Start options of the identity actor. */
export interface IdentityActorOptions {
  /** The OIDC refresh-token lifetime (ms): revocations made without an expiry outlive it by a minute. Default 24 h. */
  refreshTokenMs?: number
  /** The external JWT signers that enroll identities into an auth policy (it may not be deleted while one does). */
  signersEnrollingInto?: (policyId: string) => readonly string[]
}

/**
 * Loads the aggregate from LMDB and starts its actor. `reservedNameHolder` tells which router a name is reserved for
 * (the policy graph's tunneler-enabled edge routers); without it no name is reserved.
 */
export function startIdentityActor(
  store: Store,
  deps: ActorSystemDeps,
  reservedNameHolder?: (name: string) => string | undefined,
  knownSigner?: (id: string) => boolean,
  opts: IdentityActorOptions = {},
): IdentityActor {
  const state = new IdentityState(
    reservedNameHolder,
    knownSigner,
    revocationLifetimeMs(opts.refreshTokenMs ?? DEFAULT_REFRESH_TOKEN_MS),
    opts.signersEnrollingInto,
  )
  // each record is parsed for the state alone: compacted in place (putIdentity's owned)
  for (const { value } of store.db('identities').getRange()) state.putIdentity(value as Identity, true)
  for (const { value } of store.db('authenticators').getRange()) state.putAuthenticator(value as Authenticator)
  for (const { value } of store.db('enrollments').getRange()) state.putEnrollment(value as Enrollment)
  for (const { value } of store.db('auth-policies').getRange()) state.authPolicies.put(value as AuthPolicy)
  for (const { key, value } of store.db('auth-failures').getRange()) state.authFailures.set(key, value as number)
  for (const { value } of store.db('mfas').getRange()) state.putMfa(value as Mfa)
  for (const { value } of store.db('revocations').getRange()) state.putRevocation(value as Revocation)
  return new Actor('identity', state, behavior, deps)
}

/** Every revocation pruning runs this often (the real controller's revocation sweep: every minute). */
export const REVOCATION_PRUNE_EVERY_MS = 60_000

/**
 * Starts the timer that prunes expired revocations (`revocation.prune`) every `everyMs`; unref'd, so it never keeps
 * the process alive. Answers the function that stops it (before the actor stops).
 */
export function startRevocationPruning(actor: IdentityActor, everyMs = REVOCATION_PRUNE_EVERY_MS): () => void {
  const timer = setInterval(() => actor.tell({ type: 'revocation.prune' }), everyMs)
  timer.unref?.()
  return () => clearInterval(timer)
}
