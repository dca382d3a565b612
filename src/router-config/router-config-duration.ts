/**
 * Durations with the real router's syntax (Go's time.ParseDuration): `500ms`, `1.5s`, `1h30m`,
 * an optional sign, a bare `0`, and no day unit. Pure; knows nothing about fields.
 */

const NS_PER_UNIT: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign
  'μs': 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
}

/** The largest duration Go can hold: 2^63-1 nanoseconds (about 292 years). */
const MAX_NS = 9_223_372_036_854_775_807

/** A parsed duration in nanoseconds, or why the text is not one. */
export type DurationResult = { ok: true; ns: number } | { ok: false; reason: string }

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9'
}

/** Parses `text` exactly as the router does; the reason of a failure is a sentence for an operator. */
export function parseDuration(text: string): DurationResult {
  const shown = JSON.stringify(text)
  let s = text
  let sign = 1
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1
    s = s.slice(1)
  }
  if (s === '0') return { ok: true, ns: 0 }
  if (s === '') return { ok: false, reason: `${shown} is not a duration; write one such as 500ms, 30s or 1h30m` }
  let total = 0
  let i = 0
  while (i < s.length) {
    const start = i
    while (i < s.length && isDigit(s[i])) i++
    const whole = s.slice(start, i)
    let fraction = ''
    if (s[i] === '.') {
      i++
      const fracStart = i
      while (i < s.length && isDigit(s[i])) i++
      fraction = s.slice(fracStart, i)
    }
    if (whole === '' && fraction === '') {
      return { ok: false, reason: `${shown} is not a duration; write one such as 500ms, 30s or 1h30m` }
    }
    const unitStart = i
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++
    const unit = s.slice(unitStart, i)
    if (unit === '') {
      return { ok: false, reason: `${shown} has no unit; write for example ${whole || '0'}${fraction ? '.' + fraction : ''}s (units: ns, us, ms, s, m, h)` }
    }
    const perUnit = NS_PER_UNIT[unit]
    if (perUnit === undefined) {
      const hint = unit === 'd' ? '; there is no day unit, write 24h for a day' : ' (units: ns, us, ms, s, m, h)'
      return { ok: false, reason: `unknown unit ${JSON.stringify(unit)} in ${shown}${hint}` }
    }
    total += Number(`${whole || '0'}.${fraction || '0'}`) * perUnit
    if (total > MAX_NS) return { ok: false, reason: `${shown} is longer than the longest duration the router can hold (about 292 years)` }
  }
  return { ok: true, ns: sign * Math.round(total) }
}

/** Nanoseconds of a duration text known to be valid (throws otherwise: a caller bug). */
export function durationNs(text: string): number {
  const parsed = parseDuration(text)
  if (!parsed.ok) throw new TypeError(`not a duration: ${text}`)
  return parsed.ns
}
