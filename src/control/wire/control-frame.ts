/**
 * The frame of the router control channel (openziti/channel "V2"), bytes only: no frame here knows what a router,
 * a hello or a circuit is. All integers are little-endian.
 *
 *   0  magic 03 06 09 0C     4  content type (int32)   8  sequence (int32)
 *   12 header bytes H (int32)  16 body bytes B (int32)  20 headers: {key int32, length int32, value}*   20+H body
 *
 * Rules kept here:
 * - A frame's declared lengths are checked against the caps before a byte of it is allocated (control-reader.ts).
 * - Header keys are unique; on decode a repeated key keeps its last value, as the Go map does.
 * - Header values and the body are views into the frame's bytes, never copies (the reader hands each frame its own
 *   buffer, so nothing else writes there).
 * @see router-control-plane.md §2.1; openziti/channel message.go
 */

/** The magic of a V2 frame. */
export const FRAME_MAGIC = Uint8Array.of(0x03, 0x06, 0x09, 0x0c)
/** The magic a listener answers a bad magic with, followed by the versions it speaks. */
export const UNKNOWN_VERSION_MAGIC = Uint8Array.of(0x03, 0x06, 0x09, 0x0a)
/** Bytes before a frame's headers. */
export const FRAME_PREFIX_BYTES = 20

/** Built-in content types of the channel (channel messages.go). */
export const ChannelContentType = {
  Hello: 0,
  Ping: 1,
  Result: 2,
  Latency: 3,
  LatencyResponse: 4,
  Heartbeat: 5,
  Raw: 6,
} as const

/** Reserved header ids of the channel (0-127; 128 is the reflected header a reply copies from its request). */
export const ChannelHeader = {
  ConnectionId: 0,
  ReplyFor: 1,
  ResultSuccess: 2,
  HelloVersion: 4,
  Heartbeat: 5,
  HeartbeatResponse: 6,
  Type: 7,
  Id: 8,
  IsGrouped: 9,
  GroupSecret: 10,
  IsFirstGroupConnection: 11,
  HelloRejectClass: 13,
  Reflected: 128,
} as const

/** The sequence of a hello and of its answer. */
export const HELLO_SEQUENCE = -1

/** Header id → raw value. */
export type HeaderMap = Map<number, Uint8Array>

/** One frame: content type, sequence, headers, body. */
export interface Frame {
  contentType: number
  sequence: number
  headers: HeaderMap
  body: Uint8Array
}

/** Limits of what a frame may declare; a frame past them is refused before it is read. */
export interface FrameCaps {
  maxHeaderBytes: number
  maxBodyBytes: number
}

/** The hello caps of the real listener (channel readHelloV2): 16384 header bytes, 4192 body bytes. */
export const HELLO_CAPS: Readonly<FrameCaps> = { maxHeaderBytes: 16_384, maxBodyBytes: 4_192 }

/**
 * The caps of later frames. The real channel has none; edgeplane refuses a frame over 64 KiB of headers or 16 MiB of
 * body (the largest messages it expects, a router's full state, are far below).
 */
export const FRAME_CAPS: Readonly<FrameCaps> = { maxHeaderBytes: 64 * 1024, maxBodyBytes: 16 * 1024 * 1024 }

/** Why a frame could not be read. */
export class FrameError extends Error {
  constructor(
    readonly reason: 'bad-magic' | 'too-large' | 'bad-headers',
    message: string,
  ) {
    super(message)
  }
}

/** The bytes of a frame. */
export function encodeFrame(frame: Frame): Uint8Array {
  let headerBytes = 0
  for (const v of frame.headers.values()) headerBytes += 8 + v.length
  const out = new Uint8Array(FRAME_PREFIX_BYTES + headerBytes + frame.body.length)
  const view = new DataView(out.buffer)
  out.set(FRAME_MAGIC, 0)
  view.setInt32(4, frame.contentType, true)
  view.setInt32(8, frame.sequence, true)
  view.setInt32(12, headerBytes, true)
  view.setInt32(16, frame.body.length, true)
  let at = FRAME_PREFIX_BYTES
  for (const [key, value] of frame.headers) {
    view.setInt32(at, key, true)
    view.setInt32(at + 4, value.length, true)
    out.set(value, at + 8)
    at += 8 + value.length
  }
  out.set(frame.body, at)
  return out
}

