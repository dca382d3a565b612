// The listener's reading of the request line and the Host header (RFC 9110 §7.2, RFC 9112 §3.2), its guard of event
// listeners (a throw is reported once and ends at most its connection) and its sweep interval.
import { describe, expect, it } from 'bun:test'
import { CONNECTION_LIMIT_DEFAULTS } from '../../../src/http/http-connections.ts'
import { guard, isValidHostHeader, sweepEveryMs, targetPath } from '../../../src/http/http-listener.ts'

describe('isValidHostHeader', () => {
  it('accepts names, IPv4 and bracketed IPv6 addresses, with a port up to 65535', () => {
    for (const host of ['localhost', 'localhost:1280', 'ctrl.example.net:443', '127.0.0.1', '[::1]', '[::1]:1280', 'x:', 'x:65535']) {
      expect({ host, valid: isValidHostHeader(host) }).toEqual({ host, valid: true })
    }
  })

  it('refuses ports out of range, spaces, unbracketed IPv6 and garbage', () => {
    for (const host of ['localhost:99999', 'localhost:65536', 'a b', '::1', 'h:1:2', 'x:-1', 'host/path', '[zz]', 'a@b:1:']) {
      expect({ host, valid: isValidHostHeader(host) }).toEqual({ host, valid: false })
    }
  })
})

describe('targetPath', () => {
  it('keeps an origin-form target and takes path and query of an absolute-form one', () => {
    expect(targetPath('/edge/client/v1/version?x=1')).toBe('/edge/client/v1/version?x=1')
    expect(targetPath('https://elsewhere:9/edge/client/v1/version?x=1')).toBe('/edge/client/v1/version?x=1')
    expect(targetPath('HTTP://h')).toBe('/')
  })

  it('refuses other forms', () => {
    for (const target of ['*', 'host:443', 'ftp://h/p', '', 'https://[bad/p']) expect(targetPath(target)).toBeUndefined()
  })
})

describe('guard', () => {
  it('passes arguments through, and turns a throw into one report and the destruction of the connection', () => {
    const reports: string[] = []
    let destroyed = 0
    const socket = { destroy: () => destroyed++ }
    const seen: number[] = []
    const ok = guard((l) => reports.push(l), 'adding', (a: number, b: number) => void seen.push(a + b), () => socket)
    ok(1, 2)
    expect(seen).toEqual([3])
    const failing = guard((l) => reports.push(l), 'accepting a connection', (_s: typeof socket) => {
      throw new TypeError('null is not an object')
    }, (s) => s)
    expect(() => failing(socket)).not.toThrow()
    expect(reports).toHaveLength(1)
    expect(reports[0]).toStartWith('error: listener: accepting a connection failed: TypeError: null is not an object')
    expect(destroyed).toBe(1)
  })

  it('survives a socket that cannot be destroyed and a thrown value that cannot be shown', () => {
    const reports: string[] = []
    const hostile = { toString: () => { throw new Error('no') } }
    const f = guard((l) => reports.push(l), 'a sweep', () => {
      throw hostile
    }, () => ({ destroy: () => { throw new Error('gone') } }))
    expect(() => f()).not.toThrow()
    expect(reports).toEqual(['error: listener: a sweep failed: a thrown value that cannot be shown'])
  })
})

describe('sweepEveryMs', () => {
  it('sweeps at a quarter of the shortest timeout, between 10 ms and 1 s', () => {
    expect(sweepEveryMs(CONNECTION_LIMIT_DEFAULTS)).toBe(1_000)
    expect(sweepEveryMs({ ...CONNECTION_LIMIT_DEFAULTS, headersTimeoutMs: 2_000 })).toBe(500)
    expect(sweepEveryMs({ ...CONNECTION_LIMIT_DEFAULTS, keepAliveTimeoutMs: 1 })).toBe(10)
  })
})
