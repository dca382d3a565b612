/**
 * The controllers actor: sole writer of `controllers`, the replicated list of a cluster's nodes, and of
 * `controller-settings`, the settings they share and each node's override. A node joins (or joins again after a
 * restart, a new address or a new certificate) with `controller.join`; `edgeplane cluster remove` retires one with
 * `controller.remove`, its settings override with it. A single node never writes `controllers` (its list is empty, as
 * the real controller's); its settings are `global` alone.
 */
import { ApiError } from '../../errors/api-error.ts'
import { assertNever } from '../../lib/assert-never.ts'
import type { ControllerNode } from '../../domain/cluster/controller-types.ts'
import {
  decideGlobalSeed,
  decideSettingCreate,
  decideSettingDelete,
  decideSettingUpdate,
  effectiveSettings,
  GLOBAL_SETTINGS_ID,
  type ControllerSetting,
  type ControllerSettingInput,
  type EffectiveSettings,
  type OidcUriSettings,
} from '../../domain/cluster/controller-setting.ts'
import type { Store } from '../../store/store-env.ts'
import { Actor, type ActorBehavior, type ActorSystemDeps, type ChangeContext } from '../runtime/actor-runtime.ts'

export type ControllersMsg =
  | { type: 'controller.join'; controller: Omit<ControllerNode, 'lastJoinedAt' | 'createdAt' | 'updatedAt'>; change: ChangeContext }
  | { type: 'controller.remove'; id: string; change: ChangeContext }
  /** Makes `global` when there is none (the first start of a data directory or of a cluster); else changes nothing. */
  | { type: 'controllerSetting.seed'; oidc: Required<OidcUriSettings>; change: ChangeContext }
  | { type: 'controllerSetting.create'; controllerId: string; input: ControllerSettingInput; change: ChangeContext }
  | { type: 'controllerSetting.update'; id: string; input: ControllerSettingInput; replace: boolean; change: ChangeContext }
  | { type: 'controllerSetting.delete'; id: string; change: ChangeContext }

export interface ControllersReplies {
  'controller.join': { controller: ControllerNode }
  'controller.remove': void
  'controllerSetting.seed': { created: boolean }
  'controllerSetting.create': { id: string }
  'controllerSetting.update': void
  'controllerSetting.delete': void
}

export type ControllersEvent = { type: 'controller.changed'; controller: ControllerNode } | { type: 'controller.removed'; controller: ControllerNode }

/** What readers see: the nodes by id, a node by the kid (certificate fingerprint) of the tokens it signs, the settings. */
export interface ControllersReads {
  readonly byId: ReadonlyMap<string, ControllerNode>
  byFingerprint(fingerprint: string): ControllerNode | undefined
  /** `global` and the nodes' overrides, by id. */
  readonly settings: ReadonlyMap<string, ControllerSetting>
  /** The settings the controller `id` applies (`global` for a single node, or an id without override); undefined before `global` is made. */
  effectiveSettings(id: string | undefined): EffectiveSettings | undefined
}

export class ControllersState implements ControllersReads {
  readonly byId = new Map<string, ControllerNode>()
  readonly settings = new Map<string, ControllerSetting>()
  byFingerprint(fingerprint: string): ControllerNode | undefined {
    for (const c of this.byId.values()) if (c.fingerprint === fingerprint) return c
    return undefined
  }
  effectiveSettings(id: string | undefined): EffectiveSettings | undefined {
    const global = this.settings.get(GLOBAL_SETTINGS_ID)
    return global && effectiveSettings(global, id === undefined ? undefined : this.settings.get(id))
  }
}

export type ControllersActor = Actor<ControllersState, ControllersMsg, ControllersReplies, ControllersEvent, ControllersReads>

const behavior: ActorBehavior<ControllersState, ControllersMsg, ControllersReplies, ControllersEvent> = {
  owner: 'controllers',
  handle(state, msg, tx) {
    const putSetting = (s: ControllerSetting) => {
      state.settings.set(s.id, s)
      tx.put('controller-settings', s.id, s)
    }
    switch (msg.type) {
      case 'controller.join': {
        const prev = state.byId.get(msg.controller.id)
        const next: ControllerNode = { ...msg.controller, lastJoinedAt: tx.now, createdAt: prev?.createdAt ?? tx.now, updatedAt: tx.now }
        state.byId.set(next.id, next)
        tx.put('controllers', next.id, next)
        tx.emit({ type: 'controller.changed', controller: next })
        return { controller: next }
      }
      case 'controller.remove': {
        const prev = state.byId.get(msg.id)
        if (!prev) throw ApiError.notFound()
        state.byId.delete(msg.id)
        tx.remove('controllers', msg.id)
        if (state.settings.delete(msg.id)) tx.remove('controller-settings', msg.id)
        tx.emit({ type: 'controller.removed', controller: prev })
        return
      }
      case 'controllerSetting.seed': {
        const global = decideGlobalSeed(state.settings.get(GLOBAL_SETTINGS_ID), msg.oidc, tx.now)
        if (global) putSetting(global)
        return { created: global !== undefined }
      }
      case 'controllerSetting.create': {
        const id = msg.controllerId
        const s = decideSettingCreate(state.settings.get(id), id, state.byId.has(id), msg.input, tx.now)
        putSetting(s)
        return { id: s.id }
      }
      case 'controllerSetting.update': {
        putSetting(decideSettingUpdate(state.settings.get(msg.id), msg.input, msg.replace, tx.now))
        return
      }
      case 'controllerSetting.delete': {
        const s = decideSettingDelete(state.settings.get(msg.id))
        state.settings.delete(s.id)
        tx.remove('controller-settings', s.id)
        return
      }
      default:
        return assertNever(msg, 'controllers message')
    }
  },
}

/** Loads the nodes and the settings from LMDB and starts the actor. */
export function startControllersActor(store: Store, deps: ActorSystemDeps): ControllersActor {
  const state = new ControllersState()
  for (const { value } of store.db('controllers').getRange()) {
    const c = value as ControllerNode
    state.byId.set(c.id, c)
  }
  for (const { value } of store.db('controller-settings').getRange()) {
    const s = value as ControllerSetting
    state.settings.set(s.id, s)
  }
  return new Actor('controllers', state, behavior, deps)
}
