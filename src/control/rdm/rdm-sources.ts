/**
 * What the router data model is made from: read-only views of the aggregates (identities and revocations, the policy
 * graph), the policy index's precomputed memberships, the public keys routers must trust, and the clock. The
 * projection reads them; it never writes.
 */
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { PolicyReads } from '../../domain/policy/policy-reads.ts'
import type { KeyUse } from './rdm-entities.ts'

/** A certificate routers trust: what it signs (JWTs by kid) or anchors (client certificates). */
export interface TrustedKey {
  der: Uint8Array
  uses: readonly KeyUse[]
}

export interface RdmSources {
  identities(): IdentityReads
  graph(): PolicyGraphReads
  /** The policy index: which identities, services and posture checks each service policy selects. */
  policies: Pick<PolicyReads, 'membersOf' | 'policiesOf'>
  /** Every key routers must hold, current (server certificates of the nodes, CA roots, verified third-party CAs). */
  publicKeys(): readonly TrustedKey[]
  now(): number
}

/** The kinds of record the model holds, in the order a change set lists their creates and updates. */
export const RDM_KINDS = ['configType', 'config', 'identity', 'service', 'router', 'postureCheck', 'servicePolicy', 'revocation', 'publicKey'] as const
export type RdmKind = (typeof RDM_KINDS)[number]

/** The kinds a service policy relates to (ServicePolicyChange.relatedEntityType). */
export const RELATED_KINDS = ['identity', 'service', 'postureCheck'] as const
export type RelatedKind = (typeof RELATED_KINDS)[number]
