/**
 * API sessions at the edge routers (issue 30): what lets a real v2 router admit SDKs that signed in with a legacy
 * zt-session token (it looks the token of an SDK's hello up among the sessions the controller pushed it, for 5 s).
 * - sync (after a router's ClientHello): every stored, fully authenticated session with a kept token, as a full state
 *   in chunks of 100 (sessions-sync.ts), in id order, a turn of the event loop between two chunks;
 * - then, from this node's applied events (on a cluster node every node applies every command, so each pushes to its
 *   own routers): ApiSessionAdded for a session opened fully authenticated or completing its MFA; ApiSessionUpdated
 *   when its fingerprints change (a certificate of the session created or deleted, a cert authenticator of its
 *   identity saved or deleted); ApiSessionRemoved (token and id) when it ends (logout, admin delete, timeout, identity
 *   disabled or deleted); SessionRemoved for service sessions removed (their own delete, lost access, with their API
 *   session) — each to every connected edge router;
 * - from routers: ApiSessionHeartbeat, RequestClientReSync, ValidateSessionsRequest (one handler file each).
 * Only sessions of zt-session sign-ins are stored, hence pushed; an OIDC sign-in's access token is checked by the
 * router against its data model's keys. Tokens are never logged.
 * @see router-control-plane.md §3.4; ziti controller/sync_strats/sync_instant.go, controller/env/broker.go
 */
import { Counter, type CounterSeries } from '../../lib/metrics.ts'
import type { EventBus } from '../../actors/runtime/event-bus.ts'
import type { SessionRegistryActor } from '../../actors/session-registry/session-registry-actor.ts'
import type { SessionRegistryEvent } from '../../actors/session-registry/session-registry-messages.ts'
import type { IdentityEvent } from '../../actors/identity/identity-messages.ts'
import type { IdentityReads } from '../../domain/identity/identity-reads.ts'
import type { ApiSession } from '../../domain/session/session-types.ts'
import { certFingerprintsOf, isRouterVisible } from '../../domain/session/session-router-view.ts'
import { ContentType as EdgeType } from '../pb/edge_ctrl_pb.ts'
import type { ControlFeature, FeatureContext } from '../control-feature.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { sessionSenders, type RouterApiSession, type SessionSenders } from './sessions-senders.ts'
import { chunkCountOf, FULL_STATE_CHUNK, SyncIds, syncStatesOf } from './sessions-sync.ts'
import { SessionSyncRuns } from './sessions-sync-runs.ts'
import { apiSessionHeartbeatHandler } from './handler-api-session-heartbeat.ts'
import { requestClientReSyncHandler } from './handler-request-client-resync.ts'
import { validateSessionsHandler } from './handler-validate-sessions.ts'

export interface SessionsFeatureDeps {
  sessions: Pick<SessionRegistryActor, 'snapshot' | 'tell'>
  identities: { snapshot(): Pick<IdentityReads, 'authenticatorsOf'> }
  bus: EventBus
  /** The least time between two full states of one router that it asked for (default 1 s). */
  resyncGapMs?: number
}

type SessionEv<T extends SessionRegistryEvent['type']> = Extract<SessionRegistryEvent, { type: T }>
type IdentityEv<T extends IdentityEvent['type']> = Extract<IdentityEvent, { type: T }>

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

