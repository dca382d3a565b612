// The channel V2 frame byte for byte, with vectors written by hand from router-control-plane.md §2.1 (little-endian;
// magic 03 06 09 0C; content type, sequence, header bytes, body bytes; headers {key, length, value}; body), both
// directions, the hello caps and the bad-magic answer, and the incremental reader's refusals before allocating.
import { describe, expect, it } from 'bun:test'
import {
  decodeFrame,
  encodeFrame,
  encodeFrameHead,
  FRAME_CAPS,
  FrameError,
  HELLO_CAPS,
  unknownVersionAnswer,
  type Frame,
} from '../../../src/control/wire/control-frame.ts'
import { FrameReader } from '../../../src/control/wire/control-reader.ts'

const bytes = (...b: number[]) => Uint8Array.from(b)

/** A hello of router "r1": content type 0, sequence -1, header 4 = "v|r|d|o|a", body "r1". */
const HELLO_VECTOR = bytes(
  0x03, 0x06, 0x09, 0x0c, // magic
  0x00, 0x00, 0x00, 0x00, // content type 0 (hello)
  0xff, 0xff, 0xff, 0xff, // sequence -1
  0x11, 0x00, 0x00, 0x00, // 17 header bytes
  0x02, 0x00, 0x00, 0x00, // 2 body bytes
  0x04, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x76, 0x7c, 0x72, 0x7c, 0x64, 0x7c, 0x6f, 0x7c, 0x61, // header 4: "v|r|d|o|a"
  0x72, 0x31, // "r1"
)

/** A Result reply to sequence 7: type 2, sequence 3, header 1 = 7 (int32), header 2 = true, body "ok". */
const RESULT_VECTOR = bytes(
  0x03, 0x06, 0x09, 0x0c,
  0x02, 0x00, 0x00, 0x00,
  0x03, 0x00, 0x00, 0x00,
  0x15, 0x00, 0x00, 0x00, // 21 header bytes: 12 + 9
  0x02, 0x00, 0x00, 0x00,
  0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
  0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
  0x6f, 0x6b,
)

const text = (s: string) => new TextEncoder().encode(s)

describe('encodeFrameHead', () => {
  it('is encodeFrame without the body: head then body are the same bytes', () => {
    const frame = { contentType: 20500, sequence: 7, headers: new Map([[1026, new Uint8Array([1, 2, 3])]]), body: Uint8Array.from({ length: 70_000 }, (_, i) => i % 251) }
    const head = encodeFrameHead(frame)
    expect(Buffer.concat([head, frame.body]).equals(Buffer.from(encodeFrame(frame)))).toBe(true)
  })
})

describe('encodeFrame and decodeFrame', () => {
  it('writes a hello exactly as the vector says, and reads it back', () => {
    const hello: Frame = { contentType: 0, sequence: -1, headers: new Map([[4, text('v|r|d|o|a')]]), body: text('r1') }
    expect([...encodeFrame(hello)]).toEqual([...HELLO_VECTOR])
    const back = decodeFrame(HELLO_VECTOR)
    expect(back.contentType).toBe(0)
    expect(back.sequence).toBe(-1)
    expect([...back.headers.get(4)!]).toEqual([...text('v|r|d|o|a')])
    expect(new TextDecoder().decode(back.body)).toBe('r1')
  })

  it('writes a reply with two headers in insertion order, and reads it back', () => {
    const result: Frame = { contentType: 2, sequence: 3, headers: new Map([[1, bytes(7, 0, 0, 0)], [2, bytes(1)]]), body: text('ok') }
    expect([...encodeFrame(result)]).toEqual([...RESULT_VECTOR])
    const back = decodeFrame(RESULT_VECTOR)
    expect(back.headers.size).toBe(2)
    expect([...back.headers.get(1)!]).toEqual([7, 0, 0, 0])
  })

  it('reads headers in any order, an empty header value and an empty body', () => {
    const f = decodeFrame(bytes(0x03, 0x06, 0x09, 0x0c, 5, 0, 0, 0, 9, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0))
    expect(f.contentType).toBe(5)
    expect([...f.headers.keys()]).toEqual([9, 1])
    expect(f.headers.get(9)!.length).toBe(0)
    expect(f.body.length).toBe(0)
  })

  it('keeps the last value of a repeated header key, as a Go map does', () => {
    const f = decodeFrame(bytes(0x03, 0x06, 0x09, 0x0c, 1, 0, 0, 0, 1, 0, 0, 0, 18, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0x61, 8, 0, 0, 0, 1, 0, 0, 0, 0x62))
    expect(new TextDecoder().decode(f.headers.get(8))).toBe('b')
  })

  it('refuses a header entry that runs past the header section', () => {
    expect(() => decodeFrame(bytes(0x03, 0x06, 0x09, 0x0c, 1, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 0, 0x61))).toThrow(FrameError)
    expect(() => decodeFrame(bytes(0x03, 0x06, 0x09, 0x0c, 1, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0))).toThrow(FrameError)
  })

  it('answers a bad magic with 03 06 09 0A, a count of 2, then versions 1 and 2', () => {
    expect([...unknownVersionAnswer()]).toEqual([0x03, 0x06, 0x09, 0x0a, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])
  })
})

