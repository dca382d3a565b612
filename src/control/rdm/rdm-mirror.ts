/**
 * The router data model as routers hold it, kept as the least that lets a change be computed: a hash of every record
 * last sent, and the service policies' memberships (policy → identities, services, posture checks, and back). Given
 * what changed, `diff` rebuilds those records from the sources, compares, and answers the events that take a router
 * from the old model to the new one; `fullState` answers every record as Create events. Rules kept here:
 * - An unchanged record yields no event; a record gone yields a Delete, a new one a Create, a changed one an Update.
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

type Members = Record<RelatedKind, Set<string>>

export class RdmMirror {
  private readonly hashes = new Map<RdmKind, Map<string, number | bigint>>(RDM_KINDS.map((k) => [k, new Map()]))
  /** Service policy → the entities it selects, per kind (as last sent). */
  private readonly members = new Map<string, Members>()
  /** Entity → the service policies selecting it, per kind (the same relation, the other way). */
  private readonly memberOf = new Map<RelatedKind, Map<string, Set<string>>>(RELATED_KINDS.map((k) => [k, new Map()]))

  constructor(private readonly sources: RdmSources) {}

  /** Loads the whole model from the sources (at start): no events. */
  load(): void {
    const d = new RdmDirty()
    this.allIds((kind, id) => d.mark(kind, id))
    for (const id of this.sources.graph().servicePolicies.values()) d.policies.add(id.id)
    d.publicKeys = true
    this.diff(d)
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
        const h = Bun.hash(toBinary(SCHEMA[kind], msg as never))
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
    for (const id of this.hashes.get('servicePolicy')!.keys()) {
      const msg = this.build('servicePolicy', id)
      if (msg === undefined) continue
      out.push(event(DataState_Action.Create, 'servicePolicy', msg))
      const m = this.members.get(id)
      for (const rk of ['service', 'postureCheck', 'identity'] as const) {
        const ids = [...(m?.[rk] ?? [])]
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
      const h = Bun.hash(toBinary(DataState_PublicKeySchema, msg))
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
    const link = (policyId: string, rk: RelatedKind, id: string, on: boolean) => {
      const m = this.members.get(policyId) ?? this.newMembers(policyId)
      const back = this.memberOf.get(rk)!
      if (on) {
        m[rk].add(id)
        const set = back.get(id)
        if (set) set.add(policyId)
        else back.set(id, new Set([policyId]))
      } else {
        m[rk].delete(id)
        const set = back.get(id)
        set?.delete(policyId)
        if (set?.size === 0) back.delete(id)
      }
    }
    const deletedPolicies = removed.get('servicePolicy')!
    // a deleted policy: the router drops it with its memberships; the mirror forgets them without events
    for (const policyId of deletedPolicies) {
      const m = this.members.get(policyId)
      if (m) for (const rk of RELATED_KINDS) for (const id of [...m[rk]]) link(policyId, rk, id, false)
      this.members.delete(policyId)
    }
    // policies recomputed whole (new, changed roles)
    for (const policyId of d.policies) {
      if (deletedPolicies.has(policyId) || !this.hashes.get('servicePolicy')!.has(policyId)) continue
      const m = this.members.get(policyId) ?? this.newMembers(policyId)
      for (const rk of RELATED_KINDS) {
        const now = new Set(this.sources.policies.membersOf(policyId, INDEX_KIND[rk]))
        for (const id of [...m[rk]]) {
          if (now.has(id)) continue
          link(policyId, rk, id, false)
          note(drop, policyId, rk, id)
        }
        for (const id of now) {
          if (m[rk].has(id) || !this.hashes.get(rk)!.has(id)) continue
          link(policyId, rk, id, true)
          note(add, policyId, rk, id)
        }
      }
    }
    // entities whose own memberships changed (created, deleted, new role attributes)
    for (const rk of RELATED_KINDS) {
      for (const id of d.members.get(rk)!) {
        const was = this.memberOf.get(rk)!.get(id) ?? new Set<string>()
        const gone = removed.get(rk)!.has(id) || !this.hashes.get(rk)!.has(id)
        const now = new Set(gone ? [] : this.sources.policies.policiesOf(INDEX_KIND[rk], id, 'service-policy'))
        for (const policyId of [...was]) {
          if (now.has(policyId) || d.policies.has(policyId) || deletedPolicies.has(policyId)) continue
          link(policyId, rk, id, false)
          note(drop, policyId, rk, id)
        }
        for (const policyId of now) {
          if (was.has(policyId) || d.policies.has(policyId) || !this.hashes.get('servicePolicy')!.has(policyId)) continue
          link(policyId, rk, id, true)
          note(add, policyId, rk, id)
        }
      }
    }
    const toEvents = (m: Map<string, string[]>, isAdd: boolean) =>
      [...m].map(([key, ids]) => {
        const [rk, policyId] = key.split('\u0000') as [RelatedKind, string]
        return membership(policyId, rk, ids.sort(), isAdd)
      })
    return { adds: toEvents(add, true), drops: toEvents(drop, false) }
  }

  private newMembers(policyId: string): Members {
    const m: Members = { identity: new Set(), service: new Set(), postureCheck: new Set() }
    this.members.set(policyId, m)
    return m
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
