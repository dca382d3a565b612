// AnswerCache: kept answers are answered again only under an equal stamp, within a byte budget (least recently used
// out first); an answer larger than a quarter of the budget is not kept.
import { describe, expect, it } from 'bun:test'
import { AnswerCache } from '../../../src/http/http-answer-cache.ts'

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill)

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
    expect(cache.stats()).toEqual({ answers: 0, bytes: 0 })
    cache.put('k', [1], kept)
    expect(cache.get('k', [1, 2])).toBeUndefined()
  })

  it('replaces the answer of a key and stays within its budget, dropping the least recently used first', () => {
    const cache = new AnswerCache(1000)
    cache.put('a', [1], bytes(200))
    cache.put('a', [2], bytes(250))
    expect(cache.stats()).toEqual({ answers: 1, bytes: 250 })
    cache.put('b', [1], bytes(250))
    cache.put('c', [1], bytes(250))
    cache.put('d', [1], bytes(250))
    expect(cache.get('a', [2])).toBeDefined() // a is now the most recently used
    cache.put('e', [1], bytes(250))
    expect(cache.stats()).toEqual({ answers: 4, bytes: 1000 })
    expect(cache.get('b', [1])).toBeUndefined()
    for (const k of ['c', 'd', 'e']) expect(cache.get(k, [1])).toBeDefined()
    expect(cache.get('a', [2])).toBeDefined()
  })

  it('does not keep an answer larger than a quarter of the budget, and drops the key\'s older one', () => {
    const cache = new AnswerCache(1000)
    cache.put('a', [1], bytes(100))
    cache.put('a', [2], bytes(251))
    expect(cache.stats()).toEqual({ answers: 0, bytes: 0 })
    expect(cache.get('a', [1])).toBeUndefined()
  })
})
