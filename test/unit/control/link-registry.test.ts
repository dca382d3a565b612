// The link registry on its own (src/control/links/link-registry.ts): reports, full refreshes, iterations, faults,
// disconnects and deletes, costs and latencies, connections, admin changes, bounds and events, as the real controller's
// link manager keeps links (ziti controller/model/link_manager.go, link_model.go; network/network.go).
import { describe, expect, it } from 'bun:test'
import { INITIAL_LATENCY_NS, LINK_LIMITS, LinkRegistry, type LinkEvent, type ReportedLink } from '../../../src/control/links/link-registry.ts'

const link = (id: string, dst = 'r2', iteration = 1, more: Partial<ReportedLink> = {}): ReportedLink => ({
  id,
  destRouterId: dst,
  linkProtocol: 'tls',
  dialAddress: `tls:127.0.0.1:${dst === 'r2' ? 10002 : 10003}`,
  iteration,
  ...more,
})

function setup(opts: { maxLinksPerRouter?: number } = {}) {
  const warnings: string[] = []
  const links = new LinkRegistry({ now: () => 1_000, warn: (msg) => warnings.push(msg), ...opts })
  const events: LinkEvent[] = []
  links.on((e) => events.push(e))
  for (const r of ['r1', 'r2', 'r3']) links.routerConnected(r)
  events.length = 0
  return { links, events, warnings }
}

const kinds = (events: LinkEvent[]) => events.map((e) => (e.type === 'removed' ? `removed:${e.link.id}:${e.reason}` : `${e.type}:${e.link.id}`))