export function createSessionsFeature(deps: SessionsFeatureDeps, ctx: FeatureContext): ControlFeature {
  const { registry, clock, logger } = ctx
  const metrics = sessionMetrics(ctx)
  const ids = new SyncIds(() => clock.now())

  /** The session as routers hold it; undefined when they are not told of it (MFA owed, or no token kept). */
  const viewOf = (s: ApiSession): RouterApiSession | undefined => {
    const reads = deps.sessions.snapshot()
    const token = reads.routerTokenOf(s)
    if (token === undefined || !isRouterVisible(s)) return undefined
    const certFingerprints = certFingerprintsOf(deps.identities.snapshot().authenticatorsOf(s.identityId), reads.sessionCertificatesOf(s.id), clock.now())
    return { token, certFingerprints, id: s.id, identityId: s.identityId }
  }
  const edgeRouters = () => [...registry.all()].filter((r) => r.isEdge && !r.channel.isClosed)
  /** Sends to every connected edge router; answers how many took it. */
  const broadcast = (send: (s: SessionSenders) => boolean): number => {
    let n = 0
    for (const r of edgeRouters()) if (send(sessionSenders(r.channel))) n++
    return n
  }
  const pushAdded = (s: ApiSession) => {
    if (registry.size === 0) return
    const v = viewOf(s)
    if (!v) return
    const syncId = ids.next()
    metrics.added.inc(broadcast((send) => send.added([v], syncId)))
  }
  const pushUpdated = (sessions: readonly ApiSession[]) => {
    if (registry.size === 0) return
    const views = sessions.flatMap((s) => viewOf(s) ?? [])
    if (views.length === 0) return
    metrics.updated.inc(views.length * broadcast((send) => send.updated(views)))
  }
  const pushUpdatedOfIdentity = (identityId: string) => pushUpdated(deps.sessions.snapshot().sessionsOf(identityId))

  /** One full state to `router` (see the header); stops early when superseded or the router left. */
  const fullState = async (router: ConnectedRouter, syncId: string, isCurrent: () => boolean): Promise<void> => {
    const reads = deps.sessions.snapshot()
    const idsInSync = [...reads.byId.values()].filter((s) => isRouterVisible(s) && reads.routerTokenOf(s) !== undefined).map((s) => s.id)
    idsInSync.sort()
    const send = sessionSenders(router.channel)
    let named = 0
    for (const state of syncStatesOf(syncId, chunkCountOf(idsInSync.length))) {
      if (state.sequence > 0) await nextTurn()
      if (!isCurrent() || router.channel.isClosed) {
        logger.debug({ routerId: router.id, syncId, sentMessages: state.sequence }, 'an API-session sync of an edge router stopped: superseded, or the router left')
        return
      }
      // read at the time of its chunk: a session gone meanwhile is left out (its removal was pushed)
      const chunk = idsInSync.slice(state.sequence * FULL_STATE_CHUNK, (state.sequence + 1) * FULL_STATE_CHUNK).flatMap((id) => {
        const s = reads.byId.get(id)
        return (s && viewOf(s)) ?? []
      })
      if (!send.fullStateChunk(chunk, state)) return
      named += chunk.length
    }
    metrics.fullState.inc(named)
    logger.info({ routerId: router.id, syncId, apiSessions: named, messages: chunkCountOf(idsInSync.length) }, 'API sessions synchronized to an edge router')
  }
  const runs = new SessionSyncRuns<ConnectedRouter>({
    run: fullState,
    ids,
    monotonicMs: () => performance.now(),
    minGapMs: deps.resyncGapMs ?? 1_000,
    failed: (router, err) => logger.warn({ routerId: router.id, err: err instanceof Error ? err.message : String(err) }, 'an API-session resync of an edge router failed'),
  })

  const { bus } = deps
  const unsubscribe = [
    bus.subscribe<SessionEv<'apiSession.created'>>('apiSession.created', (e) => pushAdded(e.session)),
    bus.subscribe<SessionEv<'apiSession.mfaCompleted'>>('apiSession.mfaCompleted', (e) => pushAdded(e.session)),
    bus.subscribe<SessionEv<'apiSession.deleted'>>('apiSession.deleted', (e) => {
      if (e.token === undefined || !isRouterVisible(e.session) || registry.size === 0) return
      const token = e.token
      metrics.removed.inc(broadcast((send) => send.apiSessionsRemoved([token], [e.session.id])))
    }),
    bus.subscribe<SessionEv<'apiSessionCert.created'>>('apiSessionCert.created', (e) => {
      const s = deps.sessions.snapshot().byId.get(e.certificate.apiSessionId)
      if (s) pushUpdated([s])
    }),
    bus.subscribe<SessionEv<'apiSessionCert.deleted'>>('apiSessionCert.deleted', (e) => {
      const s = deps.sessions.snapshot().byId.get(e.certificate.apiSessionId)
      if (s) pushUpdated([s])
    }),
    bus.subscribe<IdentityEv<'authenticator.saved'>>('authenticator.saved', (e) => {
      if (e.authenticator.method === 'cert') pushUpdatedOfIdentity(e.authenticator.identityId)
    }),
    bus.subscribe<IdentityEv<'authenticator.deleted'>>('authenticator.deleted', (e) => {
      if (e.authenticator.method === 'cert') pushUpdatedOfIdentity(e.authenticator.identityId)
    }),
    bus.subscribe<SessionEv<'session.deleted'>>('session.deleted', (e) => {
      if (registry.size === 0) return
      const removed = e.sessions.map((s) => s.id)
      metrics.serviceRemoved.deleted.inc(removed.length * broadcast((send) => send.sessionsRemoved(removed)))
    }),
  ]

  return {
    name: 'api sessions',
    handlers(router) {
      if (!router.isEdge) return []
      const send = sessionSenders(router.channel)
      return [
        [
          EdgeType.ApiSessionHeartbeatType,
          apiSessionHeartbeatHandler({
            sessions: () => deps.sessions.snapshot(),
            touch: (tokenHashes) => deps.sessions.tell({ type: 'apiSession.touchBatch', tokenHashes, at: clock.now() }),
            removed: (tokens) => {
              if (send.apiSessionsRemoved(tokens)) metrics.removedUnknown.inc(tokens.length)
              logger.debug({ routerId: router.id, tokens: tokens.length }, 'an edge router heartbeat named tokens of no API session: removed')
            },
            count: (result, n) => metrics.heartbeat[result].inc(n),
          }),
        ],
        [
          EdgeType.RequestClientReSyncType,
          requestClientReSyncHandler({
            resync: (reason) => {
              logger.info({ routerId: router.id, reason }, 'an edge router asked for its API sessions again')
              runs.ask(router)
            },
          }),
        ],
        [
          EdgeType.ValidateSessionsRequestType,
          validateSessionsHandler({
            sessions: () => deps.sessions.snapshot(),
            removed: (ids) => {
              if (send.sessionsRemoved(ids)) metrics.serviceRemoved.invalid.inc(ids.length)
            },
            count: (result, n) => metrics.validated[result].inc(n),
          }),
        ],
      ]
    },
    synchronize: (router) => runs.start(router),
    disconnected: (router) => runs.forget(router),
    stop() {
      for (const u of unsubscribe) u()
      runs.stop()
    },
  }
}

