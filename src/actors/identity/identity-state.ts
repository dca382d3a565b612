/**
 * In-memory state of the identity aggregate (identities and their authenticators) with the indexes lists use:
 * name → id, role attribute → ids, username → updb authenticator, identity → authenticators.
 * Others see it through `actor.snapshot()` as IdentityReads; only the actor's handlers call the put/remove methods.
 */
import type { Authenticator, Identity } from '../../domain/identity/identity-types.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { Enrollment } from '../../domain/enrollment/enrollment-types.ts'
import { ListPool, shareEmpty } from '../../lib/shared-values.ts'
import { EntityTable } from '../../lib/entity-table.ts'
import type { AuthPolicy } from '../../domain/identity/identity-auth-policy.ts'
import type { Mfa } from '../../domain/identity/identity-mfa.ts'
import {
  DEFAULT_REFRESH_TOKEN_MS,
  isRevokedBy,
  revocationLifetimeMs as lifetimeFor,
  type RevocableToken,
  type Revocation,
} from '../../domain/identity/identity-revocation.ts'

/**
 * The identity as kept in memory: empty maps and role attribute lists shared (see
 * shared-values.ts); the list is counted as held by the record until `lists.release`. A record nobody else holds (one
 * just read from the store) is compacted in place, sparing a copy of each of 100,000 records at start.
 */
function compact(i: Identity, lists: ListPool, inPlace: boolean): Identity {
  const out: { -readonly [K in keyof Identity]: Identity[K] } = inPlace ? i : { ...i }
  out.roleAttributes = lists.share(i.roleAttributes)
  out.appData = shareEmpty(i.appData)
  out.tags = shareEmpty(i.tags)
  out.serviceHostingCosts = shareEmpty(i.serviceHostingCosts)
  out.serviceHostingPrecedences = shareEmpty(i.serviceHostingPrecedences)
  out.envInfo = shareEmpty(i.envInfo)
  out.sdkInfo = shareEmpty(i.sdkInfo)
  return out
}

export class IdentityState implements IdentityReads {
  readonly identities = new Map<string, Identity>()
  readonly authenticators = new Map<string, Authenticator>()
  private readonly byName = new Map<string, string>()
  /**
   * Role attribute → identity ids, built on the first question (a role filter of a list, the integrity check) and
   * kept from then on: at 100,000 identities it is ~15 MiB and a tenth of the start-up work that most runs never use.
   */
  private byRole: Map<string, Set<string>> | null = null
  private readonly byUsername = new Map<string, string>()
  private readonly authByIdentity = new Map<string, Set<string>>()
  readonly enrollments = new Map<string, Enrollment>()
  readonly authPolicies = new EntityTable<AuthPolicy>()
  /** Failed authentication attempts per identity id (only identities with at least one). */
  readonly authFailures = new Map<string, number>()
  private readonly enrollmentByToken = new Map<string, string>()
  private readonly enrollmentsByIdentity = new Map<string, Set<string>>()
  private readonly certByFingerprint = new Map<string, string>()
  private readonly byExternalId = new Map<string, string>()
  /** MFA records by identity id. */
  private readonly mfas = new Map<string, Mfa>()
  /** Revocations by id (a jti, an identity id or an API-session id: one key space, as the real controller's). */
  private readonly revocationById = new Map<string, Revocation>()
  /** Role attribute names, one string each (they repeat across most identities). */
  /** Role attribute lists, one array each (see compact). */
  private readonly attributeLists = new ListPool()
  /** Identity ids in ascending order, rebuilt lazily after inserts/deletes (lists default to id order). */
  private sortedIds: string[] | null = null

  /**
   * `reservedNames`: the id of the router a name is reserved for (read from the policy graph's snapshot);
   * `signerExists`: whether an external JWT signer exists (auth policies name them); `signersEnrolling`: the signers
   * that name a policy (the CA actor's snapshot).
   */
  constructor(
    private readonly reservedNames: (name: string) => string | undefined = () => undefined,
    private readonly signerExists: (id: string) => boolean = () => false,
    /** How long a revocation asked without `expiresAt` lives (the actor's handlers read it; not a read of others). */
    readonly revocationLifetimeMs = lifetimeFor(DEFAULT_REFRESH_TOKEN_MS),
    /** The ids of the external JWT signers that enroll identities into an auth policy (`enrollAuthPolicyId`). */
    private readonly signersEnrolling: (policyId: string) => readonly string[] = () => [],
  ) {}

