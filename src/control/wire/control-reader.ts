/**
 * Cuts a socket's byte stream into frames. Rules kept here:
 * - A bad magic is known from the first four bytes of a frame, before the rest arrives.
 * - A frame's declared lengths are checked against the caps as soon as its 20-byte prefix is in, before its bytes
 *   are allocated or waited for; past the caps the reader fails and reads nothing more.
 * - What is held at any time is at most one frame's prefix, body and headers within the caps, plus what arrived in
 *   the same chunk after it (a socket chunk is at most 64 KiB).
 * - The first frame is read with `firstCaps` (the hello's), later ones with `caps`.
 */
import { decodeHeaders, decodePrefix, FRAME_PREFIX_BYTES, FrameError, hasFrameMagic, type Frame, type FrameCaps } from './control-frame.ts'

export class FrameReader {
  private readonly chunks: Uint8Array[] = []
  private buffered = 0
  private pending: { contentType: number; sequence: number; headerBytes: number; bodyBytes: number } | undefined
  private failed: FrameError | undefined
  private framesRead = 0

  constructor(
    private readonly caps: Readonly<FrameCaps>,
    private readonly firstCaps: Readonly<FrameCaps> = caps,
  ) {}

  /** Bytes held and not yet part of a returned frame. */
  get bufferedBytes(): number {
    return this.buffered
  }

  /** Adds bytes; answers the frames they complete. Throws FrameError (and stays failed) on a frame it refuses. */
  push(chunk: Uint8Array): Frame[] {
    if (this.failed) throw this.failed
    if (chunk.length > 0) {
      this.chunks.push(chunk)
      this.buffered += chunk.length
    }
    const out: Frame[] = []
    try {
      for (;;) {
        if (!this.pending) {
          if (this.buffered >= 4 && !hasFrameMagic(this.peek(4))) throw new FrameError('bad-magic', 'not a channel frame (bad magic)')
          if (this.buffered < FRAME_PREFIX_BYTES) break
          this.pending = decodePrefix(this.take(FRAME_PREFIX_BYTES), this.framesRead === 0 ? this.firstCaps : this.caps)
        }
        const p = this.pending
        if (this.buffered < p.headerBytes + p.bodyBytes) break
        this.pending = undefined
        const data = this.take(p.headerBytes + p.bodyBytes)
        const headers = decodeHeaders(data.subarray(0, p.headerBytes))
        this.framesRead++
        out.push({ contentType: p.contentType, sequence: p.sequence, headers, body: data.subarray(p.headerBytes) })
      }
    } catch (e) {
      this.failed = e instanceof FrameError ? e : new FrameError('bad-headers', String(e))
      this.chunks.length = 0
      this.buffered = 0
      throw this.failed
    }
    return out
  }

  /** The first `n` buffered bytes, not consumed. */
  private peek(n: number): Uint8Array {
    const first = this.chunks[0]
    if (first.length >= n) return first.subarray(0, n)
    return this.copyOut(n, false)
  }

  /** The first `n` buffered bytes, consumed; in a buffer of their own unless one chunk holds them exactly. */
  private take(n: number): Uint8Array {
    const first = this.chunks[0]
    if (n === 0) return new Uint8Array(0)
    if (first.length === n) {
      this.chunks.shift()
      this.buffered -= n
      return first
    }
    return this.copyOut(n, true)
  }

  private copyOut(n: number, consume: boolean): Uint8Array {
    const out = new Uint8Array(n)
    let filled = 0
    let i = 0
    while (filled < n) {
      const c = this.chunks[i]
      const part = Math.min(c.length, n - filled)
      out.set(c.subarray(0, part), filled)
      filled += part
      if (consume) {
        if (part === c.length) this.chunks.shift()
        else {
          this.chunks[0] = c.subarray(part)
        }
      } else i++
    }
    if (consume) this.buffered -= n
    return out
  }
}
