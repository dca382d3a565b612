/**
 * ApiSessionHeartbeat (20203): an edge router names the legacy API-session tokens its SDKs use (every
 * `edge.heartbeatIntervalSeconds`, default 60, at most 10,000 tokens a message). Rules:
 * - a token of a stored session marks that session's activity now (one node-local batch to the session registry:
 *   the activity marks of REST requests, flushed in batches; shared by a coalesced command on a cluster node), which
 *   is what keeps an idle SDK's session from timing out;
 * - the tokens of no session are answered with ApiSessionRemoved naming them, so the router closes those SDKs;
 * - at most MAX_TOKENS tokens of a message are read, and a value longer than MAX_TOKEN_CHARS is no token of ours
 *   (not echoed back); both only counted;
 * - a body that does not decode is logged by the channel and dropped (the router stays connected).
 * @see ziti controller/handler_edge_ctrl/heartbeat.go; router/state/heartbeat.go
 */
import { ApiSessionHeartbeatSchema } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { SessionReads } from '../../domain/session/session-reads.ts'
import { hashToken } from '../../domain/session/session-types.ts'

/** The most tokens read of one message (a real router sends at most 10,000). */
export const MAX_TOKENS = 10_000
/** Legacy tokens are UUIDs (36 characters); anything much longer is not one. */
export const MAX_TOKEN_CHARS = 256

export interface ApiSessionHeartbeatDeps {
  sessions(): Pick<SessionReads, 'byTokenHash'>
  /** Marks the activity of the sessions of these token hashes now. */
  touch(tokenHashes: string[]): void
  /** Answers the router: ApiSessionRemoved for these tokens. */
  removed(tokens: string[]): void
  count(result: 'known' | 'unknown' | 'ignored', n: number): void
}

export function apiSessionHeartbeatHandler(deps: ApiSessionHeartbeatDeps): ControlHandler {
  return (frame) => {
    const { tokens } = decodeBody(ApiSessionHeartbeatSchema, frame)
    const reads = deps.sessions()
    const known: string[] = []
    const unknown = new Set<string>()
    let ignored = Math.max(0, tokens.length - MAX_TOKENS)
    for (const token of tokens.length > MAX_TOKENS ? tokens.slice(0, MAX_TOKENS) : tokens) {
      if (token.length > MAX_TOKEN_CHARS) {
        ignored++
        continue
      }
      const h = hashToken(token)
      if (reads.byTokenHash.has(h)) known.push(h)
      else unknown.add(token)
    }
    if (known.length > 0) deps.touch(known)
    if (unknown.size > 0) deps.removed([...unknown])
    deps.count('known', known.length)
    deps.count('unknown', unknown.size)
    deps.count('ignored', ignored)
  }
}
