/**
 * What the precomputed policy index answers. Every answer is a lookup in maintained structures: nothing here
 * evaluates a policy. Id lists are sorted ascending and must not be mutated by callers.
 */
import type { EntityKind, PolicyKind, PolicyType } from './policy-types.ts'

export type Permission = 'Bind' | 'Dial'

export interface PolicyReads {
  /** Services the identity may Dial or Bind. */
  servicesOfIdentity(identityId: string): readonly string[]
  /** `['Bind','Dial']`, `['Bind']`, `['Dial']` or `[]`. */
  permissionsOf(identityId: string, serviceId: string): readonly Permission[]
  /** Identities that may Dial or Bind the service. */
  identitiesOfService(serviceId: string): readonly string[]
  /** Edge routers the identity may use (edge router policies). */
  routersOfIdentity(identityId: string): readonly string[]
  /** Edge routers the service may be reached over (service edge router policies). */
  routersOfService(serviceId: string): readonly string[]
  /** The intersection of the two: routers usable for this identity and service. */
  routersFor(identityId: string, serviceId: string): readonly string[]
  identitiesOfRouter(routerId: string): readonly string[]
  servicesOfRouter(routerId: string): readonly string[]
  /** Policies of `policyKind` whose side for `kind` selects entity `id`. */
  policiesOf(kind: EntityKind, id: string, policyKind: PolicyKind): readonly string[]
  /** Entities of `kind` a policy selects. */
  membersOf(policyId: string, kind: EntityKind): readonly string[]
  /** Service policies of `type` that select both the identity and the service. */
  policiesLinking(identityId: string, serviceId: string, type: PolicyType): readonly string[]
  /** Role attributes carried by at least one entity of `kind`. */
  attributesInUse(kind: EntityKind): readonly string[]
  /** Number of entities of `kind` known to the index. */
  countOf(kind: EntityKind): number
  /**
   * When the identity's service list, permissions or the configs it sees last changed (epoch ms, strictly
   * increasing per identity), or undefined if nothing changed since start-up.
   */
  lastChangeAt(identityId: string): number | undefined
  /**
   * Grows with every change of the index (any entity, policy or posture check): an answer rendered from its reads
   * is current while the number stays the same.
   */
  version(): number
}