  /** The ids of the external JWT signers whose token enrollment gives identities this auth policy. */
  signersEnrollingInto(policyId: string): readonly string[] {
    return this.signersEnrolling(policyId)
  }

  revocation(id: string): Revocation | undefined {
    return this.revocationById.get(id)
  }
  revocations(): Iterable<Revocation> {
    return this.revocationById.values()
  }
  isTokenRevoked(t: RevocableToken, now: number): boolean {
    return isRevokedBy(this.revocationById, t, now)
  }
  /** How many revocations are stored (expired ones included until pruned). */
  revocationCount(): number {
    return this.revocationById.size
  }

  /** Adds or replaces a revocation (a replaced one moves to the end of the insertion order, with its new expiry). */
  putRevocation(r: Revocation): void {
    this.revocationById.delete(r.id)
    this.revocationById.set(r.id, r)
  }

  removeRevocation(id: string): void {
    this.revocationById.delete(id)
  }

  authPolicy(id: string): AuthPolicy | undefined {
    return this.authPolicies.get(id)
  }
  authPolicyIdByName(name: string): string | undefined {
    return this.authPolicies.idByName(name)
  }
  knownSigner(id: string): boolean {
    return this.signerExists(id)
  }
  authFailuresOf(identityId: string): number {
    return this.authFailures.get(identityId) ?? 0
  }
  identityIdsWithAuthPolicy(policyId: string): string[] {
    return this.identitiesById().filter((i) => i.authPolicyId === policyId).map((i) => i.id)
  }

  identity(id: string): Identity | undefined {
    return this.identities.get(id)
  }
  identityByExternalId(externalId: string): Identity | undefined {
    const id = this.byExternalId.get(externalId)
    return id ? this.identities.get(id) : undefined
  }
  identityIdByName(name: string): string | undefined {
    return this.byName.get(name)
  }
  reservedNameHolder(name: string): string | undefined {
    return this.reservedNames(name)
  }
  idsWithRole(attr: string): ReadonlySet<string> {
    return this.roleIndex().get(attr) ?? EMPTY
  }
  updbByUsername(username: string): Authenticator | undefined {
    const id = this.byUsername.get(username)
    return id ? this.authenticators.get(id) : undefined
  }
  *authenticatorsOf(identityId: string): Iterable<Authenticator> {
    for (const id of this.authByIdentity.get(identityId) ?? EMPTY) {
      const a = this.authenticators.get(id)
      if (a) yield a
    }
  }
  enrollmentOfToken(token: string): Enrollment | undefined {
    const id = this.enrollmentByToken.get(token)
    return id ? this.enrollments.get(id) : undefined
  }
  *enrollmentsOf(identityId: string): Iterable<Enrollment> {
    for (const id of this.enrollmentsByIdentity.get(identityId) ?? EMPTY) {
      const e = this.enrollments.get(id)
      if (e) yield e
    }
  }
  certByFingerprintOf(fingerprint: string): Authenticator | undefined {
    const id = this.certByFingerprint.get(fingerprint)
    return id ? this.authenticators.get(id) : undefined
  }
  mfaCount(): number {
    return this.mfas.size
  }

  mfaOf(identityId: string): Mfa | undefined {
    return this.mfas.get(identityId)
  }
  /** All identities in id order. */
  identitiesById(): Identity[] {
    if (!this.sortedIds) this.sortedIds = [...this.identities.keys()].sort()
    return this.sortedIds.map((id) => this.identities.get(id)!)
  }

