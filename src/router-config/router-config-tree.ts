/**
 * Small read-only accessors over the positioned tree, for rules that look at several fields at once.
 * No rules here.
 */
import type { FindingList } from './router-config-findings.ts'
import type { ConfigNode, MapEntry, MapNode } from './router-config-yaml.ts'

/** What every cross-field rule receives. */
export interface RuleContext {
  root: MapNode
  /** The configuration with defaults filled in (values of wrong type kept as written). */
  effective: Record<string, unknown>
  findings: FindingList
}

/** The entry of `key` when `node` is a mapping that has it. */
export function entryOf(node: ConfigNode | undefined, key: string): MapEntry | undefined {
  return node?.kind === 'map' ? node.entries.find((e) => e.key === key) : undefined
}

/** The value of `key` when `node` is a mapping that has it. */
export function childOf(node: ConfigNode | undefined, key: string): ConfigNode | undefined {
  return entryOf(node, key)?.value
}

/** The node as a mapping, if it is one. */
export function asMap(node: ConfigNode | undefined): MapNode | undefined {
  return node?.kind === 'map' ? node : undefined
}

/** The items of a list node, or none. */
export function itemsOf(node: ConfigNode | undefined): ConfigNode[] {
  return node?.kind === 'seq' ? node.items : []
}

/** The string value of a scalar node, if it is a string. */
export function stringOf(node: ConfigNode | undefined): string | undefined {
  return node?.kind === 'scalar' && node.type === 'string' ? String(node.value) : undefined
}

/** The strings of a node that is a string or a list of strings. */
export function stringsOf(node: ConfigNode | undefined): string[] {
  const one = stringOf(node)
  if (one !== undefined) return [one]
  return itemsOf(node).map(stringOf).filter((s): s is string => s !== undefined)
}

/** A plain object read from the effective configuration, or undefined. */
export function objectAt(value: unknown, ...keys: (string | number)[]): Record<string, unknown> | undefined {
  let at: unknown = value
  for (const k of keys) {
    if (typeof at !== 'object' || at === null) return undefined
    at = (at as Record<string | number, unknown>)[k]
  }
  return typeof at === 'object' && at !== null && !Array.isArray(at) ? (at as Record<string, unknown>) : undefined
}
