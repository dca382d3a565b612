// Durations follow the real router (Go time.ParseDuration): units ns, us/µs/μs, ms, s, m, h; fractions; a sign; bare 0; no d.
import { describe, expect, it } from 'bun:test'
import { parseDuration } from '../../../src/router-config/router-config-duration.ts'

describe('parseDuration', () => {
  const valid: [string, number][] = [
    ['500ms', 500e6],
    ['1h30m', 5400e9],
    ['1.5s', 1.5e9],
    ['.5s', 0.5e9],
    ['1.s', 1e9],
    ['0', 0],
    ['+0', 0],
    ['-5s', -5e9],
    ['10us', 10e3],
    ['10µs', 10e3],
    ['10μs', 10e3],
    ['3ns', 3],
    ['24h', 86400e9],
    ['1h1m1s1ms', 3661.001e9],
  ]
  for (const [text, ns] of valid) {
    it(`reads ${text} as ${ns} ns`, () => {
      expect(parseDuration(text)).toEqual({ ok: true, ns })
    })
  }

  const invalid: [string, RegExp][] = [
    ['30', /has no unit/],
    ['1d', /unknown unit "d".*no day unit/],
    ['5 s', /unknown unit " s"/],
    ['', /not a duration/],
    ['x', /not a duration/],
    ['.s', /not a duration/],
    ['1.5.5s', /has no unit/],
    ['5sec', /unknown unit "sec"/],
    ['-', /not a duration/],
    ['100000000h', /longer than the longest duration/],
  ]
  for (const [text, reason] of invalid) {
    it(`rejects ${JSON.stringify(text)} with a reason`, () => {
      const parsed = parseDuration(text)
      expect(parsed.ok).toBe(false)
      if (!parsed.ok) expect(parsed.reason).toMatch(reason)
    })
  }
})
