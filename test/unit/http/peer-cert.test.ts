// The peer of a request: its client certificate chain is read from the TLS socket only when a handler asks for it,
// and once per connection (keep-alive requests of an mTLS client share it).
import { describe, expect, it } from 'bun:test'
import type { TLSSocket } from 'node:tls'
import { peerOfSocket } from '../../../src/http/peer-cert.ts'

function fakeSocket(chain: Uint8Array[]) {
  let reads = 0
  const certs = chain.map((raw) => ({ raw: Buffer.from(raw) as Buffer, issuerCertificate: undefined as unknown }))
  certs.forEach((c, i) => (c.issuerCertificate = certs[i + 1] ?? c))
  const socket = {
    remoteAddress: '127.0.0.9',
    getPeerCertificate: () => (reads++, certs[0] ?? {}),
  }
  return { socket: socket as unknown as TLSSocket, reads: () => reads }
}

describe('peerOfSocket', () => {
  it('reads nothing from the socket until the chain is asked for', () => {
    const f = fakeSocket([new Uint8Array([1])])
    const peer = peerOfSocket(f.socket)
    expect(peer.remoteAddress).toBe('127.0.0.9')
    expect(f.reads()).toBe(0)
  })

  it('reads the chain once per connection, leaf first, whatever the number of requests', () => {
    const f = fakeSocket([new Uint8Array([1]), new Uint8Array([2]), new Uint8Array([3])])
    const first = peerOfSocket(f.socket)
    expect(first.certChainDer.map((d) => [...d])).toEqual([[1], [2], [3]])
    expect(first.certChainDer).toBe(first.certChainDer)
    expect(peerOfSocket(f.socket).certChainDer).toBe(first.certChainDer)
    expect(f.reads()).toBe(1)
  })

  it('answers an empty chain for a connection without a client certificate', () => {
    const f = fakeSocket([])
    expect(peerOfSocket(f.socket).certChainDer).toEqual([])
  })
})
