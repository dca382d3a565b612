/**
 * Terminator fields between the wire (ctrl.proto / edge_ctrl.proto) and the graph's records: precedence numbers,
 * peer data (u32 → bytes on the wire, decimal → base64 in the record), the instance secret (bytes ↔ base64).
 * @see ziti common/pb/edge_ctrl_pb/messages.go GetXtPrecedence; controller/handler_edge_ctrl/common.go updateTerminator
 */
import type { Precedence } from '../../domain/policy/policy-types.ts'

/** Wire precedence (TerminatorPrecedence: 0 Default, 1 Required, 2 Failed) of a record's. */
export function wirePrecedence(p: Precedence): number {
  return p === 'required' ? 1 : p === 'failed' ? 2 : 0
}

/** A create's precedence: Required and Failed as such, any other number Default (as GetXtPrecedence reads it). */
export function precedenceOfCreate(n: number): Precedence {
  return n === 1 ? 'required' : n === 2 ? 'failed' : 'default'
}

/** An update's precedence: one of the three, or undefined for a number that names none (refused). */
export function precedenceOfUpdate(n: number): Precedence | undefined {
  return n === 0 ? 'default' : n === 1 ? 'required' : n === 2 ? 'failed' : undefined
}

/** Peer data as the record keeps it: header id (decimal) → base64. */
export function peerDataRecord(wire: Readonly<Record<number, Uint8Array>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(wire)) out[String(Number(k) >>> 0)] = Buffer.from(v).toString('base64')
  return out
}

/** The instance secret as the record keeps it: base64, or null for none. */
export function secretRecord(bytes: Uint8Array): string | null {
  return bytes.length === 0 ? null : Buffer.from(bytes).toString('base64')
}

/** The bytes of peer data as TERMINATOR_LIMITS counts them: each value's, plus 4 per key. */
export function peerDataBytes(wire: Readonly<Record<number, Uint8Array>>): number {
  let n = 0
  for (const v of Object.values(wire)) n += 4 + v.length
  return n
}
