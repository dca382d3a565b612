/**
 * The policy index rebuilt from records and compared with a maintained one: the integrity check's policy check and
 * the property test's oracle. Two indexes holding the same entities and policies dump equal however they got there
 * (`PolicyIndex.dump`), so a difference means the maintained index missed or misapplied a change.
 */
import { PolicyIndex } from './policy-index.ts'
import type { EntityKind, IndexPolicy } from './policy-types.ts'

/** An entity as the index sees it. */
export interface IndexEntity {
  kind: EntityKind
  id: string
  roleAttributes: readonly string[] | null | undefined
}

/** The records the index is built from, by kind (edge routers only: fabric-only routers take part in no policy). */
export interface IndexSources {
  identities: Iterable<{ id: string; roleAttributes: readonly string[] | null }>
  services: Iterable<{ id: string; roleAttributes: readonly string[] | null }>
  edgeRouters: Iterable<{ id: string; roleAttributes: readonly string[] | null }>
  postureChecks: Iterable<{ id: string; roleAttributes: readonly string[] | null }>
  policies: Iterable<IndexPolicy>
}

export function* indexEntitiesOf(s: Omit<IndexSources, 'policies'>): Iterable<IndexEntity> {
  for (const i of s.identities) yield { kind: 'identity', id: i.id, roleAttributes: i.roleAttributes }
  for (const x of s.services) yield { kind: 'service', id: x.id, roleAttributes: x.roleAttributes }
  for (const r of s.edgeRouters) yield { kind: 'router', id: r.id, roleAttributes: r.roleAttributes }
  for (const c of s.postureChecks) yield { kind: 'posture-check', id: c.id, roleAttributes: c.roleAttributes }
}

/**
 * An index holding `entities` and `policies`, loaded in the order given (policies first when asked): a new one, or
 * `into` with them added (a rebuild in slices).
 */
export function buildPolicyIndex(entities: Iterable<IndexEntity>, policies: Iterable<IndexPolicy>, policiesFirst = false, into?: PolicyIndex): PolicyIndex {
  const ix = into ?? new PolicyIndex()
  const loadEntities = () => ix.loadEntities(entities)
  if (!policiesFirst) loadEntities()
  for (const p of policies) ix.putPolicy(p, null)
  if (policiesFirst) loadEntities()
  return ix
}

/**
 * What differs between a maintained index and one rebuilt from the records: one line per part of the dump that
 * differs (entity classes per kind, attributes in use, `@id` references), naming up to `max` differing classes.
 */
export function comparePolicyIndexes(maintained: Pick<PolicyIndex, 'dump'>, rebuilt: Pick<PolicyIndex, 'dump'>, max = 5): string[] {
  return comparePolicyDumps(maintained.dump(), rebuilt.dump(), max)
}

/** `comparePolicyIndexes` over dumps taken earlier (`PolicyIndex.dump`). */
export function comparePolicyDumps(maintained: unknown, rebuilt: unknown, max = 5): string[] {
  const a = maintained as Record<string, unknown>
  const b = rebuilt as Record<string, unknown>
  const out: string[] = []
  for (const part of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const [x, y] = [a[part], b[part]]
    // class lists compare class by class (each class's text once), the rest as a whole
    const classes = Array.isArray(x) && Array.isArray(y) && isClassList(x) && isClassList(y) ? differingClasses(x, y) : undefined
    if (classes ? classes.length === 0 : JSON.stringify(x) === JSON.stringify(y)) continue
    const named = (classes ?? []).slice(0, max)
    out.push(`policy index: ${part} differs from the index rebuilt from the stored records${named.length > 0 ? ` (classes ${named.join(', ')})` : ''}`)
  }
  return out
}

const isClassList = (xs: unknown[]) => xs.every((c) => typeof c === 'object' && c !== null && 'key' in c)

/** Keys of the entity classes that are in one dump and not equal in the other. */
function differingClasses(x: unknown[], y: unknown[]): string[] {
  const keyed = (xs: unknown[]) => new Map(xs.map((c) => [String((c as { key: string }).key), JSON.stringify(c)]))
  const [mx, my] = [keyed(x), keyed(y)]
  return [...new Set([...mx.keys(), ...my.keys()])].filter((k) => mx.get(k) !== my.get(k)).map((k) => JSON.stringify(k))
}
