// One control channel over a pipe (no socket): sequences from 1, replies matched to waiters, replies without a
// waiter dispatched by content type, ping → Result "ok", heartbeats stamped, answered and checked, unknown content
// types dropped, handler failures contained, backpressure, closing.
// @see router-control-plane.md §2.3, §2.7
import { describe, expect, it } from 'bun:test'
import { ChannelRequestError, ControlChannel, type ChannelTransport, type ControlHandler } from '../../../src/control/channel/control-channel.ts'
import { Heartbeat } from '../../../src/control/channel/control-heartbeat.ts'
import { ChannelContentType, ChannelHeader, decodeFrame, type Frame } from '../../../src/control/wire/control-frame.ts'
import { encodeI32, encodeU64, readBool, readI32 } from '../../../src/control/wire/control-headers.ts'

function pipe(opts: { buffered?: number } = {}) {
  const sent: Frame[] = []
  let closed = 0
  const transport: ChannelTransport = {
    write: (bytes) => void sent.push(decodeFrame(bytes)),
    bufferedBytes: () => opts.buffered ?? 0,
    close: () => void closed++,
  }
  return { sent, transport, closes: () => closed }
}

function channel(handlers: Record<number, ControlHandler> = {}, extra: { now?: () => number; buffered?: number; sendIntervalMs?: number; closeUnresponsiveMs?: number } = {}) {
  const p = pipe({ buffered: extra.buffered })
  const logs: string[] = []
  const ch = new ControlChannel({
    label: 'r1',
    transport: p.transport,
    handlers: new Map(Object.entries(handlers).map(([k, v]) => [Number(k), v])),
    log: (_l, _f, msg) => void logs.push(msg),
    monotonicMs: extra.now ?? (() => 0),
    wallNs: () => 42n,
    maxBufferedBytes: 1_000,
    heartbeat: { sendIntervalMs: extra.sendIntervalMs ?? 10_000, closeUnresponsiveMs: extra.closeUnresponsiveMs ?? 30_000 },
  })
  return { ch, ...p, logs }
}

const frame = (contentType: number, sequence: number, headers: [number, Uint8Array][] = [], body = new Uint8Array(0)): Frame => ({
  contentType,
  sequence,
  headers: new Map(headers),
  body,
})