describe('FrameReader', () => {
  it('cuts frames out of chunks of any size, one byte at a time too', () => {
    const stream = new Uint8Array([...HELLO_VECTOR, ...RESULT_VECTOR])
    const reader = new FrameReader(FRAME_CAPS, HELLO_CAPS)
    const frames: Frame[] = []
    for (const b of stream) frames.push(...reader.push(bytes(b)))
    expect(frames.map((f) => f.contentType)).toEqual([0, 2])
    expect(reader.bufferedBytes).toBe(0)
    const whole = new FrameReader(FRAME_CAPS)
    expect(whole.push(stream).map((f) => f.sequence)).toEqual([-1, 3])
  })

  it('refuses a bad magic from the first four bytes, before the rest comes', () => {
    const reader = new FrameReader(FRAME_CAPS)
    expect(() => reader.push(text('GET '))).toThrow(expect.objectContaining({ reason: 'bad-magic' }))
    // and stays failed
    expect(() => reader.push(HELLO_VECTOR)).toThrow(FrameError)
  })

  it('refuses a hello over 16384 header bytes or 4192 body bytes from its prefix alone', () => {
    const prefix = (h: number, b: number) => {
      const p = new Uint8Array(20)
      const v = new DataView(p.buffer)
      p.set([0x03, 0x06, 0x09, 0x0c])
      v.setInt32(8, -1, true)
      v.setUint32(12, h, true)
      v.setUint32(16, b, true)
      return p
    }
    expect(() => new FrameReader(FRAME_CAPS, HELLO_CAPS).push(prefix(16_385, 0))).toThrow(expect.objectContaining({ reason: 'too-large' }))
    expect(() => new FrameReader(FRAME_CAPS, HELLO_CAPS).push(prefix(0, 4_193))).toThrow(expect.objectContaining({ reason: 'too-large' }))
    // at the caps: waits for the bytes
    const ok = new FrameReader(FRAME_CAPS, HELLO_CAPS)
    expect(ok.push(prefix(16_384, 4_192))).toEqual([])
  })

  it('refuses a later frame declaring 2 GiB (or a negative length) before allocating, holding only what came', () => {
    const reader = new FrameReader(FRAME_CAPS, HELLO_CAPS)
    expect(reader.push(HELLO_VECTOR)).toHaveLength(1)
    const huge = new Uint8Array(20)
    huge.set([0x03, 0x06, 0x09, 0x0c])
    new DataView(huge.buffer).setUint32(16, 0x7fffffff, true)
    const before = process.memoryUsage().rss
    expect(() => reader.push(huge)).toThrow(expect.objectContaining({ reason: 'too-large' }))
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024)
    expect(reader.bufferedBytes).toBe(0)
    const negative = new Uint8Array(20)
    negative.set([0x03, 0x06, 0x09, 0x0c])
    new DataView(negative.buffer).setInt32(12, -1, true)
    expect(() => new FrameReader(FRAME_CAPS).push(negative)).toThrow(expect.objectContaining({ reason: 'too-large' }))
  })
})
