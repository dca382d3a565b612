/**
 * The router data model as routers hold it, kept as the least that lets a change be computed: a hash of every record
 * last sent, and per identity, service and posture check the list of service policies selecting it (the policy
 * index's list, which every member of one of its classes shares: 100,000 identities cost 100,000 references, not
 * their memberships one by one). Given what changed, `diff` rebuilds those records from the sources, compares, and
 * answers the events that take a router from the old model to the new one; `fullState` answers every record as
 * Create events. Rules kept here:
 * - An unchanged record yields no event; a record gone yields a Delete, a new one a Create, a changed one an Update.
 *   A record as loaded at start has no hash (building 100,000 messages would slow the start): its first change is
 *   sent as an Update, whatever it was.
 * - Memberships come from the policy index (never evaluated here) and travel as ServicePolicyChange add/remove
 *   events grouped per policy and kind.
 * - Order within a change: membership removals, then creates and updates (config types, configs, identities,
 *   services, routers, posture checks, service policies, revocations, public keys), then membership additions, then
 *   deletes (the reverse order): a router never sees a membership of a record it does not hold, nor a config whose
 *   type it lacks.
 * - Router configs (config types targeting `router`) are not part of the model: no router here names any.
 * - Public keys are keyed by kid; their events are marked synthetic, as the real controller marks them.
 */
import { create, toBinary, type DescMessage } from '@bufbuild/protobuf'
import {
  DataState_Action,
  DataState_ConfigSchema,
  DataState_ConfigTypeSchema,
  DataState_EventSchema,
  DataState_IdentitySchema,
  DataState_PostureCheckSchema,
  DataState_PublicKeySchema,
  DataState_RevocationSchema,
  DataState_RouterSchema,
  DataState_ServicePolicySchema,
  DataState_ServiceSchema,
  ServicePolicyRelatedEntityType,
  type DataState_Event,
} from '../pb/edge_ctrl_pb.ts'
import type { EntityKind } from '../../domain/policy/policy-types.ts'
import {
  ROUTER_CONFIG_TARGET,
  toRdmConfig,
  toRdmConfigType,
  toRdmIdentity,
  toRdmPostureCheck,
  toRdmPublicKey,
  toRdmRevocation,
  toRdmRouter,
  toRdmService,
  toRdmServicePolicy,
} from './rdm-entities.ts'
import { RDM_KINDS, RELATED_KINDS, type RdmKind, type RdmSources, type RelatedKind } from './rdm-sources.ts'

/** One model record as an event's oneof: its case name and message. */
type Model = Exclude<DataState_Event['Model'], { case: undefined }>

const CASE: Record<RdmKind, Model['case']> = {
  configType: 'configType',
  config: 'config',
  identity: 'identity',
  service: 'service',
  router: 'router',
  postureCheck: 'postureCheck',
  servicePolicy: 'servicePolicy',
  revocation: 'revocation',
  publicKey: 'publicKey',
}

const SCHEMA: Record<RdmKind, DescMessage> = {
  configType: DataState_ConfigTypeSchema,
  config: DataState_ConfigSchema,
  identity: DataState_IdentitySchema,
  service: DataState_ServiceSchema,
  router: DataState_RouterSchema,
  postureCheck: DataState_PostureCheckSchema,
  servicePolicy: DataState_ServicePolicySchema,
  revocation: DataState_RevocationSchema,
  publicKey: DataState_PublicKeySchema,
}

const INDEX_KIND: Record<RelatedKind, EntityKind> = { identity: 'identity', service: 'service', postureCheck: 'posture-check' }
const RELATED_TYPE: Record<RelatedKind, ServicePolicyRelatedEntityType> = {
  identity: ServicePolicyRelatedEntityType.RelatedIdentity,
  service: ServicePolicyRelatedEntityType.RelatedService,
  postureCheck: ServicePolicyRelatedEntityType.RelatedPostureCheck,
}

/** What changed since the last diff: records to rebuild (with what was last known of a deleted one), memberships. */
export class RdmDirty {
  readonly records = new Map<RdmKind, Set<string>>(RDM_KINDS.map((k) => [k, new Set<string>()]))
  /** Entities whose service-policy memberships may have changed. */
  readonly members = new Map<RelatedKind, Set<string>>(RELATED_KINDS.map((k) => [k, new Set<string>()]))
  /** Service policies whose memberships are recomputed whole. */
  readonly policies = new Set<string>()
  publicKeys = false

