/**
 * The policy-graph actor: sole writer of config types, configs, services, routers, terminators, the three policy
 * kinds, per-identity service config overrides and posture checks. Handlers (policy-graph-{configs,routers,policies}.ts) decide with
 * domain/policy checks, then apply synchronously and emit the events the policy resolver consumes.
 */
import { repairGraph } from './policy-graph-repair.ts'
import { assertNever } from '../../lib/assert-never.ts'
import { BUILTIN_CONFIG_SCHEMA, BUILTIN_CONFIG_TYPES } from '../../domain/policy/graph-decide-configs.ts'
import type {
  Config,
  ConfigType,
  EdgeRouterPolicy,
  Router,
  Service,
  ServiceConfigOverride,
  ServiceEdgeRouterPolicy,
  ServicePolicy,
  Terminator,
} from '../../domain/policy/policy-types.ts'
import type { PolicyGraphReads } from '../../domain/policy/graph-reads.ts'
import type { Store, WriteOp } from '../../store/store-env.ts'
import { Actor, type ActorBehavior, type ActorSystemDeps } from '../runtime/actor-runtime.ts'
import {
  addOverrides,
  deleteConfig,
  deleteConfigType,
  deleteService,
  removeOverrides,
  saveConfig,
  saveConfigType,
  saveService,
} from './policy-graph-configs.ts'
import type { PolicyGraphEvent, PolicyGraphMsg, PolicyGraphReplies } from './policy-graph-messages.ts'
import {
  deletePolicy,
  identityRemoved,
  saveEdgeRouterPolicy,
  saveServiceEdgeRouterPolicy,
  saveServicePolicy,
  type GraphCtx,
  type PolicyGraphLookups,
} from './policy-graph-policies.ts'
import { deleteRouter, enrollRouter, extendRouter, reEnrollRouter, saveRouter } from './policy-graph-routers.ts'
import { deleteTerminator, establishTerminator, removeTerminators, routerUpdateTerminator, saveTerminator } from './policy-graph-terminators.ts'
import { PolicyGraphState } from './policy-graph-state.ts'
import { deletePostureCheck, savePostureCheck } from './policy-graph-posture.ts'
import type { PostureCheck } from '../../domain/posture/posture-types.ts'

export type { PolicyGraphLookups } from './policy-graph-policies.ts'
export type PolicyGraphActor = Actor<PolicyGraphState, PolicyGraphMsg, PolicyGraphReplies, PolicyGraphEvent, PolicyGraphReads>