describe('LinkRegistry reports', () => {
  it('creates a reported link with the reporter as its source, Connected, usable at once, cost 1 + 65 s + 65 s', () => {
    const { links, events } = setup()
    const out = links.report('r1', [link('l1')], false)
    expect(out).toMatchObject({ kept: 0, refused: 0, removed: [] })
    expect(out.added.map((l) => l.id)).toEqual(['l1'])
    const l = links.get('l1')!
    expect(l).toMatchObject({
      id: 'l1', srcRouterId: 'r1', dstRouterId: 'r2', protocol: 'tls', dialAddress: 'tls:127.0.0.1:10002', iteration: 1,
      mode: 'Connected', down: false, staticCost: 1, srcLatencyNs: INITIAL_LATENCY_NS, dstLatencyNs: INITIAL_LATENCY_NS,
      cost: 1 + 65_000 + 65_000, connections: [], createdAt: 1_000,
    })
    expect(links.isUsable('l1')).toBe(true)
    expect(links.usableLinks().map((x) => x.id)).toEqual(['l1'])
    expect(kinds(events)).toEqual(['added:l1'])
  })

  it('keeps a known link whose iteration is equal or greater, and replaces it with a greater one', () => {
    const { links, events } = setup()
    links.report('r1', [link('l1', 'r2', 3)], false)
    links.update('l1', { staticCost: 7 })
    events.length = 0
    expect(links.report('r1', [link('l1', 'r2', 3)], false)).toMatchObject({ kept: 1, added: [] })
    expect(links.report('r1', [link('l1', 'r2', 2)], false)).toMatchObject({ kept: 1, added: [] })
    expect(links.get('l1')!.staticCost).toBe(7)
    expect(events).toEqual([])
    const out = links.report('r1', [link('l1', 'r2', 4)], false)
    expect(out.added.map((l) => l.iteration)).toEqual([4])
    // a new link: what an admin set on the older one is gone, as in the real controller
    expect(links.get('l1')).toMatchObject({ iteration: 4, staticCost: 1 })
    expect(kinds(events)).toEqual(['removed:l1:replaced', 'added:l1'])
  })

  it('removes on a full refresh the reporter\'s links it does not list, and only the reporter\'s', () => {
    const { links, events } = setup()
    links.report('r1', [link('a'), link('b'), link('c', 'r3')], false)
    links.report('r2', [link('x', 'r1')], false)
    events.length = 0
    const out = links.report('r1', [link('b'), link('d', 'r3')], true)
    expect(out.removed.map((l) => l.id).sort()).toEqual(['a', 'c'])
    expect(out.added.map((l) => l.id)).toEqual(['d'])
    expect(out.kept).toBe(1)
    expect([...links.all()].map((l) => l.id).sort()).toEqual(['b', 'd', 'x'])
    expect(kinds(events)).toEqual(['removed:a:refresh', 'removed:c:refresh', 'added:d'])
    // an empty full refresh: none of its links left
    expect(links.report('r1', [], true).removed.map((l) => l.id).sort()).toEqual(['b', 'd'])
    expect([...links.all()].map((l) => l.id)).toEqual(['x'])
  })

  it('refuses another router\'s link id, links to itself, empty or oversized fields, and more than the per-router cap', () => {
    const { links } = setup({ maxLinksPerRouter: 3 })
    links.report('r1', [link('l1')], false)
    // r3 claims r1's link with a greater iteration: not taken over
    expect(links.report('r3', [link('l1', 'r2', 9)], false).refused).toBe(1)
    expect(links.get('l1')).toMatchObject({ srcRouterId: 'r1', iteration: 1 })
    const bad = [
      link('self', 'r1'),
      link('', 'r2'),
      link('nodst', ''),
      link('x'.repeat(LINK_LIMITS.id + 1)),
      link('longdst', 'r'.repeat(LINK_LIMITS.routerId + 1)),
      link('longaddr', 'r2', 1, { dialAddress: 'a'.repeat(LINK_LIMITS.dialAddress + 1) }),
      link('longproto', 'r2', 1, { linkProtocol: 'p'.repeat(LINK_LIMITS.protocol + 1) }),
    ]
    expect(links.report('r1', bad, false)).toMatchObject({ refused: bad.length, added: [] })
    const out = links.report('r1', [link('l2'), link('l3'), link('l4'), link('l5')], false)
    expect(out.added.map((l) => l.id)).toEqual(['l2', 'l3'])
    expect(out.refused).toBe(2)
    // a newer iteration of a link it has is not a new one: the cap does not stop it
    expect(links.report('r1', [link('l2', 'r2', 2)], false).added).toHaveLength(1)
  })

  it('keeps links to routers it does not know, unusable while they are not connected', () => {
    const { links } = setup()
    links.report('r1', [link('l1', 'ghost')], false)
    expect(links.get('l1')).toBeDefined()
    expect(links.isUsable('l1')).toBe(false)
    expect(links.counts()).toEqual({ usable: 0, down: 0, unreachable: 1 })
  })
})

describe('LinkRegistry faults', () => {
  it('drops a faulted link and names its other router, whichever end reported it', () => {
    const { links, events } = setup()
    links.report('r1', [link('l1'), link('l2')], false)
    events.length = 0
    expect(links.fault('r1', 'l1', 1, false)).toMatchObject({ kind: 'removed', wasUsable: true, otherRouterId: 'r2' })
    expect(links.fault('r2', 'l2', 1, true)).toMatchObject({ kind: 'removed', wasUsable: true, otherRouterId: 'r1' })
    expect(kinds(events)).toEqual(['removed:l1:fault', 'removed:l2:duplicate'])
    expect(links.fault('r1', 'l1', 1, false)).toEqual({ kind: 'unknown' })
  })

  it('ignores a fault older than the link, and compares no iteration that is 0', () => {
    const { links } = setup()
    links.report('r1', [link('l1', 'r2', 5)], false)
    expect(links.fault('r1', 'l1', 4, false).kind).toBe('stale')
    expect(links.get('l1')).toBeDefined()
    expect(links.fault('r1', 'l1', 0, false).kind).toBe('removed')
    links.report('r1', [link('l2', 'r2', 0)], false)
    expect(links.fault('r2', 'l2', 3, false).kind).toBe('removed')
    links.report('r1', [link('l3', 'r2', 5)], false)
    expect(links.fault('r2', 'l3', 6, false).kind).toBe('removed')
  })

  it('refuses a fault from a router at neither end', () => {
    const { links } = setup()
    links.report('r1', [link('l1')], false)
    expect(links.fault('r3', 'l1', 1, false).kind).toBe('refused')
    expect(links.get('l1')).toBeDefined()
  })

  it('says a link was not usable when it was down or an end was away', () => {
    const { links } = setup()
    links.report('r1', [link('l1'), link('l2')], false)
    links.update('l1', { down: true })
    expect(links.fault('r1', 'l1', 1, false)).toMatchObject({ kind: 'removed', wasUsable: false })
    links.routerDisconnected('r2')
    expect(links.fault('r1', 'l2', 1, false)).toMatchObject({ kind: 'removed', wasUsable: false })
  })
})

