/**
 * Environment variable substitution as the router performs it after parsing (Go's os.ExpandEnv on
 * every string value, never on keys): `${NAME}`, `$NAME`, one-character special names, unset → "".
 * Reports each unset variable as a warning; does not judge the resulting values.
 */
import type { FindingList } from './router-config-findings.ts'
import type { ConfigNode } from './router-config-yaml.ts'

/** Looks a variable up; `undefined` means unset. */
export type EnvLookup = (name: string) => string | undefined

/** The result of expanding one string. */
export interface Expansion {
  value: string
  /** Names that were referenced but unset, in order of appearance. */
  unset: string[]
}

const SPECIAL = '*#$@!?-0123456789'

function isNameChar(c: string): boolean {
  return c === '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

/**
 * Reads the variable name after a `$` at `s[at]`.
 * Returns the name ('' when none) and how many characters after the `$` it spans.
 */
function readName(s: string, at: number): { name: string; width: number } {
  const c = s[at]
  if (c === '{') {
    if (at + 2 < s.length && SPECIAL.includes(s[at + 1]) && s[at + 2] === '}') return { name: s[at + 1], width: 3 }
    const close = s.indexOf('}', at + 1)
    if (close < 0) return { name: '', width: 1 } // "${" without "}" is dropped
    if (close === at + 1) return { name: '', width: 2 } // "${}" is dropped
    return { name: s.slice(at + 1, close), width: close - at + 1 }
  }
  if (SPECIAL.includes(c)) return { name: c, width: 1 }
  let end = at
  while (end < s.length && isNameChar(s[end])) end++
  return { name: s.slice(at, end), width: end - at }
}

/** Expands `${NAME}` and `$NAME` in `text` with os.Expand's rules, including its quirks. */
export function expandEnv(text: string, lookup: EnvLookup): Expansion {
  if (!text.includes('$')) return { value: text, unset: [] }
  let out = ''
  const unset: string[] = []
  let i = 0
  while (i < text.length) {
    const dollar = text.indexOf('$', i)
    if (dollar < 0 || dollar === text.length - 1) {
      out += text.slice(i)
      break
    }
    out += text.slice(i, dollar)
    const { name, width } = readName(text, dollar + 1)
    if (name !== '') {
      const value = lookup(name)
      if (value === undefined) unset.push(name)
      out += value ?? ''
    } else if (width === 0) {
      out += '$' // a "$" followed by no name stays as it is
    }
    i = dollar + 1 + width
  }
  return { value: out, unset }
}

/** The lookup the router sees: the process environment plus TMP, TEMP and TMPDIR, which it always sets. */
export function routerEnvLookup(env: Record<string, string | undefined>): EnvLookup {
  const tempDir = env.TMPDIR || '/tmp'
  return (name) => (name === 'TMP' || name === 'TEMP' || name === 'TMPDIR' ? tempDir : env[name])
}

function joinKey(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`
}

/** Substitutes every string scalar of the tree in place and warns about each unset variable. */
export function substituteEnv(root: ConfigNode, lookup: EnvLookup, findings: FindingList): void {
  const walk = (node: ConfigNode, path: string): void => {
    if (node.kind === 'map') {
      for (const e of node.entries) walk(e.value, joinKey(path, e.key))
    } else if (node.kind === 'seq') {
      node.items.forEach((item, i) => walk(item, `${path}[${i}]`))
    } else if (node.type === 'string' && typeof node.value === 'string' && node.value.includes('$')) {
      const { value, unset } = expandEnv(node.value, lookup)
      for (const name of new Set(unset)) {
        findings.warning(path, node.offset, `environment variable ${name} is not set; the router substitutes an empty string`)
      }
      if (value !== node.value) {
        node.original = node.value
        node.value = value
      }
    }
  }
  walk(root, '')
}