  mark(kind: RdmKind, id: string): void {
    this.records.get(kind)!.add(id)
  }
  markMembers(kind: RelatedKind, id: string): void {
    this.members.get(kind)!.add(id)
  }
  get isEmpty(): boolean {
    if (this.publicKeys || this.policies.size > 0) return false
    for (const s of this.records.values()) if (s.size > 0) return false
    for (const s of this.members.values()) if (s.size > 0) return false
    return true
  }
}

/** Per entity of one related kind: the service policies selecting it, as last sent, and the entities per list. */
class MemberLists {
  private readonly listOf = new Map<string, readonly string[]>()
  private readonly holders = new Map<readonly string[], Set<string>>()

  get(id: string): readonly string[] {
    return this.listOf.get(id) ?? NONE
  }

  set(id: string, list: readonly string[]): void {
    const prev = this.listOf.get(id)
    if (prev === list) return
    if (prev) {
      const h = this.holders.get(prev)!
      h.delete(id)
      if (h.size === 0) this.holders.delete(prev)
    }
    if (list.length === 0) {
      this.listOf.delete(id)
      return
    }
    this.listOf.set(id, list)
    const h = this.holders.get(list)
    if (h) h.add(id)
    else this.holders.set(list, new Set([id]))
  }

  /** The entities whose list holds `policyId`. */
  *holdersOf(policyId: string): Iterable<string> {
    for (const [list, ids] of this.holders) if (list.includes(policyId)) yield* ids
  }

  /** Policy id → its members, for a full state. */
  byPolicy(): Map<string, string[]> {
    const out = new Map<string, string[]>()
    for (const [list, ids] of this.holders) {
      for (const p of list) {
        const l = out.get(p)
        if (l) l.push(...ids)
        else out.set(p, [...ids])
      }
    }
    return out
  }
}

const NONE: readonly string[] = []

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i])

/** A record known to the model but not yet hashed (loaded at start). */
const UNHASHED = 0

export class RdmMirror {
  private readonly hashes = new Map<RdmKind, Map<string, number | bigint>>(RDM_KINDS.map((k) => [k, new Map()]))
  private readonly lists = new Map<RelatedKind, MemberLists>(RELATED_KINDS.map((k) => [k, new MemberLists()]))

  constructor(private readonly sources: RdmSources) {}

  /** Loads the whole model from the sources (at start): no events, no messages built. */
  load(): void {
    this.allIds((kind, id) => this.hashes.get(kind)!.set(id, UNHASHED))
    // a config of a router-targeted type is not in the model
    const g = this.sources.graph()
    for (const id of [...this.hashes.get('config')!.keys()]) {
      const c = g.configs.get(id)
      if (!c || g.configTypes.get(c.configTypeId)?.target === ROUTER_CONFIG_TARGET) this.hashes.get('config')!.delete(id)
    }
    for (const k of this.publicKeyMessages().keys()) this.hashes.get('publicKey')!.set(k, UNHASHED)
    for (const rk of RELATED_KINDS) {
      const lists = this.lists.get(rk)!
      for (const id of this.hashes.get(rk)!.keys()) lists.set(id, this.sources.policies.policiesOf(INDEX_KIND[rk], id, 'service-policy'))
    }
  }

  /** Records held, per kind (metrics, tests). */
  counts(): Record<RdmKind, number> {
    return Object.fromEntries(RDM_KINDS.map((k) => [k, this.hashes.get(k)!.size])) as Record<RdmKind, number>
  }

  /** The events that bring a router holding the mirrored model to the sources' current one; the mirror follows. */
  diff(d: RdmDirty): DataState_Event[] {
    const upserts: DataState_Event[] = []
    const deletes: DataState_Event[] = []
    const removed = new Map<RdmKind, Set<string>>(RDM_KINDS.map((k) => [k, new Set<string>()]))
    for (const kind of RDM_KINDS) {
      if (kind === 'publicKey') continue
      const hashes = this.hashes.get(kind)!
      for (const id of d.records.get(kind)!) {
        const msg = this.build(kind, id)
        if (msg === undefined) {
          if (hashes.delete(id)) {
            deletes.push(event(DataState_Action.Delete, kind, this.minimal(kind, id)))
            removed.get(kind)!.add(id)
          }
          continue
        }
        const h = Bun.hash(toBinary(SCHEMA[kind], msg as never)) || 1
        const prev = hashes.get(id)
        if (prev === h) continue
        hashes.set(id, h)
        upserts.push(event(prev === undefined ? DataState_Action.Create : DataState_Action.Update, kind, msg))
      }
    }
    if (d.publicKeys) this.diffPublicKeys(upserts, deletes)
    const { adds, drops } = this.diffMembers(d, removed)
    // deletes in the reverse order of the kinds: policies before what they select, configs before their types
    deletes.sort((a, b) => RDM_KINDS.indexOf(kindOf(b)) - RDM_KINDS.indexOf(kindOf(a)))
    return [...drops, ...upserts, ...adds, ...deletes]
  }

