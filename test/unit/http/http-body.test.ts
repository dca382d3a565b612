// Large bodies rendered into pooled buffers: reused only after release, readable through the Response as well.
import { describe, expect, it } from 'bun:test'
import { POOLED_MIN_BYTES, borrowBytes, bytesResponse, renderedBody } from '../../../src/http/http-body.ts'

describe('borrowBytes', () => {
  it('gives small bodies their own buffer', () => {
    const a = borrowBytes(100)
    a.release()
    const b = borrowBytes(100)
    expect(b.bytes.length).toBe(100)
    expect(b.bytes.buffer).not.toBe(a.bytes.buffer)
  })

  it('reuses a large buffer only after it was given back, and only once per release', () => {
    const size = POOLED_MIN_BYTES * 3
    const a = borrowBytes(size)
    const b = borrowBytes(size)
    expect(b.bytes.buffer).not.toBe(a.bytes.buffer)
    expect(a.bytes.length).toBe(size)
    a.release()
    a.release()
    const c = borrowBytes(size - 10)
    expect(c.bytes.buffer).toBe(a.bytes.buffer)
    expect(c.bytes.length).toBe(size - 10)
    // a second release of `a` did not put the same buffer in twice
    const d = borrowBytes(size)
    expect(d.bytes.buffer).not.toBe(a.bytes.buffer)
    for (const x of [b, c, d]) x.release()
  })
})

describe('bytesResponse', () => {
  it('keeps the bytes beside the Response and still answers them to a reader, without copying them at construction', async () => {
    const body = borrowBytes(POOLED_MIN_BYTES + 5)
    body.bytes.fill(0x61)
    const res = bytesResponse(body, { status: 200, headers: { 'content-type': 'application/json' } })
    expect(renderedBody(res)).toBe(body)
    body.bytes[0] = 0x62 // a later change shows: the stream reads the bytes only when read
    const text = await res.text()
    expect(text.length).toBe(POOLED_MIN_BYTES + 5)
    expect(text.startsWith('baa')).toBe(true)
    expect(renderedBody(new Response('x'))).toBeUndefined()
  })
})
