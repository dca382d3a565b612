// The listener's connection table (src/http/http-connections.ts): limits in all and per source address, and the
// deadline of each phase, on times passed in (no clock; a "socket" is a name and its count of bytes read).
import { describe, expect, it } from 'bun:test'
import {
  answered, awaitingBody, bodyIn, bytesIn, CLOSING_LINGER_MS, closing, CONNECTION_LIMIT_DEFAULTS, ConnectionTable, handshaken, Phase, requestIn, sweepEveryMs, writing,
  type ConnectionLimits,
} from '../../../src/http/http-connections.ts'

/** A stand-in socket: a name and the bytes it has read. */
interface FakeSocket {
  name: string
  read: number
}
const sock = (name: string): FakeSocket => ({ name, read: 0 })
const newTable = (limits: ConnectionLimits) => new ConnectionTable<FakeSocket>(limits, (s) => s.read)

const LIMITS: ConnectionLimits = {
  ...CONNECTION_LIMIT_DEFAULTS,
  handshakeTimeoutMs: 100,
  headersTimeoutMs: 200,
  requestTimeoutMs: 500,
  keepAliveTimeoutMs: 1_000,
  maxConnections: 4,
  maxConnectionsPerAddress: 2,
}

describe('ConnectionTable: admission', () => {
  it('refuses a connection past the limit per address, admits other addresses, and admits again after a release', () => {
    const t = newTable(LIMITS)
    const a1 = t.admit(sock('a1'), '10.0.0.1', 0)!
    expect(t.admit(sock('a2'), '10.0.0.1', 0)).toBeDefined()
    expect(t.admit(sock('a3'), '10.0.0.1', 0)).toBeUndefined()
    expect(t.admit(sock('b1'), '10.0.0.2', 0)).toBeDefined()
    expect(t.countOf('10.0.0.1')).toBe(2)
    t.release(a1)
    t.release(a1)
    expect(t.countOf('10.0.0.1')).toBe(1)
    expect(t.admit(sock('a4'), '10.0.0.1', 0)).toBeDefined()
    expect(t.takeRefused()).toBe(1)
    expect(t.takeRefused()).toBe(0)
  })

  it('refuses a connection past the limit in all, whatever its address', () => {
    const t = newTable(LIMITS)
    for (let i = 0; i < 4; i++) expect(t.admit(sock(`c${i}`), `10.0.1.${i}`, 0)).toBeDefined()
    expect(t.admit(sock('c5'), '10.0.1.9', 0)).toBeUndefined()
    expect(t.size).toBe(4)
    expect(t.sockets().map((s) => s.name).sort()).toEqual(['c0', 'c1', 'c2', 'c3'])
  })
})

