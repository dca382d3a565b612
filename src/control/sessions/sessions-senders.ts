/**
 * What the controller sends an edge router about sessions, as typed calls built on sendTyped (no body is written by
 * hand): API sessions added (a full state's chunk, or one session), updated (new certificate fingerprints), removed
 * (by token), and service sessions removed (by id). Each answers false when the channel is closed (nothing was sent).
 * @see router-control-plane.md §3.4; ziti controller/sync_strats/sync_instant.go
 */
import type { MessageInitShape } from '@bufbuild/protobuf'
import { ApiSessionAddedSchema, ApiSessionRemovedSchema, ApiSessionSchema, ApiSessionUpdatedSchema, SessionRemovedSchema } from '../pb/edge_ctrl_pb.ts'
import type { ControlChannel } from '../channel/control-channel.ts'
import { sendTyped } from '../control-messages.ts'
import { encodeString } from '../wire/control-headers.ts'
import type { HeaderMap } from '../wire/control-frame.ts'
import { encodeSyncState, SYNC_STRATEGY, SyncHeader, type InstantSyncState } from './sessions-sync.ts'

/** One API session as a router holds it: token, certificate fingerprints, id, identity. */
export type RouterApiSession = MessageInitShape<typeof ApiSessionSchema>

export interface SessionSenders {
  /** One message of a full state: ApiSessionAdded{isFullState} with headers 1013 "instant" and 1014 `state`. */
  fullStateChunk(sessions: RouterApiSession[], state: InstantSyncState): boolean
  /**
   * Sessions new to the router: ApiSessionAdded{isFullState: false}. The router reads no header of it; the real
   * controller's 1013 and 1014 (a sync of its own, one message) are sent as well.
   */
  added(sessions: RouterApiSession[], syncId: string): boolean
  /** Sessions whose fingerprints changed: ApiSessionUpdated, with 1013 "instant" and an empty 1014 as the real one. */
  updated(sessions: RouterApiSession[]): boolean
  /** ApiSessionRemoved: the router closes the SDK connections of these tokens; `ids`, when given, one per token. */
  apiSessionsRemoved(tokens: string[], ids?: string[]): boolean
  /**
   * SessionRemoved: service sessions by id (the JWT `jti`, which the router keys them by). A session's token is its
   * id, as the real controller's, so both lists carry the ids; the router reads `ids` only when they are as many.
   */
  sessionsRemoved(ids: string[]): boolean
}

const strategyHeaders = (state: Uint8Array): HeaderMap =>
  new Map([
    [SyncHeader.StrategyType as number, encodeString(SYNC_STRATEGY)],
    [SyncHeader.StrategyState as number, state],
  ])

export function sessionSenders(ch: ControlChannel): SessionSenders {
  const sent = (seq: number | undefined) => seq !== undefined
  return {
    fullStateChunk(sessions, state) {
      return sent(sendTyped(ch, ApiSessionAddedSchema, { isFullState: true, apiSessions: sessions }, strategyHeaders(encodeSyncState(state))))
    },
    added(sessions, syncId) {
      const state = encodeSyncState({ id: syncId, isLast: true, sequence: 0 })
      return sent(sendTyped(ch, ApiSessionAddedSchema, { isFullState: false, apiSessions: sessions }, strategyHeaders(state)))
    },
    updated(sessions) {
      return sent(sendTyped(ch, ApiSessionUpdatedSchema, { apiSessions: sessions }, strategyHeaders(new Uint8Array(0))))
    },
    apiSessionsRemoved(tokens, ids) {
      if (ids !== undefined && ids.length !== tokens.length) throw new TypeError(`ApiSessionRemoved: ${ids.length} ids for ${tokens.length} tokens`)
      return sent(sendTyped(ch, ApiSessionRemovedSchema, { tokens, ids: ids ?? [] }))
    },
    sessionsRemoved(ids) {
      return sent(sendTyped(ch, SessionRemovedSchema, { tokens: ids, ids }))
    },
  }
}
