// The router data model as a real router keeps it, for tests: a full state replaces it, change sets are applied with
// the router's index rules (a synthetic one at once; otherwise the index must grow and `previousIndex` must be the
// index held, or it is a gap), every event as the router takes it (creates and updates replace a record, deletes
// remove it and its memberships, ServicePolicyChange adds and removes members). `dump()` gives a canonical form, so
// a model built from change sets can be compared with one built from a fresh full state. Written from
// router-control-plane.md §3.2 and the receiver rules of ziti common/router_data_model.go (facts only).
import { fromBinary, toJson } from '@bufbuild/protobuf'
import {
  ContentType,
  DataState_ChangeSetSchema,
  DataState_EventSchema,
  DataStateSchema,
  Header,
  ServicePolicyRelatedEntityType,
  SubscribeToDataModelRequestSchema,
  type DataState_Event,
} from '../../src/control/pb/edge_ctrl_pb.ts'
import { encodeMessage } from '../../src/control/control-messages.ts'
import type { Frame } from '../../src/control/wire/control-frame.ts'
import { readString } from '../../src/control/wire/control-headers.ts'
import type { RouterEmulator } from './router-emulator.ts'

export class GapError extends Error {}

type Members = { identity: Set<string>; service: Set<string>; postureCheck: Set<string> }

const RELATED: Record<number, keyof Members> = {
  [ServicePolicyRelatedEntityType.RelatedIdentity]: 'identity',
  [ServicePolicyRelatedEntityType.RelatedService]: 'service',
  [ServicePolicyRelatedEntityType.RelatedPostureCheck]: 'postureCheck',
}

export class ReceivedModel {
  index = 0n
  timelineId = ''
  readonly records = new Map<string, Map<string, unknown>>()
  readonly members = new Map<string, Members>()
  fullStates = 0
  changeSets = 0
  /** The subscription this model follows: frames of another one are dropped, as the router drops them. */
  subscriptionId: string | undefined

  /** Takes a DataState (20500) or DataState.ChangeSet (20501) frame; other frames are ignored. */
  take(f: Frame): void {
    const sid = subscriptionIdOf(f)
    if (sid !== undefined && this.subscriptionId !== undefined && sid !== this.subscriptionId) return
    if (f.contentType === ContentType.DataStateType) this.applyFullState(f.body)
    else if (f.contentType === ContentType.DataStateChangeSetType) this.applyChangeSet(f.body)
  }

  applyFullState(body: Uint8Array): void {
    const state = fromBinary(DataStateSchema, body)
    this.records.clear()
    this.members.clear()
    for (const e of state.events) this.applyEvent(e)
    this.index = state.endIndex
    this.timelineId = state.timelineId
    this.fullStates++
  }

  applyChangeSet(body: Uint8Array): void {
    const cs = fromBinary(DataState_ChangeSetSchema, body)
    if (!cs.isSynthetic) {
      if (cs.index <= this.index) throw new Error(`out of order change set: index ${cs.index}, held ${this.index}`)
      if (this.index !== 0n && cs.previousIndex !== 0n && cs.previousIndex !== this.index) {
        throw new GapError(`gap: change set ${cs.index} follows ${cs.previousIndex}, held ${this.index}`)
      }
    }
    for (const e of cs.changes) this.applyEvent(e)
    if (!cs.isSynthetic) this.index = cs.index
    this.changeSets++
  }

  applyEvent(e: DataState_Event): void {
    const m = e.Model
    if (m.case === undefined) throw new Error('an event without a model')
    if (m.case === 'servicePolicyChange') {
      const c = m.value
      const policy = this.members.get(c.policyId)
      if (!policy) {
        if (c.add) throw new Error(`membership of a service policy the model does not hold: ${c.policyId}`)
        return
      }
      const kind = RELATED[c.relatedEntityType]
      if (!kind) throw new Error(`unknown related entity type ${c.relatedEntityType}`)
      // the router finds an identity's policies through the identity: a membership of one it does not hold is lost
      const table = this.records.get(kind)
      for (const id of c.relatedEntityIds) {
        if (c.add && kind === 'identity' && !table?.has(id)) throw new Error(`membership of an identity the model does not hold: ${id} in ${c.policyId}`)
        if (c.add) policy[kind].add(id)
        else policy[kind].delete(id)
      }
      return
    }
    const table = this.records.get(m.case) ?? new Map<string, unknown>()
    this.records.set(m.case, table)
    const key = m.case === 'publicKey' ? m.value.kid : (m.value as { id: string }).id
    if (e.action === 2) {
      table.delete(key)
      if (m.case === 'servicePolicy') this.members.delete(key)
      const kind = m.case === 'identity' ? 'identity' : m.case === 'service' ? 'service' : m.case === 'postureCheck' ? 'postureCheck' : undefined
      if (kind) for (const p of this.members.values()) p[kind].delete(key)
      return
    }
    table.set(key, toJson(DataState_EventSchema, e, { alwaysEmitImplicit: false }))
    if (m.case === 'servicePolicy' && !this.members.has(key)) this.members.set(key, { identity: new Set(), service: new Set(), postureCheck: new Set() })
  }

  /** A canonical form: records by kind and id (their JSON without the action), memberships sorted. */
  dump(): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (const [kind, table] of [...this.records].sort(([a], [b]) => a.localeCompare(b))) {
      const rows: Record<string, unknown> = {}
      for (const [id, json] of [...table].sort(([a], [b]) => a.localeCompare(b))) {
        const { action: _a, isSynthetic: _s, ...rest } = json as Record<string, unknown>
        rows[id] = rest
      }
      if (Object.keys(rows).length > 0) out[kind] = rows
    }
    const members: Record<string, unknown> = {}
    for (const [id, m] of [...this.members].sort(([a], [b]) => a.localeCompare(b))) {
      members[id] = { identity: [...m.identity].sort(), service: [...m.service].sort(), postureCheck: [...m.postureCheck].sort() }
    }
    out.memberships = members
    return out
  }
}

/** Sends SubscribeToDataModelRequest (20505) as a router does (fire and forget). */
export function subscribe(
  emu: RouterEmulator,
  o: { subscriptionId: string; currentIndex?: bigint; timelineId?: string; renew?: boolean; durationS?: number },
): number {
  return emu.send({
    contentType: ContentType.SubscribeToDataModelRequestType,
    body: encodeMessage(SubscribeToDataModelRequestSchema, {
      currentIndex: o.currentIndex ?? 0n,
      subscriptionDurationSeconds: o.durationS ?? 300,
      renew: o.renew ?? false,
      timelineId: o.timelineId ?? '',
      subscriptionId: o.subscriptionId,
    }),
  })
}

/** The subscription id a data model frame carries (header 1026), if any. */
export const subscriptionIdOf = (f: Frame): string | undefined => readString(f.headers, Header.RouterDataModelSubscriptionId)

/** Frames of the data model (full states and change sets) received after position `from` of the emulator's list. */
export const dataModelFrames = (emu: RouterEmulator, from = 0): Frame[] =>
  emu.received.slice(from).filter((f) => f.contentType === ContentType.DataStateType || f.contentType === ContentType.DataStateChangeSetType)