describe('ConnectionTable: deadlines', () => {
  it('notices, at a sweep, the first bytes of a request on a connection waiting for one', () => {
    const t = newTable(LIMITS)
    const c = t.admit(sock('c'), 'x', 0)!
    handshaken(c, 0, 500)
    c.socket.read = 500
    expect(expiredAt(t, 10)).toEqual([])
    expect(c.phase).toBe(Phase.Waiting)
    c.socket.read = 510
    t.sweep(20)
    // a new connection's first request keeps the clock of its handshake
    expect([c.phase, c.since]).toEqual([Phase.Headers, 0])
    requestIn(c, 30)
    answered(c, 40)
    expect(c.phase).toBe(Phase.Idle)
    // the first sweep of a wait only notes what was read; bytes after it start the next request's clock
    t.sweep(50)
    expect(c.phase).toBe(Phase.Idle)
    c.socket.read = 520
    t.sweep(60)
    expect([c.phase, c.since]).toEqual([Phase.Headers, 60])
    expect(expiredAt(t, 260)).toEqual([])
    expect(expiredAt(t, 261)).toEqual(['c'])
  })

  const expiredAt = (t: ConnectionTable<FakeSocket>, now: number) => t.sweep(now).map((c) => c.socket.name)

  it('bounds the handshake, then a new connection\'s first request from the handshake', () => {
    const t = newTable(LIMITS)
    const c = t.admit(sock('c'), 'x', 0)!
    expect(expiredAt(t, 100)).toEqual([])
    expect(expiredAt(t, 101)).toEqual(['c'])
    handshaken(c, 50, 0)
    expect(c.phase).toBe(Phase.Waiting)
    // its first byte does not restart the clock of the handshake's end
    bytesIn(c, 200)
    expect(c.phase).toBe(Phase.Headers)
    expect(expiredAt(t, 250)).toEqual([])
    expect(expiredAt(t, 251)).toEqual(['c'])
  })

  it('bounds a request\'s body from its first byte, and nothing while it is answered', () => {
    const t = newTable(LIMITS)
    const c = t.admit(sock('c'), 'x', 0)!
    handshaken(c, 0, 0)
    requestIn(c, 1)
    answered(c, 5)
    bytesIn(c, 10)
    requestIn(c, 20)
    expect(c.phase).toBe(Phase.Busy)
    awaitingBody(c)
    expect(c.phase).toBe(Phase.Body)
    expect(expiredAt(t, 510)).toEqual([])
    expect(expiredAt(t, 511)).toEqual(['c'])
    bodyIn(c)
    expect(expiredAt(t, 1_000_000)).toEqual([])
  })

  it('bounds the wait between requests by the keep-alive time, then the next request\'s headers from its first byte', () => {
    const t = newTable(LIMITS)
    const c = t.admit(sock('c'), 'x', 0)!
    handshaken(c, 0, 0)
    requestIn(c, 5)
    answered(c, 100)
    expect(c.phase).toBe(Phase.Idle)
    expect(expiredAt(t, 1_100)).toEqual([])
    expect(expiredAt(t, 1_101)).toEqual(['c'])
    bytesIn(c, 900)
    expect(c.phase).toBe(Phase.Headers)
    expect(expiredAt(t, 1_100)).toEqual([])
    expect(expiredAt(t, 1_101)).toEqual(['c'])
  })

  it('bounds the writing of an answer from its start, then waits for the next request', () => {
    const t = newTable({ ...LIMITS, writeTimeoutMs: 300 })
    const c = t.admit(sock('c'), 'x', 0)!
    handshaken(c, 0, 0)
    requestIn(c, 0)
    expect(expiredAt(t, 1_000_000)).toEqual([])
    writing(c, 1_000)
    expect(c.phase).toBe(Phase.Writing)
    expect(expiredAt(t, 1_300)).toEqual([])
    expect(expiredAt(t, 1_301)).toEqual(['c'])
    answered(c, 1_200)
    expect(c.phase).toBe(Phase.Idle)
  })

  it('keeps a connection busy while any of its pipelined requests is unanswered', () => {
    const t = newTable(LIMITS)
    const c = t.admit(sock('c'), 'x', 0)!
    handshaken(c, 0, 0)
    requestIn(c, 1)
    requestIn(c, 2)
    answered(c, 3)
    expect(c.phase).toBe(Phase.Busy)
    answered(c, 4)
    expect(c.phase).toBe(Phase.Idle)
    answered(c, 5)
    expect(c.inflight).toBe(0)
  })

  it('lets a closing connection linger a moment, whatever it was doing, and no request reopens it', () => {
    const t = newTable(LIMITS)
    const c = t.admit(sock('c'), 'x', 0)!
    handshaken(c, 0, 0)
    requestIn(c, 0)
    closing(c, 10)
    requestIn(c, 20)
    answered(c, 20)
    expect(c.phase).toBe(Phase.Closing)
    const linger = Math.min(CLOSING_LINGER_MS, LIMITS.headersTimeoutMs)
    expect(expiredAt(t, 10 + linger)).toEqual([])
    expect(expiredAt(t, 11 + linger)).toEqual(['c'])
  })
})

describe('sweepEveryMs', () => {
  it('sweeps at a quarter of the shortest timeout, between 10 ms and 1 s', () => {
    expect(sweepEveryMs(CONNECTION_LIMIT_DEFAULTS)).toBe(1_000)
    expect(sweepEveryMs({ ...CONNECTION_LIMIT_DEFAULTS, headersTimeoutMs: 2_000 })).toBe(500)
    expect(sweepEveryMs({ ...CONNECTION_LIMIT_DEFAULTS, keepAliveTimeoutMs: 1 })).toBe(10)
    expect(sweepEveryMs({ ...CONNECTION_LIMIT_DEFAULTS, writeTimeoutMs: 1_200 })).toBe(300)
  })
})