  /** Adds or replaces an identity; `owned`: the record is the state's own (read from the store), kept as it is. */
  putIdentity(next: Identity, owned = false): void {
    const prev = this.identities.get(next.id)
    if (prev) {
      if (prev.name !== next.name) this.byName.delete(prev.name)
      if (prev.externalId !== null && prev.externalId !== next.externalId) this.byExternalId.delete(prev.externalId)
      this.unindexRoles(prev)
      this.attributeLists.release(prev.roleAttributes)
    } else {
      this.sortedIds = null
    }
    next = compact(next, this.attributeLists, owned)
    this.identities.set(next.id, next)
    this.byName.set(next.name, next.id)
    if (next.externalId !== null) this.byExternalId.set(next.externalId, next.id)
    if (this.byRole) this.indexRoles(this.byRole, next)
  }

  removeIdentity(id: string): void {
    const prev = this.identities.get(id)
    if (!prev) return
    this.identities.delete(id)
    this.byName.delete(prev.name)
    if (prev.externalId !== null && this.byExternalId.get(prev.externalId) === id) this.byExternalId.delete(prev.externalId)
    this.unindexRoles(prev)
    this.attributeLists.release(prev.roleAttributes)
    this.sortedIds = null
  }

  private roleIndex(): Map<string, Set<string>> {
    if (!this.byRole) {
      this.byRole = new Map()
      for (const i of this.identities.values()) this.indexRoles(this.byRole, i)
    }
    return this.byRole
  }

  private indexRoles(byRole: Map<string, Set<string>>, i: Identity): void {
    for (const r of i.roleAttributes ?? []) {
      let set = byRole.get(r)
      if (!set) byRole.set(r, (set = new Set()))
      set.add(i.id)
    }
  }

  private unindexRoles(prev: Identity): void {
    if (!this.byRole) return
    for (const attr of prev.roleAttributes ?? []) {
      const set = this.byRole.get(attr)
      if (!set) continue
      set.delete(prev.id)
      if (set.size === 0) this.byRole.delete(attr)
    }
  }

  putAuthenticator(next: Authenticator): void {
    const prev = this.authenticators.get(next.id)
    if (prev?.username && prev.username !== next.username) this.byUsername.delete(prev.username)
    if (prev?.fingerprint && prev.fingerprint !== next.fingerprint) this.certByFingerprint.delete(prev.fingerprint)
    this.authenticators.set(next.id, next)
    if (next.method === 'updb' && next.username) this.byUsername.set(next.username, next.id)
    if (next.method === 'cert' && next.fingerprint) this.certByFingerprint.set(next.fingerprint, next.id)
    let set = this.authByIdentity.get(next.identityId)
    if (!set) this.authByIdentity.set(next.identityId, (set = new Set()))
    set.add(next.id)
  }

  removeAuthenticator(id: string): void {
    const prev = this.authenticators.get(id)
    if (!prev) return
    this.authenticators.delete(id)
    if (prev.username && this.byUsername.get(prev.username) === id) this.byUsername.delete(prev.username)
    if (prev.fingerprint && this.certByFingerprint.get(prev.fingerprint) === id) this.certByFingerprint.delete(prev.fingerprint)
    this.authByIdentity.get(prev.identityId)?.delete(id)
  }

  putMfa(next: Mfa): void {
    this.mfas.set(next.identityId, next)
  }

  removeMfa(identityId: string): void {
    this.mfas.delete(identityId)
  }

  putEnrollment(next: Enrollment): void {
    const prev = this.enrollments.get(next.id)
    if (prev && prev.token !== next.token) this.enrollmentByToken.delete(prev.token)
    this.enrollments.set(next.id, next)
    this.enrollmentByToken.set(next.token, next.id)
    let set = this.enrollmentsByIdentity.get(next.identityId)
    if (!set) this.enrollmentsByIdentity.set(next.identityId, (set = new Set()))
    set.add(next.id)
  }

  removeEnrollment(id: string): void {
    const prev = this.enrollments.get(id)
    if (!prev) return
    this.enrollments.delete(id)
    this.enrollmentByToken.delete(prev.token)
    this.enrollmentsByIdentity.get(prev.identityId)?.delete(id)
  }
}

const EMPTY: ReadonlySet<string> = new Set()
