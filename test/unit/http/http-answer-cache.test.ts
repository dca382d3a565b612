// AnswerCache: an answer is kept once asked a second time under the same stamp, answered again only under an equal
// stamp, within a byte budget and a number of keys (least recently used out first); an answer larger than a quarter
// of the budget is not kept.
import { describe, expect, it } from 'bun:test'
import { AnswerCache } from '../../../src/http/http-answer-cache.ts'

const bytes = (n: number) => new Uint8Array(n).fill(1)

describe('AnswerCache', () => {
  it('answers a kept answer under an equal stamp only, and forgets it after a different one', () => {
    const cache = new AnswerCache(1000)
    const record = { id: 'r' }
    const kept = bytes(10)
    cache.put('k', [1, 2, record, true], kept)
    expect(cache.get('k', [1, 2, record, true])).toBe(kept)
    expect(cache.get('other', [1, 2, record, true])).toBeUndefined()
    // an equal-looking but different record is a change (records are replaced on every change)
    expect(cache.get('k', [1, 2, { id: 'r' }, true])).toBeUndefined()
    expect(cache.get('k', [1, 2, record, true])).toBeUndefined()
    expect(cache.stats()).toEqual({ keys: 0, answers: 0, bytes: 0 })
    cache.put('k', [1], kept)
    expect(cache.get('k', [1, 2])).toBeUndefined()
  })

  it('calls an ask repeated only when the key was asked before under an equal stamp', () => {
    const cache = new AnswerCache(1000)
    expect(cache.repeated('k', [1])).toBe(false)
    expect(cache.get('k', [1])).toBeUndefined()
    expect(cache.repeated('k', [1])).toBe(true)
    expect(cache.repeated('k', [2])).toBe(false)
    expect(cache.repeated('k', [2])).toBe(true)
    cache.put('k', [2], bytes(10))
    expect(cache.repeated('k', [3])).toBe(false)
    expect(cache.get('k', [2])).toBeUndefined()
    expect(cache.stats()).toEqual({ keys: 1, answers: 0, bytes: 0 })
  })

  it('replaces the answer of a key and stays within its budget, dropping the least recently used first', () => {
    const cache = new AnswerCache(1000)
    cache.put('a', [1], bytes(200))
    cache.put('a', [2], bytes(250))
    expect(cache.stats()).toEqual({ keys: 1, answers: 1, bytes: 250 })
    cache.put('b', [1], bytes(250))
    cache.put('c', [1], bytes(250))
    cache.put('d', [1], bytes(250))
    expect(cache.get('a', [2])).toBeDefined() // a is now the most recently used
    cache.put('e', [1], bytes(250))
    expect(cache.stats()).toEqual({ keys: 4, answers: 4, bytes: 1000 })
    expect(cache.get('b', [1])).toBeUndefined()
    for (const k of ['c', 'd', 'e']) expect(cache.get(k, [1])).toBeDefined()
    expect(cache.get('a', [2])).toBeDefined()
  })

  it('notes at most maxKeys keys', () => {
    const cache = new AnswerCache(1000, 3)
    for (const k of ['a', 'b', 'c', 'd']) cache.repeated(k, [1])
    expect(cache.stats().keys).toBe(3)
    expect(cache.repeated('a', [1])).toBe(false)
    expect(cache.repeated('d', [1])).toBe(true)
  })

  it('does not keep an answer larger than a quarter of the budget, and drops the key\'s older one', () => {
    const cache = new AnswerCache(1000)
    cache.put('a', [1], bytes(100))
    cache.put('a', [2], bytes(251))
    expect(cache.stats()).toEqual({ keys: 0, answers: 0, bytes: 0 })
    expect(cache.get('a', [1])).toBeUndefined()
  })
})