  /** The whole model as a full state's events: every record as a Create, each policy followed by its memberships. */
  fullState(): DataState_Event[] {
    const out: DataState_Event[] = []
    for (const kind of RDM_KINDS) {
      if (kind === 'servicePolicy' || kind === 'publicKey' || kind === 'revocation') continue
      for (const id of this.hashes.get(kind)!.keys()) {
        const msg = this.build(kind, id)
        if (msg !== undefined) out.push(event(DataState_Action.Create, kind, msg))
      }
    }
    const members = new Map(RELATED_KINDS.map((rk) => [rk, this.lists.get(rk)!.byPolicy()]))
    for (const id of this.hashes.get('servicePolicy')!.keys()) {
      const msg = this.build('servicePolicy', id)
      if (msg === undefined) continue
      out.push(event(DataState_Action.Create, 'servicePolicy', msg))
      for (const rk of ['service', 'postureCheck', 'identity'] as const) {
        const ids = (members.get(rk)!.get(id) ?? []).sort()
        if (rk === 'identity' && ids.length === 0) continue
        out.push(membership(id, rk, ids, true))
      }
    }
    for (const k of this.publicKeyMessages().values()) out.push(event(DataState_Action.Create, 'publicKey', k))
    for (const id of this.hashes.get('revocation')!.keys()) {
      const msg = this.build('revocation', id)
      if (msg !== undefined) out.push(event(DataState_Action.Create, 'revocation', msg))
    }
    return out
  }

  private allIds(f: (kind: RdmKind, id: string) => void): void {
    const g = this.sources.graph()
    for (const t of g.configTypes.values()) f('configType', t.id)
    for (const c of g.configs.values()) f('config', c.id)
    for (const i of this.sources.identities().identities.keys()) f('identity', i)
    for (const s of g.services.values()) f('service', s.id)
    for (const r of g.routers.values()) f('router', r.id)
    for (const c of g.postureChecks.values()) f('postureCheck', c.id)
    for (const p of g.servicePolicies.values()) f('servicePolicy', p.id)
    for (const r of this.sources.identities().revocations()) f('revocation', r.id)
  }

  /** The current message of a record, or undefined when the sources no longer hold it (or it is not in the model). */
  private build(kind: RdmKind, id: string): Model['value'] | undefined {
    const g = this.sources.graph()
    switch (kind) {
      case 'configType': {
        const t = g.configTypes.get(id)
        return t && toRdmConfigType(t)
      }
      case 'config': {
        const c = g.configs.get(id)
        if (!c || g.configTypes.get(c.configTypeId)?.target === ROUTER_CONFIG_TARGET) return undefined
        return toRdmConfig(c)
      }
      case 'identity': {
        const i = this.sources.identities().identity(id)
        return i && toRdmIdentity(i, g.overridesOf(id), (cid) => g.configs.get(cid)?.configTypeId, this.sources.now())
      }
      case 'service': {
        const s = g.services.get(id)
        return s && toRdmService(s)
      }
      case 'router': {
        const r = g.routers.get(id)
        return r && toRdmRouter(r)
      }
      case 'postureCheck': {
        const c = g.postureChecks.get(id)
        return c && toRdmPostureCheck(c)
      }
      case 'servicePolicy': {
        const p = g.servicePolicies.get(id)
        return p && toRdmServicePolicy(p)
      }
      case 'revocation': {
        const r = this.sources.identities().revocation(id)
        return r && toRdmRevocation(r)
      }
      case 'publicKey':
        return this.publicKeyMessages().get(id)
    }
  }

  /** A record that is gone, as its Delete names it: by id (a router reads nothing else of a deleted record). */
  private minimal(kind: RdmKind, id: string): Model['value'] {
    return create(SCHEMA[kind], kind === 'publicKey' ? { kid: id } : { id }) as Model['value']
  }