function behavior(lookups: PolicyGraphLookups): ActorBehavior<PolicyGraphState, PolicyGraphMsg, PolicyGraphReplies, PolicyGraphEvent> {
  return {
    owner: 'policy-graph',
    handle(state, msg, tx) {
      // every message moves the version on (PolicyGraphReads.version); handlers apply synchronously, so no reader
      // sees the new number with the old state
      state.noteHandled()
      const ctx: GraphCtx = { state, tx, lookups }
      switch (msg.type) {
        case 'configType.create':
          return saveConfigType(ctx, undefined, msg.input, false)
        case 'configType.update':
          return void saveConfigType(ctx, msg.id, msg.input, msg.replace)
        case 'configType.delete':
          return deleteConfigType(ctx, msg.id)
        case 'config.create':
          return saveConfig(ctx, undefined, msg.input, false)
        case 'config.update':
          return void saveConfig(ctx, msg.id, msg.input, msg.replace)
        case 'config.delete':
          return deleteConfig(ctx, msg.id)
        case 'service.create':
          return saveService(ctx, undefined, msg.input, false)
        case 'service.update':
          return void saveService(ctx, msg.id, msg.input, msg.replace)
        case 'service.delete':
          return deleteService(ctx, msg.id)
        case 'router.create':
          return saveRouter(ctx, undefined, msg.input, false, msg.isEdge, { id: msg.id, enrollment: msg.enrollment })
        case 'router.update':
          return void saveRouter(ctx, msg.id, msg.input, msg.replace)
        case 'router.delete':
          return deleteRouter(ctx, msg.id)
        case 'router.enroll':
          return enrollRouter(ctx, msg.token, msg.fingerprint)
        case 'router.extend':
          return extendRouter(ctx, msg.id, msg.previous, msg.fingerprint)
        case 'router.reEnroll':
          return reEnrollRouter(ctx, msg.id, msg.enrollment)
        case 'terminator.create':
          return saveTerminator(ctx, undefined, msg.input, false)
        case 'terminator.update':
          return void saveTerminator(ctx, msg.id, msg.input, msg.replace)
        case 'terminator.delete':
          return deleteTerminator(ctx, msg.id)
        case 'terminator.establish':
          return establishTerminator(ctx, msg.input)
        case 'terminator.routerUpdate':
          return routerUpdateTerminator(ctx, msg)
        case 'terminator.removeMany':
          return removeTerminators(ctx, msg.ids, msg.routerId)
        case 'servicePolicy.create':
          return saveServicePolicy(ctx, undefined, msg.input, false)
        case 'servicePolicy.update':
          return void saveServicePolicy(ctx, msg.id, msg.input, msg.replace)
        case 'servicePolicy.delete':
          return deletePolicy(ctx, 'service-policy', msg.id)
        case 'edgeRouterPolicy.create':
          return saveEdgeRouterPolicy(ctx, undefined, msg.input, false)
        case 'edgeRouterPolicy.update':
          return void saveEdgeRouterPolicy(ctx, msg.id, msg.input, msg.replace)
        case 'edgeRouterPolicy.delete':
          return deletePolicy(ctx, 'edge-router-policy', msg.id)
        case 'serviceEdgeRouterPolicy.create':
          return saveServiceEdgeRouterPolicy(ctx, undefined, msg.input, false)
        case 'serviceEdgeRouterPolicy.update':
          return void saveServiceEdgeRouterPolicy(ctx, msg.id, msg.input, msg.replace)
        case 'serviceEdgeRouterPolicy.delete':
          return deletePolicy(ctx, 'service-edge-router-policy', msg.id)
        case 'overrides.add':
          return addOverrides(ctx, msg.identityId, msg.links)
        case 'overrides.remove':
          return removeOverrides(ctx, msg.identityId, msg.links)
        case 'identity.removed':
          return identityRemoved(ctx, msg.identityId)
        case 'integrity.repair':
          return repairGraph(ctx, msg.repairs)
        case 'postureCheck.create':
          return savePostureCheck(ctx, undefined, msg.input, false)
        case 'postureCheck.update':
          return void savePostureCheck(ctx, msg.id, msg.input, msg.replace)
        case 'postureCheck.delete':
          return deletePostureCheck(ctx, msg.id)
        default:
          return assertNever(msg, 'policy graph message')
      }
    },
  }
}

/**
 * Loads the graph from LMDB (one range scan per sub-db, no per-record checks: records were checked when written),
 * writes the built-in config types on first start, and starts the actor.
 */
export async function startPolicyGraphActor(store: Store, deps: ActorSystemDeps, lookups: PolicyGraphLookups): Promise<PolicyGraphActor> {
  const state = new PolicyGraphState()
  const load = <T>(db: Parameters<Store['db']>[0], put: (v: T) => void) => {
    for (const { value } of store.db(db).getRange()) put(value as T)
  }
  load<ConfigType>('config-types', (v) => state.putConfigType(v))
  load<Config>('configs', (v) => state.putConfig(v))
  load<Service>('services', (v) => state.putService(v))
  // routers stored before router enrollment have no enrollment member: read as none
  load<Router>('routers', (v) => state.putRouter(v.enrollment === undefined ? { ...v, enrollment: null } : v))
  // terminators stored before routers made them have no isSystem, peerData or sourceCtrl: read as an admin's
  load<Terminator>('terminators', (v) => state.putTerminator({ ...v, isSystem: v.isSystem ?? false, peerData: v.peerData ?? {}, sourceCtrl: v.sourceCtrl ?? '' }))
  load<PostureCheck>('posture-checks', (v) => state.putPostureCheck(v))
  load<ServicePolicy>('service-policies', (v) => state.putServicePolicy(v))
  load<EdgeRouterPolicy>('edge-router-policies', (v) => state.putEdgeRouterPolicy(v))
  load<ServiceEdgeRouterPolicy>('service-edge-router-policies', (v) => state.putServiceEdgeRouterPolicy(v))
  for (const { key, value } of store.db('service-config-overrides').getRange()) {
    const typeId = String(key).slice(String(key).lastIndexOf('/') + 1)
    state.putOverride(value as ServiceConfigOverride, typeId)
  }

  const now = deps.clock.now()
  const missing: WriteOp[] = []
  for (const b of BUILTIN_CONFIG_TYPES) {
    if (state.configTypes.has(b.id)) continue
    const t: ConfigType = { ...b, schema: BUILTIN_CONFIG_SCHEMA, isSystem: true, tags: {}, createdAt: now, updatedAt: now }
    state.putConfigType(t)
    missing.push({ db: 'config-types', key: t.id, value: t })
  }
  await store.commit(missing)
  return new Actor('policy-graph', state, behavior(lookups), deps)
}
