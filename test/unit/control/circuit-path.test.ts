// Path selection of circuits: the same router is a path of one, Dijkstra over usable links with router costs (at
// least 10), a no-traversal router only at an end, the cheapest of parallel links, unreachable routers refused.
import { describe, expect, it } from 'bun:test'
import { shortestPath, type PathLink, type PathRouter } from '../../../src/control/circuits/circuit-path.ts'

const routers = (...spec: [string, number?, boolean?][]) => new Map<string, PathRouter>(spec.map(([id, cost = 0, noTraversal = false]) => [id, { id, cost, noTraversal }]))
const link = (id: string, a: string, b: string, cost = 1): PathLink => ({ id, a, b, cost })

describe('shortestPath', () => {
  it('is the router itself, at cost 0, from a router to itself', () => {
    expect(shortestPath('a', 'a', routers(['a']), [])).toEqual({ ok: true, nodes: ['a'], links: [], cost: 0 })
  })

  it('crosses links either way, paying each link and the next router (at least 10)', () => {
    const r = routers(['a'], ['b', 50], ['c'])
    const out = shortestPath('a', 'c', r, [link('ab', 'b', 'a', 5), link('bc', 'b', 'c', 7)])
    expect(out).toEqual({ ok: true, nodes: ['a', 'b', 'c'], links: ['ab', 'bc'], cost: 5 + 50 + 7 + 10 })
  })

  it('takes the cheaper way and the cheapest of parallel links', () => {
    const r = routers(['a'], ['b'], ['c'], ['d'])
    const links = [link('ad', 'a', 'd', 100), link('ab1', 'a', 'b', 9), link('ab2', 'a', 'b', 3), link('bd', 'b', 'd', 3)]
    expect(shortestPath('a', 'd', r, links)).toEqual({ ok: true, nodes: ['a', 'b', 'd'], links: ['ab2', 'bd'], cost: 3 + 10 + 3 + 10 })
  })

  it('never crosses a router that forbids traversal, but ends at one', () => {
    const r = routers(['a'], ['b', 0, true], ['c'])
    expect(shortestPath('a', 'c', r, [link('ab', 'a', 'b'), link('bc', 'b', 'c')]).ok).toBe(false)
    expect(shortestPath('a', 'b', r, [link('ab', 'a', 'b')])).toMatchObject({ ok: true, nodes: ['a', 'b'] })
  })

  it('refuses a destination that is not connected or not reachable', () => {
    expect(shortestPath('a', 'z', routers(['a']), [])).toMatchObject({ ok: false })
    expect(shortestPath('a', 'b', routers(['a'], ['b']), [])).toMatchObject({ ok: false, reason: "can't route from a -> b" })
    // a link to a router that is not connected is not usable
    expect(shortestPath('a', 'b', routers(['a'], ['b']), [link('ax', 'a', 'x'), link('xb', 'x', 'b')]).ok).toBe(false)
  })
})
