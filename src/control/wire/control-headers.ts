/**
 * Typed header values of the control channel, as openziti/channel encodes them (little-endian):
 * bool = 1 byte (true iff the first byte is 1); u16/u32/u64 = 2/4/8 bytes; string = raw UTF-8;
 * string slice = u32 count, then per item u32 length + bytes; u32→bytes map = u32 count, then u32 key, u32 length,
 * bytes; string→string map = u32 count, then u32 length + key, u32 length + value. An empty slice or map is an
 * empty value. Decoders refuse more than 128 entries and strings or entries over 8192 bytes, as the real ones do.
 * Capability masks are big-endian bytes of a big integer without leading zero bytes (Go big.Int.Bytes()).
 * Readers answer undefined for a header that is absent or of the wrong length, and throw HeaderError for a
 * composite value that does not decode.
 * @see router-control-plane.md §2.1, §2.6; openziti/channel message.go
 */
import type { HeaderMap } from './control-frame.ts'

/** The most entries a slice or map header may have. */
export const MAX_HEADER_ENTRIES = 128
/** The longest string or map entry inside a composite header. */
export const MAX_HEADER_ENTRY_BYTES = 8192

export class HeaderError extends Error {}

const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()

export const encodeBool = (v: boolean): Uint8Array => Uint8Array.of(v ? 1 : 0)
export const decodeBool = (b: Uint8Array): boolean => b.length > 0 && b[0] === 1

export function encodeU16(v: number): Uint8Array {
  const out = new Uint8Array(2)
  new DataView(out.buffer).setUint16(0, v, true)
  return out
}
export function encodeU32(v: number): Uint8Array {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, v >>> 0, true)
  return out
}
export function encodeI32(v: number): Uint8Array {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setInt32(0, v, true)
  return out
}
export function encodeU64(v: bigint): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, v), true)
  return out
}
export const encodeString = (s: string): Uint8Array => utf8.encode(s)
export const decodeString = (b: Uint8Array): string => fromUtf8.decode(b)

const viewOf = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.length)

export function readU16(h: HeaderMap, key: number): number | undefined {
  const b = h.get(key)
  return b?.length === 2 ? viewOf(b).getUint16(0, true) : undefined
}
export function readU32(h: HeaderMap, key: number): number | undefined {
  const b = h.get(key)
  return b?.length === 4 ? viewOf(b).getUint32(0, true) : undefined
}
export function readI32(h: HeaderMap, key: number): number | undefined {
  const b = h.get(key)
  return b?.length === 4 ? viewOf(b).getInt32(0, true) : undefined
}
export function readU64(h: HeaderMap, key: number): bigint | undefined {
  const b = h.get(key)
  return b?.length === 8 ? viewOf(b).getBigUint64(0, true) : undefined
}
export function readBool(h: HeaderMap, key: number): boolean | undefined {
  const b = h.get(key)
  return b === undefined ? undefined : decodeBool(b)
}
export function readString(h: HeaderMap, key: number): string | undefined {
  const b = h.get(key)
  return b === undefined ? undefined : decodeString(b)
}

/** Reads length-prefixed pieces of a composite header value, refusing what runs past its end. */
class Cursor {
  private at = 0
  private readonly view: DataView
  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
  ) {
    this.view = viewOf(bytes)
  }
  u32(): number {
    if (this.at + 4 > this.bytes.length) throw new HeaderError(`${this.what}: cut short`)
    const v = this.view.getUint32(this.at, true)
    this.at += 4
    return v
  }
  bytesOf(length: number): Uint8Array {
    if (length > MAX_HEADER_ENTRY_BYTES) throw new HeaderError(`${this.what}: an entry of ${length} bytes (at most ${MAX_HEADER_ENTRY_BYTES})`)
    if (length > this.bytes.length - this.at) throw new HeaderError(`${this.what}: an entry runs past the value`)
    const out = this.bytes.subarray(this.at, this.at + length)
    this.at += length
    return out
  }
  count(): number {
    const n = this.u32()
    if (n > MAX_HEADER_ENTRIES) throw new HeaderError(`${this.what}: ${n} entries (at most ${MAX_HEADER_ENTRIES})`)
    return n
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  let size = 0
  for (const p of parts) size += p.length
  const out = new Uint8Array(size)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

export function encodeStringSlice(items: readonly string[]): Uint8Array {
  if (items.length === 0) return new Uint8Array(0)
  const parts: Uint8Array[] = [encodeU32(items.length)]
  for (const s of items) {
    const b = utf8.encode(s)
    parts.push(encodeU32(b.length), b)
  }
  return concat(parts)
}

export function decodeStringSlice(b: Uint8Array): string[] {
  if (b.length === 0) return []
  const c = new Cursor(b, 'string slice')
  const n = c.count()
  const out: string[] = []
  for (let i = 0; i < n; i++) out.push(decodeString(c.bytesOf(c.u32())))
  return out
}

export function encodeU32ToBytesMap(m: ReadonlyMap<number, Uint8Array>): Uint8Array {
  if (m.size === 0) return new Uint8Array(0)
  const parts: Uint8Array[] = [encodeU32(m.size)]
  for (const [k, v] of m) parts.push(encodeU32(k), encodeU32(v.length), v)
  return concat(parts)
}

export function decodeU32ToBytesMap(b: Uint8Array): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>()
  if (b.length === 0) return out
  const c = new Cursor(b, 'u32→bytes map')
  const n = c.count()
  for (let i = 0; i < n; i++) {
    const key = c.u32()
    out.set(key, c.bytesOf(c.u32()))
  }
  return out
}

export function encodeStringToStringMap(m: ReadonlyMap<string, string>): Uint8Array {
  if (m.size === 0) return new Uint8Array(0)
  const parts: Uint8Array[] = [encodeU32(m.size)]
  for (const [k, v] of m) {
    const kb = utf8.encode(k)
    const vb = utf8.encode(v)
    parts.push(encodeU32(kb.length), kb, encodeU32(vb.length), vb)
  }
  return concat(parts)
}

export function decodeStringToStringMap(b: Uint8Array): Map<string, string> {
  const out = new Map<string, string>()
  if (b.length === 0) return out
  const c = new Cursor(b, 'string→string map')
  const n = c.count()
  for (let i = 0; i < n; i++) {
    const key = decodeString(c.bytesOf(c.u32()))
    out.set(key, decodeString(c.bytesOf(c.u32())))
  }
  return out
}

/** A capability mask with bits `bits` set: big-endian, no leading zero bytes (empty for no bit). */
export function encodeCapabilities(bits: readonly number[]): Uint8Array {
  let v = 0n
  for (const bit of bits) v |= 1n << BigInt(bit)
  const out: number[] = []
  while (v > 0n) {
    out.unshift(Number(v & 0xffn))
    v >>= 8n
  }
  return Uint8Array.from(out)
}

/** The mask of a capability header as a big integer (0 for none). */
export function decodeCapabilities(b: Uint8Array | undefined): bigint {
  let v = 0n
  for (const byte of b ?? []) v = (v << 8n) | BigInt(byte)
  return v
}

export const hasCapability = (mask: bigint, bit: number): boolean => ((mask >> BigInt(bit)) & 1n) === 1n
