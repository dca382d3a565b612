// Ids: random outside a replicated apply; drawn from the command's seed inside one, so every node makes the same.
import { describe, expect, it } from 'bun:test'
import { newCuid, newShortId, newUuid, withSeededIds } from '../../../src/lib/ids.ts'

const draw = () => [newShortId(), newShortId(12), newCuid(1_700_000_000_000), newUuid()]

describe('ids', () => {
  it('makes the same ids, in the same order, for the same seed; other seeds and no seed make others', () => {
    const a = withSeededIds('log/a/1', draw)
    const again = withSeededIds('log/a/1', draw)
    const other = withSeededIds('log/a/2', draw)
    expect(again).toEqual(a)
    expect(other.some((id, i) => id === a[i])).toBe(false)
    expect(draw()).not.toEqual(a)
  })

  it('keeps the shapes: shortids of the alphabet not starting with . or -, cuids, UUIDv4', () => {
    const [short, short12, cuid, uuid] = withSeededIds('s', draw)
    expect(short).toMatch(/^[0-9a-zA-Z][0-9a-zA-Z.-]{9}$/)
    expect(short12).toHaveLength(12)
    expect(cuid).toMatch(/^c[0-9a-z]{24}$/)
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('keeps the outer seed in a nested call and goes back to random ids after it (even when it throws)', () => {
    const nested = withSeededIds('outer', () => [newShortId(), withSeededIds('inner', () => newShortId())])
    const flat = withSeededIds('outer', () => [newShortId(), newShortId()])
    expect(nested).toEqual(flat)
    expect(() => withSeededIds('x', () => { throw new Error('boom') })).toThrow('boom')
    expect(newShortId()).not.toBe(withSeededIds('x', () => newShortId()))
  })
})
