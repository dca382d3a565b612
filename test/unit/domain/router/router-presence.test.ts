// What the REST views read of a router's control channel: version headers, capability names, supportedProtocols from
// a ClientHello (router-control-plane.md §2.6, §4.1; ziti controller/internal/routes/edge_router_router.go).
import { describe, expect, it } from 'bun:test'
import { capabilityNames, formatVersionInfo, parseVersionInfo, supportedProtocolsOf } from '../../../../src/domain/router/router-presence.ts'

describe('router presence', () => {
  it('reads and writes the five |-separated fields of a version header, and refuses another count', () => {
    const v = parseVersionInfo('v2.1.0|abc|2026-08-22|linux|amd64')
    expect(v).toEqual({ version: 'v2.1.0', revision: 'abc', buildDate: '2026-08-22', os: 'linux', arch: 'amd64' })
    expect(formatVersionInfo(v!)).toBe('v2.1.0|abc|2026-08-22|linux|amd64')
    expect(parseVersionInfo('v2.1.0')).toBeUndefined()
    expect(parseVersionInfo('a|b|c|d|e|f')).toBeUndefined()
  })

  it('names the capabilities the REST API knows, by bit, and leaves the others out', () => {
    const v2Router = (0x40n << 56n) | 0x76n
    expect(capabilityNames(v2Router)).toEqual(['MULTICHANNEL', 'CONNECTV2', 'SERVICESUBSCRIPTIONS', 'POSTURECHECKS', 'BINDSUCCESS'])
    expect(capabilityNames(0n)).toEqual([])
    expect(capabilityNames(1n << 3n)).toEqual([])
  })

  it('builds protocol → URL from the listeners\' advertise addresses (last one of a protocol wins), else from the old fields', () => {
    expect(
      supportedProtocolsOf(
        [
          { protocol: 'tls', hostname: 'a', port: 1 },
          { protocol: 'wss', hostname: 'b', port: 2 },
          { protocol: 'tls', hostname: 'c', port: 3 },
        ],
        { hostname: 'x', protocols: ['tls'], protocolPorts: ['9'] },
      ),
    ).toEqual({ tls: 'tls://c:3', wss: 'wss://b:2' })
    expect(supportedProtocolsOf([], { hostname: 'x', protocols: ['tls', 'wss'], protocolPorts: ['9'] })).toEqual({ tls: 'tls://x:9' })
    expect(supportedProtocolsOf([], { hostname: '', protocols: ['tls'], protocolPorts: ['9'] })).toEqual({})
  })

  it('keeps a protocol named __proto__ as a key, never as a prototype', () => {
    const p = supportedProtocolsOf([{ protocol: '__proto__', hostname: 'h', port: 1 }], { hostname: '', protocols: [], protocolPorts: [] })
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype)
    expect(JSON.stringify(p)).toBe('{"__proto__":"__proto__://h:1"}')
  })
})