describe('ControlChannel', () => {
  it('numbers what it sends from 1, replies included, and marks a reply with header 1 and the reflected header', () => {
    const { ch, sent } = channel()
    expect(ch.send({ contentType: 100 })).toBe(1)
    expect(ch.send({ contentType: 100 })).toBe(2)
    ch.reply(frame(200, 77, [[ChannelHeader.Reflected, Uint8Array.of(9)]]), { contentType: 201 })
    expect(sent.map((f) => f.sequence)).toEqual([1, 2, 3])
    expect(readI32(sent[2].headers, ChannelHeader.ReplyFor)).toBe(77)
    expect([...sent[2].headers.get(ChannelHeader.Reflected)!]).toEqual([9])
    expect(sent[0].headers.has(ChannelHeader.ReplyFor)).toBe(false)
  })

  it('gives a reply to the waiter of its request, not to the content type handler', async () => {
    const seen: number[] = []
    const { ch } = channel({ 300: (f) => void seen.push(f.sequence) })
    const pending = ch.request({ contentType: 299 }, 1_000)
    ch.receive(frame(300, 5, [[ChannelHeader.ReplyFor, encodeI32(1)]]))
    expect((await pending).sequence).toBe(5)
    expect(seen).toEqual([])
  })

  it('dispatches a reply nobody waits for by its content type (ClientHello, CreateTerminatorV2Response, RouteResult)', () => {
    const seen: Frame[] = []
    const { ch } = channel({ 20001: (f) => void seen.push(f) })
    ch.receive(frame(20001, 4, [[ChannelHeader.ReplyFor, encodeI32(12)]]))
    expect(seen.map((f) => f.sequence)).toEqual([4])
  })

  it('answers a ping with a successful Result "ok" replying to it', () => {
    const { ch, sent } = channel()
    ch.receive(frame(ChannelContentType.Ping, 9))
    expect(sent).toHaveLength(1)
    expect(sent[0].contentType).toBe(ChannelContentType.Result)
    expect(readI32(sent[0].headers, ChannelHeader.ReplyFor)).toBe(9)
    expect(readBool(sent[0].headers, ChannelHeader.ResultSuccess)).toBe(true)
    expect(new TextDecoder().decode(sent[0].body)).toBe('ok')
  })

  it('drops an unknown content type, logs it once, and keeps the channel open', () => {
    const { ch, sent, logs } = channel()
    ch.receive(frame(12345, 1))
    ch.receive(frame(12345, 2))
    expect(sent).toEqual([])
    expect(ch.isClosed).toBe(false)
    expect(logs.filter((l) => l.includes('no handler'))).toHaveLength(1)
  })

  it('contains a handler that throws or rejects', async () => {
    const { ch, logs } = channel({ 1: () => void 0, 400: () => { throw new Error('boom') }, 401: async () => { throw new Error('late boom') } })
    ch.receive(frame(400, 1))
    ch.receive(frame(401, 2))
    await Bun.sleep(1)
    expect(logs.filter((l) => l.includes('handler failed'))).toHaveLength(2)
    expect(ch.isClosed).toBe(false)
  })

  it('times out a request without a reply, and rejects waiters when it closes', async () => {
    const { ch } = channel()
    await expect(ch.request({ contentType: 1 }, 5)).rejects.toMatchObject({ reason: 'timeout' })
    const waiting = ch.request({ contentType: 1 }, 10_000)
    ch.close('test')
    await expect(waiting).rejects.toBeInstanceOf(ChannelRequestError)
    expect(ch.send({ contentType: 1 })).toBeUndefined()
  })

  it('closes once, telling every close listener the reason, and closes the transport', () => {
    const { ch, closes } = channel()
    const reasons: string[] = []
    ch.onClose((r) => reasons.push(r))
    ch.close('first')
    ch.close('second')
    ch.onClose((r) => reasons.push(`late ${r}`))
    expect(reasons).toEqual(['first', 'late first'])
    expect(closes()).toBe(1)
  })

  it('closes a peer that lets more than maxBufferedBytes pile up', () => {
    const { ch } = channel({}, { buffered: 2_000 })
    ch.send({ contentType: 1 })
    expect(ch.isClosed).toBe(true)
    expect(ch.closeReason).toContain('does not read')
  })

  it('sends one frame larger than maxBufferedBytes to a peer that reads (a full data model), and closes one that did not read it', () => {
    let buffered = 0
    const sent: number[] = []
    const ch = new ControlChannel({
      label: 'r1',
      transport: { write: (bytes) => void (sent.push(bytes.length), (buffered += bytes.length)), bufferedBytes: () => buffered, close: () => {} },
      log: () => {},
      monotonicMs: () => 0,
      wallNs: () => 42n,
      maxBufferedBytes: 1_000,
    })
    const body = new Uint8Array(100_000)
    ch.send({ contentType: 20500, body })
    expect(ch.isClosed).toBe(false)
    // nothing of it was read: the next frame finds more than the limit waiting before it
    ch.send({ contentType: 1 })
    expect(ch.isClosed).toBe(true)
    // the large body went as it is, after its head (not copied into one buffer with it)
    expect(sent).toHaveLength(3)
    expect(sent[1]).toBe(100_000)
  })

  it('answers a heartbeat in header 6 of the next frame out, once', () => {
    const { ch, sent } = channel()
    ch.receive(frame(ChannelContentType.Heartbeat, 3, [[ChannelHeader.Heartbeat, encodeU64(7n)]]))
    ch.send({ contentType: 100 })
    ch.send({ contentType: 100 })
    expect([...sent[0].headers.get(ChannelHeader.HeartbeatResponse)!]).toEqual([...encodeU64(7n)])
    expect(sent[1].headers.has(ChannelHeader.HeartbeatResponse)).toBe(false)
  })

  it('answers a heartbeat with a standalone one within a few ms when nothing else goes out', async () => {
    const { ch, sent } = channel()
    ch.receive(frame(ChannelContentType.Heartbeat, 3, [[ChannelHeader.Heartbeat, encodeU64(8n)]]))
    expect(sent).toHaveLength(0)
    await Bun.sleep(20)
    expect(sent).toHaveLength(1)
    expect(sent[0].contentType).toBe(ChannelContentType.Heartbeat)
    expect([...sent[0].headers.get(ChannelHeader.HeartbeatResponse)!]).toEqual([...encodeU64(8n)])
  })

  it('stamps header 5 when none went out for the send interval, as a standalone heartbeat from tick()', () => {
    let now = 0
    const { ch, sent } = channel({}, { now: () => now, sendIntervalMs: 100 })
    ch.send({ contentType: 100 })
    ch.send({ contentType: 100 })
    expect(sent[0].headers.has(ChannelHeader.Heartbeat)).toBe(true)
    expect([...sent[0].headers.get(ChannelHeader.Heartbeat)!]).toEqual([...encodeU64(42n)])
    expect(sent[1].headers.has(ChannelHeader.Heartbeat)).toBe(false)
    now = 50
    ch.tick()
    expect(sent).toHaveLength(2)
    now = 101
    ch.tick()
    expect(sent).toHaveLength(3)
    expect(sent[2].contentType).toBe(ChannelContentType.Heartbeat)
  })

  it('closes a peer that answers no heartbeat for the timeout, after the first grace of twice the timeout', () => {
    let now = 0
    const { ch } = channel({}, { now: () => now, closeUnresponsiveMs: 1_000 })
    now = 2_999
    ch.tick()
    expect(ch.isClosed).toBe(false)
    ch.receive(frame(ChannelContentType.Heartbeat, 1, [[ChannelHeader.HeartbeatResponse, encodeU64(42n)]]))
    now = 3_900
    ch.tick()
    expect(ch.isClosed).toBe(false)
    now = 4_001
    ch.tick()
    expect(ch.isClosed).toBe(true)
    expect(ch.closeReason).toContain('heartbeat')
  })
})

describe('Heartbeat', () => {
  it('is due after the send interval, and unresponsive only past the grace, then past the timeout from the last answer', () => {
    const h = new Heartbeat({ sendIntervalMs: 10, closeUnresponsiveMs: 30 }, 0)
    expect(h.stampDue(0)).toBe(true)
    h.stamped(0)
    expect(h.stampDue(10)).toBe(false)
    expect(h.stampDue(11)).toBe(true)
    expect(h.unresponsive(90)).toBe(false)
    expect(h.unresponsive(91)).toBe(true)
    h.answered(5)
    expect(h.unresponsive(35)).toBe(false)
    expect(h.unresponsive(36)).toBe(true)
  })
})
