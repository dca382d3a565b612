/** Go-style durations ("30m", "1h30m", "500ms", "10s"): the syntax the real controller's config uses. */
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** Parses a duration into milliseconds, or returns undefined when the text is not one. */
export function parseDurationMs(text: string): number | undefined {
  const s = text.trim()
  if (s === '0') return 0
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y
  let total = 0
  let pos = 0
  while (pos < s.length) {
    re.lastIndex = pos
    const m = re.exec(s)
    if (!m) return undefined
    total += Number(m[1]) * UNIT_MS[m[2]]
    pos = re.lastIndex
  }
  return pos === 0 ? undefined : total
}
