// The Prometheus text of the metrics registry: counters, gauges read at scrape time, cumulative histogram buckets,
// label escaping, and one series per label set however often it is asked for. Issue 12, part G.
import { describe, expect, it } from 'bun:test'
import { Counter, Gauge, Histogram, MetricsRegistry } from '../../../src/lib/metrics.ts'

describe('MetricsRegistry', () => {
  it('case=renders counters, gauges and histograms in the exposition format', () => {
    const r = new MetricsRegistry()
    const c = r.register(new Counter('t_total', 'a counter', ['kind']))
    c.labels('a').inc()
    c.labels('a').inc(2)
    c.labels('b "quoted"\\\n').inc()
    let depth = 3
    r.register(new Gauge('t_depth', 'a gauge', ['actor'], () => [[['x'], depth]]))
    const h = r.register(new Histogram('t_seconds', 'a histogram', [], [0.1, 1]))
    const s = h.labels()
    for (const v of [0.05, 0.1, 0.5, 2]) s.observe(v)
    depth = 4
    expect(r.render()).toBe(
      [
        '# HELP t_total a counter',
        '# TYPE t_total counter',
        't_total{kind="a"} 3',
        't_total{kind="b \\"quoted\\"\\\\\\n"} 1',
        '# HELP t_depth a gauge',
        '# TYPE t_depth gauge',
        't_depth{actor="x"} 4',
        '# HELP t_seconds a histogram',
        '# TYPE t_seconds histogram',
        't_seconds_bucket{le="0.1"} 2',
        't_seconds_bucket{le="1"} 3',
        't_seconds_bucket{le="+Inf"} 4',
        't_seconds_sum 2.65',
        't_seconds_count 4',
        '',
      ].join('\n'),
    )
  })

  it('case=refuses a metric registered twice and a wrong number of label values', () => {
    const r = new MetricsRegistry()
    r.register(new Counter('x_total', 'x'))
    expect(() => r.register(new Counter('x_total', 'x'))).toThrow(TypeError)
    expect(() => new Counter('y_total', 'y', ['a', 'b']).labels('only-one')).toThrow(TypeError)
  })
})