  private publicKeyMessages(): Map<string, ReturnType<typeof toRdmPublicKey>> {
    const out = new Map<string, ReturnType<typeof toRdmPublicKey>>()
    for (const k of this.sources.publicKeys()) {
      const msg = toRdmPublicKey(k.der, k.uses)
      const held = out.get(msg.kid)
      // the same certificate trusted for two uses (a root that also signs): one key with both usages
      if (held) out.set(msg.kid, create(DataState_PublicKeySchema, { ...msg, usages: [...new Set([...held.usages, ...msg.usages])].sort() }))
      else out.set(msg.kid, msg)
    }
    return out
  }

  private diffPublicKeys(upserts: DataState_Event[], deletes: DataState_Event[]): void {
    const hashes = this.hashes.get('publicKey')!
    const now = this.publicKeyMessages()
    for (const [kid, msg] of now) {
      const h = Bun.hash(toBinary(DataState_PublicKeySchema, msg)) || 1
      const prev = hashes.get(kid)
      if (prev === h) continue
      hashes.set(kid, h)
      upserts.push(event(prev === undefined ? DataState_Action.Create : DataState_Action.Update, 'publicKey', msg))
    }
    for (const kid of [...hashes.keys()]) {
      if (now.has(kid)) continue
      hashes.delete(kid)
      deletes.push(event(DataState_Action.Delete, 'publicKey', this.minimal('publicKey', kid)))
    }
  }

  private diffMembers(d: RdmDirty, removed: Map<RdmKind, Set<string>>): { adds: DataState_Event[]; drops: DataState_Event[] } {
    const add = new Map<string, string[]>()
    const drop = new Map<string, string[]>()
    const note = (into: Map<string, string[]>, policyId: string, rk: RelatedKind, id: string) => {
      const key = `${rk}\u0000${policyId}`
      const list = into.get(key)
      if (list) list.push(id)
      else into.set(key, [id])
    }
    const deletedPolicies = removed.get('servicePolicy')!
    const policies = this.hashes.get('servicePolicy')!
    for (const rk of RELATED_KINDS) {
      const lists = this.lists.get(rk)!
      const recheck = new Set(d.members.get(rk)!)
      // a policy recomputed whole: who it selected, and who it selects now
      for (const policyId of d.policies) {
        for (const id of lists.holdersOf(policyId)) recheck.add(id)
        if (policies.has(policyId)) for (const id of this.sources.policies.membersOf(policyId, INDEX_KIND[rk])) recheck.add(id)
      }
      const held = this.hashes.get(rk)!
      for (const id of recheck) {
        const was = lists.get(id)
        const now = held.has(id) ? this.sources.policies.policiesOf(INDEX_KIND[rk], id, 'service-policy') : NONE
        if (was === now) continue
        if (sameList(was, now)) {
          lists.set(id, now)
          continue
        }
        // both sorted: one merge walk
        let i = 0
        let j = 0
        while (i < was.length || j < now.length) {
          const a = was[i]
          const b = now[j]
          if (b === undefined || (a !== undefined && a < b)) {
            // a deleted policy goes with its memberships at the router
            if (!deletedPolicies.has(a!)) note(drop, a!, rk, id)
            i++
          } else if (a === undefined || b < a) {
            if (policies.has(b)) note(add, b, rk, id)
            j++
          } else {
            i++
            j++
          }
        }
        lists.set(id, now.filter((p) => policies.has(p)).length === now.length ? now : now.filter((p) => policies.has(p)))
      }
    }
    const toEvents = (m: Map<string, string[]>, isAdd: boolean) =>
      [...m].map(([key, ids]) => {
        const [rk, policyId] = key.split('\u0000') as [RelatedKind, string]
        return membership(policyId, rk, ids.sort(), isAdd)
      })
    return { adds: toEvents(add, true), drops: toEvents(drop, false) }
  }
}

function event(action: DataState_Action, kind: RdmKind, value: Model['value']): DataState_Event {
  return create(DataState_EventSchema, {
    action,
    isSynthetic: kind === 'publicKey',
    Model: { case: CASE[kind], value } as Model,
  })
}

function membership(policyId: string, rk: RelatedKind, ids: string[], add: boolean): DataState_Event {
  return create(DataState_EventSchema, {
    Model: { case: 'servicePolicyChange', value: { policyId, relatedEntityIds: ids, relatedEntityType: RELATED_TYPE[rk], add } },
  })
}

function kindOf(e: DataState_Event): RdmKind {
  const c = e.Model.case
  return (RDM_KINDS as readonly string[]).includes(c ?? '') ? (c as RdmKind) : 'publicKey'
}
