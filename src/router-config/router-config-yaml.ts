/**
 * Turns router configuration text into a tree of mappings, lists and typed scalars that keeps the
 * source offset of every node and key. YAML 1.1 scalars as the router's parser reads them; aliases
 * expanded under a budget, merge keys applied, depth bounded. Never throws on any input.
 */
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node as YamlNode, type Scalar } from 'yaml'
import type { FindingList } from './router-config-findings.ts'

/** The YAML type of a scalar after resolution (YAML 1.1: `yes` is a boolean, `3.0` a float). */
export type ScalarType = 'string' | 'integer' | 'float' | 'boolean' | 'null' | 'binary'

/** A mapping with its entries in file order. */
export interface MapNode {
  kind: 'map'
  offset: number
  entries: MapEntry[]
}
/** One key of a mapping; the key offset is where unknown-key findings point. */
export interface MapEntry {
  key: string
  keyOffset: number
  value: ConfigNode
}
/** A list. */
export interface SeqNode {
  kind: 'seq'
  offset: number
  items: ConfigNode[]
}
/** A scalar; `original` holds the text before environment substitution when it changed. */
export interface ScalarNode {
  kind: 'scalar'
  offset: number
  type: ScalarType
  value: string | number | boolean | null
  /** True for an unquoted, untagged scalar (quoting would change its type). */
  plain: boolean
  /** Source text of a plain non-string scalar (`yes`, `0x1F`), for messages. */
  source?: string
  original?: string
}
/** Any node of the tree. */
export type ConfigNode = MapNode | SeqNode | ScalarNode

/** Bounds that keep hostile input cheap. */
export const YAML_LIMITS = { maxDepth: 100, maxAliasNodes: 100_000 } as const

const YAML_OPTIONS = {
  version: '1.1' as const,
  prettyErrors: false,
  // The router's parser (yaml.v2) keeps timestamps and base-60 numbers as strings.
  customTags: (tags: unknown[]) =>
    tags.filter((t) => {
      const tag = t as { tag?: string; format?: string }
      return tag.format !== 'TIME' && !tag.tag?.endsWith(':timestamp')
    }) as never,
}

/** The first document as a tree, and whether it is well-formed enough to check its meaning. */
export interface LoadedYaml {
  root: ConfigNode | undefined
  wellFormed: boolean
}

/** Reports characters YAML does not allow (binary data); returns whether any was found. */
function reportControlCharacters(text: string, findings: FindingList): boolean {
  let first = -1
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const bad = (c < 0x20 && c !== 9 && c !== 10 && c !== 13) || c === 0x7f || (c >= 0x80 && c <= 0x9f && c !== 0x85) || c === 0xfffe || c === 0xffff
    if (bad) {
      if (first < 0) first = i
      count++
    }
  }
  if (first < 0) return false
  const code = text.charCodeAt(first).toString(16).toUpperCase().padStart(4, '0')
  const more = count > 1 ? ` (${count} such characters in the file)` : ''
  findings.error('(yaml)', first, `control character U+${code} is not allowed in a YAML file; is this a binary file?${more}`)
  return true
}

/** The source text of a scalar (exact for plain scalars, which is where it matters). */
function scalarSource(node: Scalar, text: string): string {
  const range = node.range
  return range ? text.slice(range[0], range[1]) : String(node.value)
}

function classify(node: Scalar, text: string): Pick<ScalarNode, 'type' | 'value'> {
  const v = node.value
  if (v === null || v === undefined) return { type: 'null', value: null }
  if (typeof v === 'boolean') return { type: 'boolean', value: v }
  if (typeof v === 'number' || typeof v === 'bigint') {
    const n = Number(v)
    const src = scalarSource(node, text).replace(/_/g, '')
    const intLike = /^[-+]?0[xob]/i.test(src) || !/[.eE]/.test(src)
    return { type: Number.isInteger(n) && intLike ? 'integer' : 'float', value: n }
  }
  if (typeof v === 'string') return { type: 'string', value: v }
  if (v instanceof Uint8Array) return { type: 'binary', value: scalarSource(node, text) }
  return { type: 'string', value: typeof v === 'symbol' ? scalarSource(node, text) : String(v) }
}

function isMergeKey(key: unknown): boolean {
  if (!isScalar(key)) return false
  return typeof key.value === 'symbol' || (key.value === '<<' && key.type === 'PLAIN')
}

/** Converts one document; all state of a conversion lives here so the budget is per file. */
class TreeBuilder {
  private aliasNodes = 0
  private aliasDepth = 0
  private budgetReported = false
  private depthReported = false
  private readonly active = new Set<YamlNode>()

  constructor(
    private readonly doc: Document,
    private readonly text: string,
    private readonly findings: FindingList,
  ) {}

