/**
 * Operating system versions of OS posture checks: each allowed entry is a semver range as the real controller reads
 * it (blang/semver `ParseRange`): comparators `>`, `>=`, `<`, `<=`, `=`, `==`, `!=` or none (equal) before a version,
 * joined by spaces (all must hold) and `||` (any group). Versions have one to three numeric parts (`10`, `5.4`,
 * `10.0.19041`); missing parts are 0, a pre-release or build suffix is ignored. A reported version is read the same way
 * (`10.0.19041.1` keeps its first three parts).
 */

type Version = readonly [number, number, number]
type Op = '>' | '>=' | '<' | '<=' | '=' | '!='
interface Comparator {
  op: Op
  v: Version
}
/** Groups joined by `||`, each a list of comparators that must all hold. */
export type VersionRange = readonly (readonly Comparator[])[]

const NUMERIC = /^\d{1,9}$/

/** A version of one to three (or, when `lenient`, more) numeric parts; undefined when it is not one. */
export function parseVersion(text: string, lenient = false): Version | undefined {
  const core = text.trim().replace(/^v/i, '').split(/[-+]/, 1)[0]!
  const parts = core.split('.')
  if (parts.length === 0 || (!lenient && parts.length > 3) || !parts.every((p) => NUMERIC.test(p))) return undefined
  const n = parts.slice(0, 3).map(Number)
  return [n[0] ?? 0, n[1] ?? 0, n[2] ?? 0]
}

/** A range, or undefined when `text` is not one. */
export function parseVersionRange(text: string): VersionRange | undefined {
  if (text.trim() === '') return undefined
  const groups: Comparator[][] = []
  for (const group of text.split('||')) {
    const tokens = group.trim().split(/\s+/).filter((t) => t !== '')
    if (tokens.length === 0) return undefined
    const comparators: Comparator[] = []
    for (const token of tokens) {
      const m = /^(>=|<=|==|!=|>|<|=)?(.*)$/.exec(token)!
      const v = parseVersion(m[2]!)
      if (!v) return undefined
      const op = (m[1] === '==' || m[1] === undefined ? '=' : m[1]) as Op
      comparators.push({ op, v })
    }
    groups.push(comparators)
  }
  return groups
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]
}

function holds(c: Comparator, v: Version): boolean {
  const d = compare(v, c.v)
  switch (c.op) {
    case '>':
      return d > 0
    case '>=':
      return d >= 0
    case '<':
      return d < 0
    case '<=':
      return d <= 0
    case '=':
      return d === 0
    case '!=':
      return d !== 0
  }
}

/** True when the reported version satisfies the range. */
export function inVersionRange(range: VersionRange, version: string): boolean {
  const v = parseVersion(version, true)
  if (!v) return false
  return range.some((group) => group.every((c) => holds(c, v)))
}
