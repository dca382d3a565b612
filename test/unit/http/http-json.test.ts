// Bounded JSON bodies: the scan that measures depth and values before JSON.parse is pinned to a plain recursive
// count over random documents, and refuses hostile bodies (deep, wide) without parsing them.
import { describe, expect, it } from 'bun:test'
import { MAX_BODY_DEPTH, MAX_BODY_VALUES, measureJson, parseJsonBody } from '../../../src/http/http-json.ts'
import { ApiError } from '../../../src/errors/api-error.ts'
import { rng } from '../../support/rng.ts'

/** The reference: depth and value count of a parsed document, recursively (documents here are shallow). */
function reference(v: unknown, level = 1): { depth: number; values: number } {
  if (typeof v !== 'object' || v === null) return { depth: 0, values: 1 }
  const children = Array.isArray(v) ? v : Object.values(v)
  let depth = level
  let values = 1
  for (const c of children) {
    const r = reference(c, level + 1)
    depth = Math.max(depth, r.depth)
    values += r.values
  }
  return { depth, values }
}

/** Strings whose JSON form holds brackets, separators, escaped quotes and escaped backslashes. */
const TRICKY_STRINGS = ['', 'a', '[', ']', '{"x":[1,2]}', 'quote " inside', 'back\\', 'a,b:c', 'üñí €', '\\"', '\\\\"', '\n\t']

function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 5 ? 5 : 8))
  switch (pick) {
    case 0: return null
    case 1: return next() < 0.5
    case 2: return Math.round((next() - 0.5) * 1e6) / 100
    case 3: return -1.5e-7
    case 4: return TRICKY_STRINGS[Math.floor(next() * TRICKY_STRINGS.length)]
    case 5:
    case 6: return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1))
    default: {
      const o: Record<string, unknown> = {}
      for (let i = Math.floor(next() * 4); i > 0; i--) o[TRICKY_STRINGS[Math.floor(next() * TRICKY_STRINGS.length)] + i] = randomValue(next, depth + 1)
      return o
    }
  }
}

describe('measureJson', () => {
  it('counts depth and values exactly as a recursive walk does, over 2,000 random documents', () => {
    const next = rng(9)
    for (let i = 0; i < 2000; i++) {
      const doc = randomValue(next, 0)
      const text = JSON.stringify(doc, null, i % 3 === 0 ? 2 : undefined)
      const m = measureJson(text)
      expect({ text, depth: m.depth, values: m.values }).toEqual({ text, ...reference(doc) })
    }
  })

  it('stops at the first level past the depth limit, in one pass', () => {
    const text = '['.repeat(100_000) + ']'.repeat(100_000)
    const m = measureJson(text)
    expect(m.over).toBe('depth')
    expect(m.depth).toBe(MAX_BODY_DEPTH + 1)
  })

  it('stops past the value limit', () => {
    const m = measureJson(`[${'1,'.repeat(MAX_BODY_VALUES + 5)}1]`)
    expect(m.over).toBe('values')
  })

  it('does not count keys, nor brackets inside strings', () => {
    expect(measureJson('{"a[[[":"]]]","b":{"c":"{"}}')).toEqual({ depth: 2, values: 4 })
  })
})

describe('parseJsonBody', () => {
  const codeOf = (text: string) => {
    try {
      parseJsonBody(text)
      return 'parsed'
    } catch (e) {
      return (e as ApiError).code
    }
  }

  it('parses a body at the depth limit and refuses one level more with COULD_NOT_PARSE_BODY', () => {
    expect(codeOf('['.repeat(MAX_BODY_DEPTH) + ']'.repeat(MAX_BODY_DEPTH))).toBe('parsed')
    expect(codeOf('['.repeat(MAX_BODY_DEPTH + 1) + ']'.repeat(MAX_BODY_DEPTH + 1))).toBe('COULD_NOT_PARSE_BODY')
    expect(codeOf('{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000))).toBe('COULD_NOT_PARSE_BODY')
  })

  it('refuses malformed JSON, unbalanced or unterminated, with COULD_NOT_PARSE_BODY', () => {
    for (const text of ['{', '{"a":1', '[1,]', '"abc', '{"a" 1}', 'nul', '}{', '"\\"']) expect(codeOf(text)).toBe('COULD_NOT_PARSE_BODY')
  })

  it('keeps keys such as __proto__ as own properties, never as a prototype', () => {
    const v = parseJsonBody('{"__proto__":{"polluted":true},"constructor":1}') as Record<string, unknown>
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype)
    expect(Object.hasOwn(v, '__proto__')).toBe(true)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
