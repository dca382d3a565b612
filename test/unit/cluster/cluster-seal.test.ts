// Sealed commands: they open only with the cluster's key and under the log key they were sealed for.
import { describe, expect, it } from 'bun:test'
import { commandSealer } from '../../../src/cluster/cluster-seal.ts'

describe('command sealing', () => {
  const sealer = commandSealer(Buffer.alloc(32, 1))
  const plain = new TextEncoder().encode('{"secret":"JBSWY3DPEHPK3PXP"}')
  it('round-trips, never shows the plain text, and uses a fresh nonce each time', () => {
    const a = sealer.seal(plain, '/p/log/n/1')
    const b = sealer.seal(plain, '/p/log/n/1')
    expect(a).not.toBe(b)
    expect(Buffer.from(a.slice(3), 'base64').toString('latin1')).not.toContain('JBSWY3DPEHPK3PXP')
    expect(new TextDecoder().decode(sealer.open(a, '/p/log/n/1'))).toBe('{"secret":"JBSWY3DPEHPK3PXP"}')
  })
  it('refuses another log key, another cluster key, a changed byte, and values that are not sealed', () => {
    const v = sealer.seal(plain, '/p/log/n/1')
    expect(() => sealer.open(v, '/p/log/n/2')).toThrow()
    expect(() => commandSealer(Buffer.alloc(32, 2)).open(v, '/p/log/n/1')).toThrow()
    const raw = Buffer.from(v.slice(3), 'base64')
    raw[20] ^= 1
    expect(() => sealer.open(`v1:${raw.toString('base64')}`, '/p/log/n/1')).toThrow()
    expect(() => sealer.open('eyJhIjoxfQ==', '/p/log/n/1')).toThrow('not a sealed command')
    expect(() => sealer.open('v1:AAAA', '/p/log/n/1')).toThrow('too short')
  })
})
