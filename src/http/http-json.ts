/**
 * JSON request bodies with a bounded cost: one linear, iterative scan measures nesting depth and the number of values
 * before JSON.parse runs, so a hostile body (20,000 levels deep, a million tiny values) is refused in a pass over its
 * bytes and never reaches schema validation, whose cost grows with depth and size. Nothing here recurses.
 */
import { ApiError } from '../errors/api-error.ts'

/** Deepest nesting of objects and arrays a body may have (the document itself is level 1). */
export const MAX_BODY_DEPTH = 64
/** Most JSON values (objects, arrays, strings, numbers, literals; keys not counted) a body may hold. */
export const MAX_BODY_VALUES = 100_000

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d

/** True for the characters that may continue a number or a literal (`-1.5e+3`, `true`, `null`). */
function isTokenChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x2b || c === 0x2d || c === 0x2e
}

/** The end of the string whose opening quote is at `start` (the index after its closing quote), or -1. */
function skipString(text: string, start: number): number {
  let i = start + 1
  for (;;) {
    const q = text.indexOf('"', i)
    if (q < 0) return -1
    let backslashes = 0
    for (let j = q - 1; j > start && text.charCodeAt(j) === BACKSLASH; j--) backslashes++
    if (backslashes % 2 === 0) return q + 1
    i = q + 1
  }
}

/**
 * Measures a JSON text without building it: the deepest nesting and the number of values, stopping as soon as a limit
 * is passed. Correct for valid JSON; for invalid JSON the figures are approximate, and JSON.parse refuses it next.
 */
export function measureJson(text: string, limits = { depth: MAX_BODY_DEPTH, values: MAX_BODY_VALUES }): { depth: number; values: number; over?: 'depth' | 'values' } {
  // per open container: true for an object (whose strings alternate key, value), false for an array
  const inObject: boolean[] = []
  let expectKey = false
  let maxDepth = 0
  let values = 0
  const n = text.length
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = skipString(text, i)
      if (!expectKey) values++
      if (end < 0) break
      i = end
      continue
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      values++
      inObject.push(c === OPEN_OBJECT)
      if (inObject.length > maxDepth) {
        maxDepth = inObject.length
        if (maxDepth > limits.depth) return { depth: maxDepth, values, over: 'depth' }
      }
      expectKey = c === OPEN_OBJECT
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      inObject.pop()
      expectKey = false
    } else if (c === COMMA) {
      expectKey = inObject[inObject.length - 1] === true
    } else if (c === COLON) {
      expectKey = false
    } else if (isTokenChar(c)) {
      values++
      i++
      while (i < n && isTokenChar(text.charCodeAt(i))) i++
      if (values > limits.values) return { depth: maxDepth, values, over: 'values' }
      continue
    }
    if (values > limits.values) return { depth: maxDepth, values, over: 'values' }
    i++
  }
  return { depth: maxDepth, values }
}

/** Parses a JSON request body within the limits; anything else is 400 COULD_NOT_PARSE_BODY with the reason. */
export function parseJsonBody(text: string): unknown {
  const m = measureJson(text)
  if (m.over === 'depth') {
    throw ApiError.withMessage('COULD_NOT_PARSE_BODY', `parsing body failed: nested deeper than ${MAX_BODY_DEPTH} levels`)
  }
  if (m.over === 'values') {
    throw ApiError.withMessage('COULD_NOT_PARSE_BODY', `parsing body failed: more than ${MAX_BODY_VALUES} values`)
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw ApiError.withMessage('COULD_NOT_PARSE_BODY', `parsing body failed: ${(e as Error).message}`)
  }
}