/** The feature's series, each label set made once. */
function sessionMetrics(ctx: FeatureContext) {
  const sent = ctx.metrics.register(
    new Counter('edgeplane_control_api_sessions_sent_total', 'API sessions named in the messages sent to edge routers (one per router told), by message', ['message']),
  )
  const service = ctx.metrics.register(
    new Counter('edgeplane_control_service_sessions_removed_total', 'Service sessions named in SessionRemoved messages sent to edge routers (one per router told), by cause', ['cause']),
  )
  const heartbeat = ctx.metrics.register(new Counter('edgeplane_control_api_session_heartbeat_tokens_total', 'API-session tokens edge routers named in heartbeats, by result', ['result']))
  const validated = ctx.metrics.register(new Counter('edgeplane_control_validated_sessions_total', 'Service session ids edge routers asked to validate, by result', ['result']))
  const of = <K extends string>(c: Counter, keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, c.labels(k)])) as Record<K, CounterSeries>
  return {
    fullState: sent.labels('full_state'),
    added: sent.labels('added'),
    updated: sent.labels('updated'),
    removed: sent.labels('removed'),
    removedUnknown: sent.labels('removed_unknown'),
    serviceRemoved: of(service, ['deleted', 'invalid'] as const),
    heartbeat: of(heartbeat, ['known', 'unknown', 'ignored'] as const),
    validated: of(validated, ['valid', 'invalid', 'ignored'] as const),
  }
}
