/**
 * The path of a circuit over the routers and links this node knows: the cheapest from the dialer's (ingress) router
 * to the terminator's, as the real controller chooses it. Pure. Rules kept here:
 * - The same router is the path of one node, cost 0.
 * - Dijkstra over the connected routers; a hop onto router r over link l costs l's cost plus max(r's cost, the
 *   least router cost, 10), and a router that forbids traversal is only a path's end, never in between.
 * - Links are usable either way; between two routers the cheapest usable link is taken.
 * @see ziti controller/network/network_path.go shortestPath, CreatePathWithNodes; router-control-plane.md §5.1
 */

/** A connected router as path selection sees it. */
export interface PathRouter {
  readonly id: string
  /** The router's own cost (0-65535). */
  readonly cost: number
  readonly noTraversal: boolean
}

/** A usable link between two connected routers (either way), with what path selection pays for it. */
export interface PathLink {
  readonly id: string
  readonly a: string
  readonly b: string
  readonly cost: number
}

/** The least a router costs a path that crosses it (the real controller's default `minRouterCost`). */
export const MIN_ROUTER_COST = 10

const UNREACHABLE = 2 ** 31

export type PathOutcome = { ok: true; nodes: string[]; links: string[]; cost: number } | { ok: false; reason: string }

export function shortestPath(
  srcId: string,
  dstId: string,
  routers: ReadonlyMap<string, PathRouter>,
  links: readonly PathLink[],
  minRouterCost = MIN_ROUTER_COST,
): PathOutcome {
  if (!routers.has(srcId) || !routers.has(dstId)) return { ok: false, reason: `not routable: router ${routers.has(srcId) ? dstId : srcId} is not connected` }
  if (srcId === dstId) return { ok: true, nodes: [srcId], links: [], cost: 0 }
  // the cheapest link between each pair of routers, either way
  const cheapest = new Map<string, Map<string, PathLink>>()
  for (const l of links) {
    if (!routers.has(l.a) || !routers.has(l.b) || l.a === l.b) continue
    for (const [x, y] of [
      [l.a, l.b],
      [l.b, l.a],
    ] as const) {
      let m = cheapest.get(x)
      if (!m) cheapest.set(x, (m = new Map()))
      const held = m.get(y)
      if (!held || l.cost < held.cost || (l.cost === held.cost && l.id < held.id)) m.set(y, l)
    }
  }
  const dist = new Map<string, number>()
  const prev = new Map<string, string>()
  const unvisited = new Set<string>(routers.keys())
  for (const id of unvisited) dist.set(id, UNREACHABLE)
  dist.set(srcId, 0)
  while (unvisited.size > 0) {
    let u: string | undefined
    let best = Infinity
    for (const id of unvisited) {
      const d = dist.get(id)!
      if (d < best || (d === best && u !== undefined && id < u)) {
        best = d
        u = id
      }
    }
    if (u === undefined || u === dstId || best >= UNREACHABLE) break
    unvisited.delete(u)
    for (const [v, l] of cheapest.get(u) ?? []) {
      if (!unvisited.has(v)) continue
      const r = routers.get(v)!
      // a router that forbids traversal may only end the path
      if (r.noTraversal && v !== dstId) continue
      const alt = best + l.cost + Math.max(r.cost, minRouterCost)
      if (alt < dist.get(v)!) {
        dist.set(v, alt)
        prev.set(v, u)
      }
    }
  }
  if ((dist.get(dstId) ?? UNREACHABLE) >= UNREACHABLE) return { ok: false, reason: `can't route from ${srcId} -> ${dstId}` }
  const nodes = [dstId]
  for (let p = prev.get(dstId); p !== undefined; p = prev.get(p)) nodes.unshift(p)
  if (nodes[0] !== srcId) return { ok: false, reason: `can't route from ${srcId} -> ${dstId}` }
  const pathLinks: string[] = []
  for (let i = 0; i + 1 < nodes.length; i++) pathLinks.push(cheapest.get(nodes[i]!)!.get(nodes[i + 1]!)!.id)
  return { ok: true, nodes, links: pathLinks, cost: dist.get(dstId)! }
}
