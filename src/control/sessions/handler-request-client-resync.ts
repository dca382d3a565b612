/**
 * RequestClientReSync (20204): an edge router whose API-session sync failed (not every chunk within 20 s) asks for
 * it again. The sessions part of the sync is repeated: a new full state under a greater sync id, paced per router
 * (sessions-sync-runs.ts: at most one a second however many requests arrive). Its `reason` goes to the log, cut short.
 * A body that does not decode is logged by the channel and dropped.
 * @see ziti controller/handler_edge_ctrl/resync.go, controller/sync_strats/sync_instant.go ReceiveResync
 */
import { RequestClientReSyncSchema } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'

/** The most characters of a reason logged. */
const REASON_CHARS = 200

export interface RequestClientReSyncDeps {
  /** Asks for a paced full state of this router. */
  resync(reason: string): void
}

export function requestClientReSyncHandler(deps: RequestClientReSyncDeps): ControlHandler {
  return (frame) => {
    const { reason } = decodeBody(RequestClientReSyncSchema, frame)
    deps.resync(reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS)}…` : reason)
  }
}
