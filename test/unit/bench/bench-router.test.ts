// The frame skimmer of bench/bench-router.ts (`bun run bench control`): the frames it cuts from a byte stream are the
// frames encoded, however the stream is split, with the body kept whole when asked for and otherwise only counted
// (its first bytes kept); a change set's index is read from those first bytes as the full decode reads it.
import { describe, expect, it } from 'bun:test'
import { create, toBinary } from '@bufbuild/protobuf'
import { changeSetIndexOf, FrameSkimmer, HEAD_BYTES, type SkimmedFrame } from '../../../bench/bench-router.ts'
import { DataState_ChangeSetSchema } from '../../../src/control/pb/edge_ctrl_pb.ts'
import { encodeFrame, type Frame } from '../../../src/control/wire/control-frame.ts'
import { encodeString, encodeU64 } from '../../../src/control/wire/control-headers.ts'

const frames: Frame[] = [
  { contentType: 0, sequence: -1, headers: new Map([[4, encodeString('v0.0.0|x|y|linux|amd64')]]), body: encodeString('router-1') },
  { contentType: 5, sequence: 2, headers: new Map([[5, encodeU64(123n)]]), body: new Uint8Array(0) },
  { contentType: 20500, sequence: 3, headers: new Map(), body: Uint8Array.from({ length: 70_000 }, (_, i) => i % 251) },
  { contentType: 20501, sequence: 4, headers: new Map([[1026, encodeString('sub-1')]]), body: Uint8Array.of(1, 2, 3) },
]
const stream = Uint8Array.from(frames.flatMap((f) => [...encodeFrame(f)]))

function skim(chunkSizes: (i: number) => number, keep: boolean): SkimmedFrame[] {
  const s = new FrameSkimmer(() => keep)
  const out: SkimmedFrame[] = []
  for (let at = 0, i = 0; at < stream.length; i++) {
    const n = Math.max(1, chunkSizes(i))
    out.push(...s.push(stream.subarray(at, at + n)))
    at += n
  }
  return out
}

describe('FrameSkimmer', () => {
  for (const [name, sizes] of [['one chunk', () => stream.length], ['byte by byte', () => 1], ['uneven chunks', (i: number) => [7, 19, 20, 21, 4096, 3][i % 6]]] as const) {
    it(`cuts the frames encoded, bodies kept, from ${name}`, () => {
      const got = skim(sizes, true)
      expect(got.map((f) => [f.contentType, f.sequence, f.bodyBytes])).toEqual(frames.map((f) => [f.contentType, f.sequence, f.body.length]))
      got.forEach((f, i) => {
        expect(f.body).toEqual(frames[i].body)
        expect([...f.headers]).toEqual([...frames[i].headers])
      })
    })
    it(`counts bodies it does not keep and keeps their first bytes, from ${name}`, () => {
      const got = skim(sizes, false)
      got.forEach((f, i) => {
        expect(f.body).toBeUndefined()
        expect(f.bodyBytes).toBe(frames[i].body.length)
        expect(f.head).toEqual(frames[i].body.subarray(0, HEAD_BYTES))
      })
    })
  }

  it('refuses a stream that is not channel frames', () => {
    expect(() => new FrameSkimmer(() => true).push(new TextEncoder().encode('GET /version HTTP/1.1\r\nhost: x\r\n\r\n'))).toThrow()
  })
})

describe('changeSetIndexOf', () => {
  it('reads the index of an encoded change set from its first bytes', () => {
    for (const index of [1n, 127n, 128n, 300n, 2n ** 32n + 5n, 2n ** 63n - 1n]) {
      const body = toBinary(DataState_ChangeSetSchema, create(DataState_ChangeSetSchema, { index, previousIndex: index - 1n, changes: [] }))
      expect(changeSetIndexOf(body.subarray(0, HEAD_BYTES))).toBe(index)
    }
  })
  it('answers undefined for a synthetic change set without an index', () => {
    const body = toBinary(DataState_ChangeSetSchema, create(DataState_ChangeSetSchema, { isSynthetic: true, changes: [] }))
    expect(changeSetIndexOf(body)).toBeUndefined()
  })
})
