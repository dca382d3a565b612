// The guard of the listener's event listeners (src/http/http-guard.ts): a throw is reported once and ends at most the
// connection it was about, whatever was thrown and whatever the socket does.
import { describe, expect, it } from 'bun:test'
import { guard } from '../../../src/http/http-guard.ts'

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