describe('LinkRegistry connections of routers', () => {
  it('drops the links a router dialed when it disconnects, and keeps those it was dialed on, unusable until it is back', () => {
    const { links, events } = setup()
    links.report('r1', [link('out1'), link('out2', 'r3')], false)
    links.report('r2', [link('in1', 'r1')], false)
    events.length = 0
    const gone = links.routerDisconnected('r1')
    expect(gone.map((l) => l.id).sort()).toEqual(['out1', 'out2'])
    expect([...links.all()].map((l) => l.id)).toEqual(['in1'])
    expect(links.isUsable('in1')).toBe(false)
    expect(kinds(events)).toEqual(['removed:out1:router-gone', 'removed:out2:router-gone', 'changed:in1'])
    events.length = 0
    links.routerConnected('r1')
    expect(links.isUsable('in1')).toBe(true)
    expect(kinds(events)).toEqual(['changed:in1'])
    // connected twice: nothing changes
    events.length = 0
    links.routerConnected('r1')
    expect(events).toEqual([])
  })

  it('drops every link at either end of a deleted router', () => {
    const { links } = setup()
    links.report('r1', [link('out1')], false)
    links.report('r2', [link('in1', 'r1'), link('other', 'r3')], false)
    expect(links.routerDeleted('r1').map((l) => l.id).sort()).toEqual(['in1', 'out1'])
    expect([...links.all()].map((l) => l.id)).toEqual(['other'])
    expect(links.linksOf('r1')).toEqual([])
  })

  it('lists the links of a router at either end', () => {
    const { links } = setup()
    links.report('r1', [link('a')], false)
    links.report('r2', [link('b', 'r1'), link('c', 'r3')], false)
    expect(links.linksOf('r1').map((l) => l.id).sort()).toEqual(['a', 'b'])
    expect(links.linksOf('r3').map((l) => l.id)).toEqual(['c'])
  })
})

