/**
 * Walks the positioned YAML tree against the router configuration schema: types, required and
 * unknown keys (with suggestions), bounds, constants, value kinds, and defaults for the effective
 * configuration. Interprets only the JSON Schema subset the schema uses, plus its x-* keywords.
 */
import type { FindingList, Severity } from './router-config-findings.ts'
import { VALUE_KINDS } from './router-config-formats.ts'
import { parseDuration } from './router-config-duration.ts'
import { nearest } from './router-config-suggest.ts'
import type { ConfigNode, MapEntry, MapNode, ScalarNode, SeqNode } from './router-config-yaml.ts'

/** The subset of JSON Schema used by schemas/router-config.ts, with its x-* keywords. */
export interface SchemaNode {
  type?: string
  properties?: Record<string, SchemaNode>
  required?: string[]
  additionalProperties?: boolean | SchemaNode
  items?: SchemaNode
  minItems?: number
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  minLength?: number
  const?: unknown
  enum?: unknown[]
  pattern?: string
  anyOf?: SchemaNode[]
  allOf?: SchemaNode[]
  if?: SchemaNode
  then?: SchemaNode
  default?: unknown
  deprecated?: boolean
  /** Name of a value kind in VALUE_KINDS. */
  'x-kind'?: string
  'x-min'?: string
  'x-max'?: string
  'x-positive'?: boolean
  /** Severity of a bound violation when the router only warns or clamps. */
  'x-severity'?: Severity
  /** Why a bad value matters, appended to value errors. */
  'x-why'?: string
  /** Why a missing required field matters, appended to the missing-field error. */
  'x-missing'?: string
  /** The key is accepted but the router does not read it. */
  'x-ignored'?: string
  /** The key is read but deprecated. */
  'x-deprecated'?: string
  /** An empty (null) value is treated as absent, with this warning. */
  'x-null'?: string
  /** Unit of an integer time field, for hints. */
  'x-unit'?: string
}

type Plain = Record<string, unknown>

const quote = (s: string): string => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}...` : s)

function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`
}

function lastKey(path: string): string {
  const dot = path.lastIndexOf('.')
  return dot < 0 ? path : path.slice(dot + 1)
}

/** A short description of a node for "got ..." in messages. */
export function describeNode(node: ConfigNode): string {
  if (node.kind === 'map') return 'a mapping'
  if (node.kind === 'seq') return 'a list'
  const written = node.source !== undefined && node.source !== String(node.value) ? ` (written ${node.source})` : ''
  switch (node.type) {
    case 'string':
      return `the string ${quote(String(node.value))}`
    case 'integer':
      return `the integer ${node.value}`
    case 'float':
      return `the number ${node.source ?? node.value}`
    case 'boolean':
      return `the boolean ${node.value}${written}`
    case 'null':
      return 'an empty value'
    case 'binary':
      return 'binary data'
  }
}

function describeExpected(s: SchemaNode): string {
  if (s.const !== undefined) return typeof s.const === 'number' ? `the integer ${s.const}` : JSON.stringify(s.const)
  if (s['x-kind']) return VALUE_KINDS[s['x-kind']]?.expected ?? 'a string'
  if (s.anyOf) return s.anyOf.map(describeExpected).join(' or ')
  switch (s.type) {
    case 'object':
      return 'a mapping'
    case 'array':
      return 'a list'
    case 'string':
      return 'a string'
    case 'integer':
      return s['x-unit'] === 'ms' ? 'an integer number of milliseconds' : 'an integer'
    case 'number':
      return 'a number'
    case 'boolean':
      return 'true or false'
    case 'null':
      return 'an empty value'
    default:
      return 'a value'
  }
}

function typeMatches(type: string | undefined, node: ConfigNode): boolean {
  if (type === undefined) return true
  if (node.kind === 'map') return type === 'object'
  if (node.kind === 'seq') return type === 'array'
  switch (type) {
    case 'string':
      return node.type === 'string'
    case 'integer':
      return node.type === 'integer'
    case 'number':
      return node.type === 'integer' || node.type === 'float'
    case 'boolean':
      return node.type === 'boolean'
    case 'null':
      return node.type === 'null'
    default:
      return false
  }
}

/** The node as plain data (what the router's map holds). */
export function toPlain(node: ConfigNode): unknown {
  if (node.kind === 'map') {
    const out: Plain = {}
    for (const e of node.entries) out[e.key] = toPlain(e.value)
    return out
  }
  if (node.kind === 'seq') return node.items.map(toPlain)
  return node.value
}

/** The default value of a schema, with nested object defaults filled in; `undefined` when none. */
export function defaultsOf(s: SchemaNode): unknown {
  if (s.default === undefined) return undefined
  if (s.type !== 'object' || typeof s.default !== 'object' || s.default === null || Array.isArray(s.default)) return structuredClone(s.default)
  const out: Plain = structuredClone(s.default as Plain)
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    if (key in out) continue
    const d = defaultsOf(prop)
    if (d !== undefined) out[key] = d
  }
  return out
}