/**
 * A frame's prefix and headers, without its body: written before the body itself, a large body (a full data model
 * sent to many routers) is handed to each connection as it is, not copied into one buffer per connection. The two
 * together are the bytes of `encodeFrame`.
 */
export function encodeFrameHead(frame: Frame): Uint8Array {
  let headerBytes = 0
  for (const v of frame.headers.values()) headerBytes += 8 + v.length
  const out = new Uint8Array(FRAME_PREFIX_BYTES + headerBytes)
  const view = new DataView(out.buffer)
  out.set(FRAME_MAGIC, 0)
  view.setInt32(4, frame.contentType, true)
  view.setInt32(8, frame.sequence, true)
  view.setInt32(12, headerBytes, true)
  view.setInt32(16, frame.body.length, true)
  let at = FRAME_PREFIX_BYTES
  for (const [key, value] of frame.headers) {
    view.setInt32(at, key, true)
    view.setInt32(at + 4, value.length, true)
    out.set(value, at + 8)
    at += 8 + value.length
  }
  return out
}

/** Whether the first four bytes are the V2 magic. */
export function hasFrameMagic(bytes: Uint8Array): boolean {
  return bytes[0] === 0x03 && bytes[1] === 0x06 && bytes[2] === 0x09 && bytes[3] === 0x0c
}

/** What a frame's 20-byte prefix declares; throws FrameError on a bad magic or lengths past `caps`. */
export function decodePrefix(prefix: Uint8Array, caps: Readonly<FrameCaps>): { contentType: number; sequence: number; headerBytes: number; bodyBytes: number } {
  if (!hasFrameMagic(prefix)) throw new FrameError('bad-magic', 'not a channel frame (bad magic)')
  const view = new DataView(prefix.buffer, prefix.byteOffset, FRAME_PREFIX_BYTES)
  // read unsigned: a negative int32 is a length of 2 GiB or more, past any cap
  const headerBytes = view.getUint32(12, true)
  const bodyBytes = view.getUint32(16, true)
  if (headerBytes > caps.maxHeaderBytes || bodyBytes > caps.maxBodyBytes) {
    throw new FrameError('too-large', `frame declares ${headerBytes} header bytes and ${bodyBytes} body bytes (caps ${caps.maxHeaderBytes}/${caps.maxBodyBytes})`)
  }
  return { contentType: view.getInt32(4, true), sequence: view.getInt32(8, true), headerBytes, bodyBytes }
}

/** The header map of a frame's header section; throws FrameError when an entry runs past the section. */
export function decodeHeaders(section: Uint8Array): HeaderMap {
  const headers: HeaderMap = new Map()
  const view = new DataView(section.buffer, section.byteOffset, section.length)
  let at = 0
  while (at < section.length) {
    if (at + 8 > section.length) throw new FrameError('bad-headers', `a header entry at byte ${at} is cut short`)
    const key = view.getInt32(at, true)
    const length = view.getUint32(at + 4, true)
    if (length > section.length - at - 8) throw new FrameError('bad-headers', `header ${key} declares ${length} bytes past the header section`)
    headers.set(key, section.subarray(at + 8, at + 8 + length))
    at += 8 + length
  }
  return headers
}

/** A whole frame from its bytes (tests and the emulator; a socket is read with control-reader.ts). */
export function decodeFrame(bytes: Uint8Array, caps: Readonly<FrameCaps> = FRAME_CAPS): Frame {
  if (bytes.length < FRAME_PREFIX_BYTES) throw new FrameError('bad-headers', 'a frame is at least 20 bytes')
  const p = decodePrefix(bytes, caps)
  if (bytes.length !== FRAME_PREFIX_BYTES + p.headerBytes + p.bodyBytes) throw new FrameError('bad-headers', 'the frame is not as long as it declares')
  const headers = decodeHeaders(bytes.subarray(FRAME_PREFIX_BYTES, FRAME_PREFIX_BYTES + p.headerBytes))
  return { contentType: p.contentType, sequence: p.sequence, headers, body: bytes.subarray(FRAME_PREFIX_BYTES + p.headerBytes) }
}

/** The answer of a listener to a bad magic: the unknown-version magic, then 2 versions: 1 and 2. */
export function unknownVersionAnswer(): Uint8Array {
  const out = new Uint8Array(16)
  const view = new DataView(out.buffer)
  out.set(UNKNOWN_VERSION_MAGIC, 0)
  view.setUint32(4, 2, true)
  view.setUint32(8, 1, true)
  view.setUint32(12, 2, true)
  return out
}