  build(node: YamlNode | null | undefined, depth: number, at: number): ConfigNode {
    const offset = node?.range?.[0] ?? at
    if (!node) return { kind: 'scalar', offset, type: 'null', value: null, plain: true }
    if (depth > YAML_LIMITS.maxDepth) {
      if (!this.depthReported) {
        this.depthReported = true
        this.findings.error('(yaml)', offset, `nesting deeper than ${YAML_LIMITS.maxDepth} levels is not checked`)
      }
      return { kind: 'scalar', offset, type: 'null', value: null, plain: true }
    }
    if (this.aliasDepth > 0 && ++this.aliasNodes > YAML_LIMITS.maxAliasNodes) {
      return { kind: 'scalar', offset, type: 'null', value: null, plain: true }
    }
    if (isAlias(node)) return this.buildAlias(node, depth, offset)
    if (isScalar(node)) {
      const plain = node.type === 'PLAIN' && !node.tag
      const typed = classify(node, this.text)
      const source = plain && typed.type !== 'string' ? scalarSource(node, this.text) : undefined
      return { kind: 'scalar', offset, plain, ...typed, ...(source !== undefined && { source }) }
    }
    if (isSeq(node)) {
      this.active.add(node)
      const items = node.items.map((item) => this.build(item as YamlNode, depth + 1, offset))
      this.active.delete(node)
      return { kind: 'seq', offset, items }
    }
    if (isMap(node)) {
      this.active.add(node)
      const built = this.buildMap(node.items as { key: unknown; value: unknown }[], depth, offset)
      this.active.delete(node)
      return built
    }
    return { kind: 'scalar', offset, type: 'null', value: null, plain: true }
  }

  private buildAlias(node: YamlNode & { source: string; resolve(doc: Document): YamlNode | undefined }, depth: number, offset: number): ConfigNode {
    const target = node.resolve(this.doc)
    if (!target) {
      this.findings.error('(yaml)', offset, `alias *${node.source} refers to no anchor defined before it`)
      return { kind: 'scalar', offset, type: 'null', value: null, plain: true }
    }
    if (this.active.has(target)) {
      this.findings.error('(yaml)', offset, `alias *${node.source} refers to a node that contains it`)
      return { kind: 'scalar', offset, type: 'null', value: null, plain: true }
    }
    this.aliasDepth++
    const built = this.build(target, depth, offset)
    this.aliasDepth--
    if (this.aliasNodes > YAML_LIMITS.maxAliasNodes && !this.budgetReported) {
      this.budgetReported = true
      this.findings.error(
        '(yaml)',
        offset,
        `aliases expand to more than ${YAML_LIMITS.maxAliasNodes} nodes (an alias bomb?); the expansion was cut short`,
      )
    }
    return built
  }

  private buildMap(pairs: { key: unknown; value: unknown }[], depth: number, offset: number): MapNode {
    const entries: MapEntry[] = []
    const seen = new Set<string>()
    const merged: MapEntry[][] = []
    for (const pair of pairs) {
      const keyNode = pair.key as YamlNode | null
      const keyOffset = keyNode?.range?.[0] ?? offset
      if (isMergeKey(keyNode)) {
        merged.push(this.mergeSources(pair.value as YamlNode, depth, keyOffset))
        continue
      }
      const key = this.keyText(keyNode, keyOffset)
      if (key === undefined || seen.has(key)) continue
      seen.add(key)
      entries.push({ key, keyOffset, value: this.build(pair.value as YamlNode, depth + 1, keyOffset) })
    }
    for (const source of merged) {
      for (const entry of source) {
        if (seen.has(entry.key)) continue
        seen.add(entry.key)
        entries.push(entry)
      }
    }
    return { kind: 'map', offset, entries }
  }

  private mergeSources(value: YamlNode | null, depth: number, keyOffset: number): MapEntry[] {
    const built = this.build(value, depth + 1, keyOffset)
    const maps = built.kind === 'seq' ? built.items : [built]
    const out: MapEntry[] = []
    for (const m of maps) {
      if (m.kind === 'map') out.push(...m.entries)
      else this.findings.error('(yaml)', m.offset, 'a merge key (<<) takes a mapping or a list of mappings')
    }
    return out
  }

  private keyText(keyNode: YamlNode | null, offset: number): string | undefined {
    if (keyNode === null || keyNode === undefined) {
      this.findings.error('(yaml)', offset, 'a mapping key is empty')
      return undefined
    }
    if (isScalar(keyNode)) return typeof keyNode.value === 'string' ? keyNode.value : scalarSource(keyNode, this.text)
    if (isAlias(keyNode)) return keyNode.source
    this.findings.error('(yaml)', offset, 'a mapping key must be a plain string, not a mapping or a list')
    return undefined
  }
}

/** Reads the first YAML document of `text`, reporting syntax problems into `findings`. */
export function loadYaml(text: string, findings: FindingList): LoadedYaml {
  const binary = reportControlCharacters(text, findings)
  const docs = parseAllDocuments(text, YAML_OPTIONS)
  const list = Array.isArray(docs) ? docs : []
  let wellFormed = !binary
  list.forEach((doc, i) => {
    for (const e of doc.errors) {
      if (i > 0) {
        findings.warning('(yaml)', e.pos[0], `in a document the router ignores: ${e.message}`)
        continue
      }
      findings.error('(yaml)', e.pos[0], e.message)
      if (e.code !== 'DUPLICATE_KEY') wellFormed = false
    }
    for (const w of doc.warnings) findings.warning('(yaml)', w.pos[0], w.message)
  })
  if (list.length > 1) {
    const extra = list.length - 1
    findings.warning('(yaml)', list[1].range[0], `the router reads only the first YAML document; ${extra} more ${extra === 1 ? 'is' : 'are'} ignored`)
  }
  const first = list[0]
  if (!first || first.contents === null) return { root: undefined, wellFormed }
  const root = new TreeBuilder(first, text, findings).build(first.contents as YamlNode, 0, 0)
  return { root, wellFormed }
}
