/**
 * The controllers actor: sole writer of `controllers`, the replicated list of a cluster's nodes. A node joins (or joins
 * again after a restart, a new address or a new certificate) with `controller.join`; `edgeplane cluster remove` retires
 * one with `controller.remove`. A single node never writes here (its list is empty, as the real controller's).
 */
import { ApiError } from '../../errors/api-error.ts'
import { assertNever } from '../../lib/assert-never.ts'
import type { ControllerNode } from '../../domain/cluster/controller-types.ts'
import type { Store } from '../../store/store-env.ts'
import { Actor, type ActorBehavior, type ActorSystemDeps, type ChangeContext } from '../runtime/actor-runtime.ts'

export type ControllersMsg =
  | { type: 'controller.join'; controller: Omit<ControllerNode, 'lastJoinedAt' | 'createdAt' | 'updatedAt'>; change: ChangeContext }
  | { type: 'controller.remove'; id: string; change: ChangeContext }

export interface ControllersReplies {
  'controller.join': { controller: ControllerNode }
  'controller.remove': void
}

export type ControllersEvent = { type: 'controller.changed'; controller: ControllerNode } | { type: 'controller.removed'; controller: ControllerNode }

/** What readers see: the nodes by id, and a node by the kid (certificate fingerprint) of the tokens it signs. */
export interface ControllersReads {
  readonly byId: ReadonlyMap<string, ControllerNode>
  byFingerprint(fingerprint: string): ControllerNode | undefined
}

export class ControllersState implements ControllersReads {
  readonly byId = new Map<string, ControllerNode>()
  byFingerprint(fingerprint: string): ControllerNode | undefined {
    for (const c of this.byId.values()) if (c.fingerprint === fingerprint) return c
    return undefined
  }
}

export type ControllersActor = Actor<ControllersState, ControllersMsg, ControllersReplies, ControllersEvent, ControllersReads>

const behavior: ActorBehavior<ControllersState, ControllersMsg, ControllersReplies, ControllersEvent> = {
  owner: 'controllers',
  handle(state, msg, tx) {
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
        tx.emit({ type: 'controller.removed', controller: prev })
        return
      }
      default:
        return assertNever(msg, 'controllers message')
    }
  },
}

/** Loads the nodes from LMDB and starts the actor. */
export function startControllersActor(store: Store, deps: ActorSystemDeps): ControllersActor {
  const state = new ControllersState()
  for (const { value } of store.db('controllers').getRange()) {
    const c = value as ControllerNode
    state.byId.set(c.id, c)
  }
  return new Actor('controllers', state, behavior, deps)
}
