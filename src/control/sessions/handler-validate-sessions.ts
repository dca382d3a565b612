/**
 * ValidateSessionsRequest (20213): after reconnecting, an edge router names the legacy service sessions its SDKs
 * use, by id (the JWT `jti`, which is also a session's token), in chunks. Rules:
 * - the ids of no stored session (ended, deleted, or never ours) are answered with one SessionRemoved naming them,
 *   ids and tokens alike, so the router closes what uses them (the real controller names tokens only, and its router
 *   then closes nothing: it reads ids only when they are as many as the tokens);
 * - at most MAX_TOKENS ids of a message are read, values longer than MAX_TOKEN_CHARS are skipped, both counted;
 * - a body that does not decode is logged by the channel and dropped.
 * @see ziti controller/handler_edge_ctrl/validate_sessions.go; router/state/manager.go ValidateSessions, sessionRemoved.go
 */
import { ValidateSessionsRequestSchema } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { SessionReads } from '../../domain/session/session-reads.ts'
import { MAX_TOKEN_CHARS, MAX_TOKENS } from './handler-api-session-heartbeat.ts'

export interface ValidateSessionsDeps {
  sessions(): Pick<SessionReads, 'serviceSessions'>
  /** Answers the router: SessionRemoved for these ids. */
  removed(ids: string[]): void
  count(result: 'valid' | 'invalid' | 'ignored', n: number): void
}

export function validateSessionsHandler(deps: ValidateSessionsDeps): ControlHandler {
  return (frame) => {
    const { sessionTokens } = decodeBody(ValidateSessionsRequestSchema, frame)
    const reads = deps.sessions()
    let valid = 0
    let ignored = Math.max(0, sessionTokens.length - MAX_TOKENS)
    const invalid = new Set<string>()
    for (const id of sessionTokens.length > MAX_TOKENS ? sessionTokens.slice(0, MAX_TOKENS) : sessionTokens) {
      if (id.length > MAX_TOKEN_CHARS) ignored++
      else if (reads.serviceSessions.has(id)) valid++
      else invalid.add(id)
    }
    if (invalid.size > 0) deps.removed([...invalid])
    deps.count('valid', valid)
    deps.count('invalid', invalid.size)
    deps.count('ignored', ignored)
  }
}
