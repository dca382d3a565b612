/**
 * Pure checks for identity and authenticator commands. Each throws ApiError; none mutates.
 * - names are required and unique (case-sensitive), at most 255 characters; the name of a tunneler-enabled edge
 *   router is reserved for that router's identity (so the router's identity can always follow the router)
 * - role attributes may not start with '#' or '@' and may not be empty
 * - authPolicyId must name an existing auth policy (400 COULD_NOT_VALIDATE); absent, null or empty means `default`
 * - the default admin can not be deleted, nor a router's identity (it goes with its router or its tunneling)
 * - an identity has at most one updb authenticator; updb usernames are unique
 * - an externalId names at most one identity (the real controller's unique index): 400 COULD_NOT_VALIDATE
 * - `permissions` may only be empty: entity-level permissions are not implemented, and a grant that would be stored
 *   but never enforced is refused rather than silently dropped (400 COULD_NOT_VALIDATE)
 * - an identity has at most one cert authenticator (409 MAX_AUTHENTICATOR_METHODS_REACHED); a certificate (by its
 *   fingerprint) belongs to at most one authenticator (409 CERT_IN_USE with data {fingerprint})
 */
import { ApiError } from '../../errors/api-error.ts'
import { DEFAULT_AUTH_POLICY, type Authenticator, type Identity } from './identity-types.ts'
import type { AuthPolicy } from './identity-auth-policy.ts'

/** What the identity checks need to know about existing state. */
export interface IdentityLookup {
  identityIdByName(name: string): string | undefined
  identity(id: string): Identity | undefined
  /** The identity holding an externalId. */
  identityByExternalId(externalId: string): Identity | undefined
  /** The cert authenticator of a certificate, by its SHA-1 fingerprint. */
  certByFingerprintOf(fingerprint: string): Authenticator | undefined
  updbByUsername(username: string): Authenticator | undefined
  authenticatorsOf(identityId: string): Iterable<Authenticator>
  /** The id of the router whose identity `name` is reserved for (a tunneler-enabled edge router's name), if any. */
  reservedNameHolder(name: string): string | undefined
  authPolicy(id: string): AuthPolicy | undefined
}

export function decideName(lookup: IdentityLookup, name: string, selfId?: string): string {
  if (name.trim() === '') throw ApiError.invalidField('name', 'name is required', name)
  for (const other of [lookup.identityIdByName(name), lookup.reservedNameHolder(name)]) {
    if (other !== undefined && other !== selfId) {
      throw ApiError.invalidField('name', `duplicate value '${name}' in unique index on identities store`, name)
    }
  }
  return name
}

/** Role attributes without duplicates; `field` names them in a refusal (a CA's `identityRoles` are role attributes too). */
export function decideRoleAttributes(attrs: readonly string[] | null | undefined, field = 'roleAttributes'): string[] | null {
  if (attrs === null || attrs === undefined) return null
  const out: string[] = []
  const seen = new Set<string>()
  for (const a of attrs) {
    if (a === '') throw ApiError.invalidField(field, 'role attributes may not be empty', a)
    if (a.startsWith('#') || a.startsWith('@')) {
      throw ApiError.invalidField(field, "role attributes may not be prefixed with '#' or '@'", a)
    }
    if (!seen.has(a)) {
      seen.add(a)
      out.push(a)
    }
  }
  return out
}

/** The fine-grained permissions of an identity: none (absent, null or empty); admins are made with `isAdmin`. */
export function decidePermissions(permissions: readonly string[] | null | undefined): void {
  if (permissions === null || permissions === undefined || permissions.length === 0) return
  throw ApiError.invalidField('permissions', 'fine-grained permissions are not supported; make an identity an administrator with isAdmin', [...permissions])
}

/** An externalId no other identity holds; null and absent stay as they are. */
export function decideExternalId(lookup: IdentityLookup, externalId: string | null | undefined, selfId?: string): string | null | undefined {
  if (externalId === null || externalId === undefined) return externalId
  const other = lookup.identityByExternalId(externalId)
  if (other && other.id !== selfId) {
    throw ApiError.invalidField('externalId', `duplicate value '${externalId}' in unique index on identities store`, externalId)
  }
  return externalId
}

/** A certificate (by fingerprint) not yet held by any authenticator: 409 CERT_IN_USE naming the fingerprint. */
export function decideCertUnused(lookup: IdentityLookup, fingerprint: string): void {
  if (lookup.certByFingerprintOf(fingerprint)) {
    throw new ApiError('CERT_IN_USE', { cause: { kind: 'data', message: 'the certificate belongs to another authenticator', data: { fingerprint } } })
  }
}

/** A new cert authenticator for `identityId`: the identity exists and has none yet, and the certificate is unused. */
export function decideNewCertAuthenticator(lookup: IdentityLookup, identityId: string, fingerprint: string): void {
  if (!lookup.identity(identityId)) {
    throw ApiError.invalidField('identityId', `no identity found with id '${identityId}'`, identityId)
  }
  for (const a of lookup.authenticatorsOf(identityId)) {
    if (a.method === 'cert') {
      throw new ApiError('MAX_AUTHENTICATOR_METHODS_REACHED', {
        cause: { kind: 'field', field: 'method', reason: 'identity already has a cert authenticator', value: 'cert' },
      })
    }
  }
  decideCertUnused(lookup, fingerprint)
}

export function decideAuthPolicyId(lookup: Pick<IdentityLookup, 'authPolicy'>, id: string | null | undefined): string {
  if (id === null || id === undefined || id === '') return DEFAULT_AUTH_POLICY.id
  if (!lookup.authPolicy(id)) throw ApiError.invalidField('authPolicyId', `no auth policy found with id '${id}'`, id)
  return id
}

export function decideDeleteIdentity(identity: Identity | undefined, id: string): Identity {
  if (!identity) throw ApiError.notFound()
  if (identity.isDefaultAdmin) {
    throw ApiError.withMessage('ENTITY_CAN_NOT_BE_DELETED', `cannot delete the default admin identity (id=${id})`)
  }
  if (identity.isRouterIdentity) {
    throw ApiError.withMessage(
      'ENTITY_CAN_NOT_BE_DELETED',
      `the identity of edge router ${id} is deleted with the router or when its tunneling is turned off`,
    )
  }
  return identity
}

/** Only updb authenticators carry a username and password. */
export function decideUpdbChange(authenticator: Authenticator, changesCredentials: boolean): void {
  if (changesCredentials && authenticator.method !== 'updb') {
    throw new ApiError('CAN_NOT_UPDATE_AUTHENTICATOR', {
      cause: { kind: 'field', field: 'method', reason: 'only updb authenticators have a username and password', value: authenticator.method },
    })
  }
}

export function decideUpdbUsername(lookup: IdentityLookup, username: string, selfAuthenticatorId?: string): string {
  const other = lookup.updbByUsername(username)
  if (other && other.id !== selfAuthenticatorId) {
    throw ApiError.invalidField('username', `duplicate value '${username}' in unique index on authenticators store`, username)
  }
  return username
}

export function decideNewUpdbAuthenticator(lookup: IdentityLookup, identityId: string, username: string): void {
  if (!lookup.identity(identityId)) {
    throw ApiError.invalidField('identityId', `no identity found with id '${identityId}'`, identityId)
  }
  for (const a of lookup.authenticatorsOf(identityId)) {
    if (a.method === 'updb') {
      throw new ApiError('MAX_AUTHENTICATOR_METHODS_REACHED', {
        cause: { kind: 'field', field: 'method', reason: 'identity already has an updb authenticator', value: 'updb' },
      })
    }
  }
  decideUpdbUsername(lookup, username)
}
