/**
 * Terminators a router asks for over its control channel, decided on the graph's records. Rules:
 * - an SDK-hosted terminator's id is the address its edge router chose; asking again with an id that exists is the
 *   same terminator only when binding, service, router and hosting identity all match (checked in that order; the
 *   first that differs is the conflict), and then only its cost and precedence follow the request (routers ask again
 *   after every reconnect, so asking twice must change nothing else)
 * - a router may change or remove only terminators on itself; an edge router only those of binding `edge`
 * - costs are 0..65535 (a request above is refused, never clamped)
 * - a router's terminator stays small (TERMINATOR_LIMITS): its id is a key of the store (LMDB takes keys of at most
 *   988 bytes here; a longer one would fail the commit, which stops the process), and its other fields are kept and
 *   replicated with it (the real controller has no such limits: router ids are UUIDs, peer data a public key)
 * @see ziti controller/handler_edge_ctrl/common.go validateExistingTerminator, verifyTerminator;
 *   controller/handler_ctrl/base.go filterOwnedTerminators
 */
import type { Precedence, Terminator } from './policy-types.ts'

/** The binding of terminators hosted by SDKs through an edge router. */
export const EDGE_BINDING = 'edge'

/** The largest cost a terminator may have (a uint16 on the wire of the real controller's model). */
export const MAX_TERMINATOR_COST = 65_535

/** Which field of an existing terminator differs from a request for the same id. */
export type TerminatorConflict = 'binding' | 'service' | 'router' | 'identity'

/** What a request to establish terminator `prev.id` again must match. */
export interface TerminatorClaim {
  binding: string
  serviceId: string
  routerId: string
  hostId: string
}

/** The first field in which an existing terminator differs from a claim on its id; undefined when it is the same. */
export function conflictOf(prev: Pick<Terminator, 'binding' | 'serviceId' | 'routerId' | 'hostId'>, claim: TerminatorClaim): TerminatorConflict | undefined {
  if (prev.binding !== claim.binding) return 'binding'
  if (prev.serviceId !== claim.serviceId) return 'service'
  if (prev.routerId !== claim.routerId) return 'router'
  if (prev.hostId !== claim.hostId) return 'identity'
  return undefined
}

/** Whether a cost is one a terminator may have. */
export function isTerminatorCost(cost: number): boolean {
  return Number.isInteger(cost) && cost >= 0 && cost <= MAX_TERMINATOR_COST
}

/** Why a router may not change a terminator it named: gone, on another router (named), or of another binding (named). */
export type TerminatorRefusal = { reason: 'not-found' } | { reason: 'other-router'; routerId: string } | { reason: 'other-binding'; binding: string }

export type TerminatorOwnership = { ok: true; terminator: Terminator } | { ok: false; refusal: TerminatorRefusal }

/** Terminator `id` as router `routerId` may change it (`binding`: the one it must have; undefined: any). */
export function ownedTerminator(t: Terminator | undefined, routerId: string, binding: string | undefined): TerminatorOwnership {
  if (!t) return { ok: false, refusal: { reason: 'not-found' } }
  if (t.routerId !== routerId) return { ok: false, refusal: { reason: 'other-router', routerId: t.routerId } }
  if (binding !== undefined && t.binding !== binding) return { ok: false, refusal: { reason: 'other-binding', binding: t.binding } }
  return { ok: true, terminator: t }
}

/**
 * The ids of a removal a router may make: its own, and ids not present (a create may still be on its way); ids no
 * terminator can have and repeated ones are dropped.
 */
export function removableIds(ids: Iterable<string>, routerId: string, lookup: (id: string) => Pick<Terminator, 'routerId'> | undefined): { kept: string[]; rejected: number } {
  const kept: string[] = []
  const seen = new Set<string>()
  let rejected = 0
  for (const id of ids) {
    if (seen.has(id) || !isTerminatorId(id)) continue
    seen.add(id)
    const t = lookup(id)
    if (t && t.routerId !== routerId) rejected++
    else kept.push(id)
  }
  return { kept, rejected }
}

/** The cost and precedence a terminator gets from a router's update; unchanged fields keep their value. */
export function withCostAndPrecedence(t: Terminator, change: { cost?: number; precedence?: Precedence }): { cost: number; precedence: Precedence; changed: boolean } {
  const cost = change.cost ?? t.cost
  const precedence = change.precedence ?? t.precedence
  return { cost, precedence, changed: cost !== t.cost || precedence !== t.precedence }
}

/** The sizes a router's terminator may have, in bytes (UTF-8 for text). */
export const TERMINATOR_LIMITS = { id: 512, address: 4_096, binding: 256, instanceId: 4_096, instanceSecret: 4_096, peerData: 64 * 1024 } as const

/** What of a router's terminator request is kept: its text fields and its bytes. */
export interface TerminatorSizes {
  id: string
  address: string
  binding: string
  instanceId: string
  instanceSecretBytes: number
  /** Peer data values' bytes plus 4 per key. */
  peerDataBytes: number
}

/** The first field of a router's terminator larger than TERMINATOR_LIMITS allows; undefined when none is. */
export function oversizedField(t: TerminatorSizes): keyof typeof TERMINATOR_LIMITS | undefined {
  const L = TERMINATOR_LIMITS
  if (Buffer.byteLength(t.id) > L.id) return 'id'
  if (Buffer.byteLength(t.address) > L.address) return 'address'
  if (Buffer.byteLength(t.binding) > L.binding) return 'binding'
  if (Buffer.byteLength(t.instanceId) > L.instanceId) return 'instanceId'
  if (t.instanceSecretBytes > L.instanceSecret) return 'instanceSecret'
  if (t.peerDataBytes > L.peerData) return 'peerData'
  return undefined
}

/** Whether a string can be a terminator id at all (a removal's other ids cannot name one, and are dropped). */
export function isTerminatorId(id: string): boolean {
  return id !== '' && Buffer.byteLength(id) <= TERMINATOR_LIMITS.id
}
