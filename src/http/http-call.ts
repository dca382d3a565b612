/**
 * The seam between the listener and the app: one request as the listener read it, and the app's answer with the
 * headers every answer carries beside it (so the listener writes them straight out, with no copy into the Response).
 */
import type { PeerInfo } from './peer-cert.ts'

export interface IncomingCall {
  method: string
  /** The listener's own `https://host:port`: the request's URL is this and `target`. */
  origin: string
  /** The request target's path and query (a target in absolute form already reduced to them). */
  target: string
  headers: Headers
  /** The body as read by the listener (bounded); absent for GET and HEAD or when empty. */
  body?: Uint8Array
  peer: PeerInfo
  /** The listener's id of the request: in its error answers, its log line and its writes' change context. */
  requestId: string
}

export interface Answer {
  response: Response
  /** Headers written after the response's own, flat: name, value, name, value, … */
  headers: readonly string[]
}