function isPlainObject(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function mergeInto(target: Plain, source: Plain): void {
  for (const [k, v] of Object.entries(source)) {
    if (isPlainObject(target[k]) && isPlainObject(v)) mergeInto(target[k] as Plain, v)
    else target[k] = v
  }
}

function findEntry(node: MapNode, key: string): MapEntry | undefined {
  return node.entries.find((e) => e.key === key)
}

/** Whether a map satisfies an `if` of the form {properties: {k: {enum|const}}, required}. */
function matchesIf(cond: SchemaNode, node: MapNode): boolean {
  for (const key of cond.required ?? []) if (!findEntry(node, key)) return false
  for (const [key, prop] of Object.entries(cond.properties ?? {})) {
    const entry = findEntry(node, key)
    if (!entry) continue
    const value = entry.value.kind === 'scalar' ? entry.value.value : undefined
    if (prop.const !== undefined && value !== prop.const) return false
    if (prop.enum && !prop.enum.includes(value)) return false
  }
  return true
}

/** Hints for a value of the wrong type. */
function typeHint(s: SchemaNode, node: ConfigNode): string {
  if (node.kind !== 'scalar') return ''
  const wantsNumber = s.type === 'integer' || s.type === 'number'
  if (s['x-kind'] === 'duration' && (node.type === 'integer' || node.type === 'float')) {
    return `: a bare number has no unit; write ${node.source ?? node.value}s for seconds or ${node.source ?? node.value}ms for milliseconds`
  }
  if (s.type === 'integer' && node.type === 'float' && Number.isInteger(node.value)) return `; write ${node.value} without a fraction`
  if (wantsNumber && node.type === 'string') {
    const text = String(node.value)
    if (node.original !== undefined) return '; environment substitution always yields a string'
    const duration = parseDuration(text)
    if (s['x-unit'] === 'ms' && duration.ok) return `; this field takes integer milliseconds, e.g. ${Math.round(duration.ns / 1e6)}`
    if (/^[-+]?[0-9.]+$/.test(text.trim())) return '; remove the quotes'
  }
  if (s.type === 'boolean' && node.type === 'string' && /^(true|false)$/i.test(String(node.value))) return '; remove the quotes'
  if (s.type === 'string' && node.plain && (node.type === 'boolean' || node.type === 'integer' || node.type === 'float')) {
    return `; quote it ("${node.source ?? node.value}") if you mean the text`
  }
  return ''
}

/** Checks one tree against one schema; findings go to `findings`, the effective value is returned. */
export class SchemaWalker {
  constructor(private readonly findings: FindingList) {}

  walk(s: SchemaNode, node: ConfigNode, path: string, keyOffset = node.offset): unknown {
    if (s['x-ignored'] !== undefined) {
      this.findings.warning(path, keyOffset, `${lastKey(path)} is ignored: ${s['x-ignored']}`)
      return toPlain(node)
    }
    if (s['x-deprecated']) this.findings.warning(path, keyOffset, s['x-deprecated'])
    if (node.kind === 'scalar' && node.type === 'null' && s['x-null']) {
      this.findings.warning(path, node.offset, s['x-null'])
      return defaultsOf(s)
    }
    if (s.anyOf) return this.walkUnion(s, node, path)
    if (!typeMatches(s.type, node)) {
      this.valueError(s, path, node, `expected ${describeExpected(s)}, got ${describeNode(node)}${typeHint(s, node)}`)
      return toPlain(node)
    }
    if (node.kind === 'map') return this.walkMap(s, node, path, false)
    if (node.kind === 'seq') return this.walkSeq(s, node, path)
    this.checkScalar(s, node, path)
    return node.value
  }

  private valueError(s: SchemaNode, path: string, node: ConfigNode, message: string, severity: Severity = 'error'): void {
    const why = s['x-why'] ? `; ${s['x-why']}` : ''
    const from = node.kind === 'scalar' && node.original !== undefined ? ` (after substitution of ${quote(node.original)})` : ''
    this.findings.add(severity, path, node.offset, `${message}${from}${why}`)
  }

  private walkUnion(s: SchemaNode, node: ConfigNode, path: string): unknown {
    const branches = s.anyOf ?? []
    if (branches.every((b) => b.const !== undefined)) {
      if (node.kind === 'scalar' && branches.some((b) => b.const === node.value && typeMatches(b.type, node))) return node.value
      const values = branches.map((b) => String(b.const))
      const hint = node.kind === 'scalar' && typeof node.value === 'string' ? nearest(node.value, values) : undefined
      const list = values.map((v) => JSON.stringify(v)).join(', ')
      this.valueError(s, path, node, `expected one of ${list}, got ${describeNode(node)}${hint ? `; did you mean "${hint}"?` : ''}`)
      return toPlain(node)
    }
    const match = branches.find((b) => typeMatches(b.type, node))
    if (!match) {
      this.valueError(s, path, node, `expected ${describeExpected(s)}, got ${describeNode(node)}${typeHint(branches[branches.length - 1], node)}`)
      return toPlain(node)
    }
    return this.walk(match, node, path)
  }

  private walkMap(s: SchemaNode, node: MapNode, path: string, onlyDeclared: boolean): Plain {
    const props = s.properties ?? {}
    const out: Plain = {}
    for (const e of node.entries) {
      const prop = props[e.key]
      const childPath = joinPath(path, e.key)
      if (prop) {
        const value = this.walk(prop, e.value, childPath, e.keyOffset)
        if (value !== undefined) out[e.key] = value
      } else if (onlyDeclared) {
        continue
      } else if (s.additionalProperties === false) {
        this.unknownKey(s, e, childPath, path)
        out[e.key] = toPlain(e.value)
      } else if (typeof s.additionalProperties === 'object') {
        out[e.key] = this.walk(s.additionalProperties, e.value, childPath, e.keyOffset)
      } else {
        out[e.key] = toPlain(e.value)
      }
    }
    for (const key of s.required ?? []) {
      if (findEntry(node, key)) continue
      const why = props[key]?.['x-missing'] ? `: ${props[key]['x-missing']}` : ''
      this.findings.error(joinPath(path, key), node.offset, `missing required ${path === '' ? 'section' : 'field'} ${key}${why}`)
    }
    for (const [key, prop] of Object.entries(props)) {
      if (findEntry(node, key)) continue
      const d = defaultsOf(prop)
      if (d !== undefined) out[key] = d
    }
    for (const sub of s.allOf ?? []) {
      if (sub.if && !matchesIf(sub.if, node)) continue
      const part = sub.if ? sub.then : sub
      if (part) mergeInto(out, this.walkMap(part, node, path, true))
    }
    return out
  }

  private unknownKey(s: SchemaNode, entry: MapEntry, childPath: string, parentPath: string): void {
    const known = new Set(Object.keys(s.properties ?? {}))
    for (const sub of s.allOf ?? []) for (const k of Object.keys(sub.then?.properties ?? {})) known.add(k)
    const hint = nearest(entry.key, known)
    const what = parentPath === '' ? 'section' : 'field'
    const suggestion = hint ? `; did you mean ${hint}?` : ''
    this.findings.warning(childPath, entry.keyOffset, `unknown ${what} ${quote(entry.key)}, ignored by the router${suggestion}`)
  }

  private walkSeq(s: SchemaNode, node: SeqNode, path: string): unknown[] {
    if (s.minItems !== undefined && node.items.length < s.minItems) {
      this.valueError(s, path, node, s.minItems === 1 ? 'must not be an empty list' : `must have at least ${s.minItems} entries`)
    }
    if (!s.items) return node.items.map(toPlain)
    const items = s.items
    return node.items.map((item, i) => this.walk(items, item, `${path}[${i}]`))
  }

  private checkScalar(s: SchemaNode, node: ScalarNode, path: string): void {
    const value = node.value
    if (s.const !== undefined && value !== s.const) {
      this.valueError(s, path, node, `expected ${describeExpected(s)}, got ${describeNode(node)}`)
      return
    }
    if (s.enum && !s.enum.includes(value)) {
      this.valueError(s, path, node, `expected one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}, got ${describeNode(node)}`)
      return
    }
    if (typeof value === 'number') this.checkBounds(s, node, path, value)
    if (typeof value === 'string') this.checkString(s, node, path, value)
  }

  private checkBounds(s: SchemaNode, node: ScalarNode, path: string, value: number): void {
    const severity = s['x-severity'] ?? 'error'
    if (!Number.isFinite(value)) {
      this.valueError(s, path, node, `expected a finite number, got ${node.source ?? value}`)
      return
    }
    const { minimum: min, maximum: max, exclusiveMinimum: above } = s
    const low = (min !== undefined && value < min) || (above !== undefined && value <= above)
    const high = max !== undefined && value > max
    if (!low && !high) return
    let rule: string
    if (above !== undefined) rule = max !== undefined ? `greater than ${above} and at most ${max}` : `greater than ${above}`
    else if (min !== undefined && max !== undefined) rule = `between ${min} and ${max}`
    else rule = min !== undefined ? `at least ${min}` : `at most ${max}`
    this.valueError(s, path, node, `must be ${rule}, got ${node.source ?? value}`, severity)
  }

  private checkString(s: SchemaNode, node: ScalarNode, path: string, value: string): void {
    if (s.minLength !== undefined && value.length < s.minLength) {
      this.valueError(s, path, node, 'must not be empty')
      return
    }
    const kind = s['x-kind'] ? VALUE_KINDS[s['x-kind']] : undefined
    if (kind) {
      const problem = kind.check(value, s)
      if (problem) this.valueError(s, path, node, problem.message, problem.severity)
      return
    }
    if (s.pattern && !new RegExp(s.pattern, 'u').test(value)) {
      this.valueError(s, path, node, `${quote(value)} does not match ${s.pattern}`)
    }
  }
}