describe('LinkRegistry costs, latencies and admin changes', () => {
  it('costs the static cost plus both latencies in whole milliseconds, each end from its own router', () => {
    const { links, events } = setup()
    links.report('r1', [link('l1')], false)
    events.length = 0
    expect(links.latencyReported('r1', 'l1', 2_500_000.9)).toBe(true)
    expect(links.get('l1')).toMatchObject({ srcLatencyNs: 2_500_000, cost: 1 + 2 + 65_000 })
    expect(links.latencyReported('r2', 'l1', 999_999)).toBe(true)
    expect(links.get('l1')).toMatchObject({ dstLatencyNs: 999_999, cost: 1 + 2 + 0 })
    links.update('l1', { staticCost: 10 })
    expect(links.get('l1')!.cost).toBe(12)
    expect(kinds(events)).toEqual(['changed:l1', 'changed:l1', 'changed:l1'])
    // the same latency again: nothing changes; another router's, or nonsense: not taken
    events.length = 0
    expect(links.latencyReported('r1', 'l1', 2_500_000)).toBe(true)
    expect(links.latencyReported('r3', 'l1', 1)).toBe(false)
    expect(links.latencyReported('r1', 'l1', Number.NaN)).toBe(false)
    expect(links.latencyReported('r1', 'l1', -5)).toBe(false)
    expect(links.latencyReported('r1', 'nope', 5)).toBe(false)
    expect(events).toEqual([])
  })

  it('takes a link down and up again, out of path selection and back; refuses a static cost that is not an int32', () => {
    const { links, events } = setup()
    links.report('r1', [link('l1')], false)
    events.length = 0
    expect(links.update('l1', { down: true })).toMatchObject({ down: true })
    expect(links.usableLinks()).toEqual([])
    expect(links.counts()).toEqual({ usable: 0, down: 1, unreachable: 0 })
    const e = events[0]
    expect(e?.type === 'changed' && e.previous.down === false && e.link.down === true).toBe(true)
    expect(links.update('l1', { down: false })!.down).toBe(false)
    expect(links.usableLinks()).toHaveLength(1)
    expect(links.update('nope', { down: true })).toBeUndefined()
    expect(() => links.update('l1', { staticCost: 1.5 })).toThrow(TypeError)
    expect(() => links.update('l1', { staticCost: 2 ** 31 })).toThrow(TypeError)
  })

  it('removes a link an admin deletes (an event the links feature turns into LinkFaults)', () => {
    const { links, events } = setup()
    links.report('r1', [link('l1')], false)
    events.length = 0
    expect(links.remove('l1')).toBe(true)
    expect(links.remove('l1')).toBe(false)
    expect(kinds(events)).toEqual(['removed:l1:deleted'])
  })
})

describe('LinkRegistry connections of a link', () => {
  const conns = (n: number, tag = 'c') => Array.from({ length: n }, (_, i) => ({ type: `${tag}${i}`, localAddr: `127.0.0.1:${1000 + i}`, remoteAddr: `127.0.0.1:${2000 + i}` }))

  it('takes the connections of a report, then newer states of the same iteration from either end', () => {
    const { links } = setup()
    links.report('r1', [link('l1', 'r2', 2, { connState: { stateIteration: 1, conns: conns(1) } })], false)
    expect(links.get('l1')!.connections).toEqual(conns(1))
    expect(links.connectionsReported('r2', 'l1', 2, { stateIteration: 2, conns: conns(2, 'd') })).toBe(true)
    expect(links.get('l1')!.connections).toEqual(conns(2, 'd'))
    // older or equal state, another iteration, a router at neither end, too many connections: not taken
    expect(links.connectionsReported('r1', 'l1', 2, { stateIteration: 2, conns: conns(3) })).toBe(false)
    expect(links.connectionsReported('r1', 'l1', 1, { stateIteration: 9, conns: conns(3) })).toBe(false)
    expect(links.connectionsReported('r3', 'l1', 2, { stateIteration: 9, conns: conns(3) })).toBe(false)
    expect(links.connectionsReported('r1', 'l1', 2, { stateIteration: 9, conns: conns(LINK_LIMITS.connections + 1) })).toBe(false)
    expect(links.get('l1')!.connections).toEqual(conns(2, 'd'))
  })
})

describe('LinkRegistry listeners', () => {
  it('logs a listener that throws and still tells the others', () => {
    const { links, warnings } = setup()
    const seen: string[] = []
    links.on(() => {
      throw new Error('boom')
    })
    links.on((e) => seen.push(e.type))
    links.report('r1', [link('l1')], false)
    expect(seen).toEqual(['added'])
    expect(warnings).toEqual(['a listener of link added failed'])
  })

  it('stops telling a listener that unsubscribed', () => {
    const { links } = setup()
    const seen: string[] = []
    const off = links.on((e) => seen.push(e.type))
    off()
    links.report('r1', [link('l1')], false)
    expect(seen).toEqual([])
  })
})
