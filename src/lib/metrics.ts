/**
 * Prometheus metrics without a client library: counters, gauges read at scrape time, and histograms with fixed
 * buckets, rendered in the text exposition format (version 0.0.4). The hot path is cheap by construction: a caller
 * asks once for the series of a label set (`labels(...)`) and keeps it, so recording is a bucket search and two
 * additions, with no string built per observation.
 */

/** Label values by label name, in the order the metric declared its names. */
export type LabelValues = readonly string[]

/** The default latency buckets, in seconds: 1 ms to 10 s. */
export const LATENCY_BUCKETS_S: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Escapes a label value as the exposition format asks (backslash, quote, newline). */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function labelText(names: readonly string[], values: LabelValues): string {
  if (names.length !== values.length) throw new TypeError(`expected ${names.length} label values, got ${values.length}`)
  return names.map((n, i) => `${n}="${escapeLabel(values[i])}"`).join(',')
}

function braces(text: string): string {
  return text === '' ? '' : `{${text}}`
}

interface Metric {
  readonly name: string
  render(out: string[]): void
}

/** One series of a counter. */
export interface CounterSeries {
  inc(by?: number): void
}

export class Counter implements Metric {
  private readonly series = new Map<string, { value: number }>()
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[] = [],
  ) {}
  labels(...values: string[]): CounterSeries {
    const key = labelText(this.labelNames, values)
    let s = this.series.get(key)
    if (!s) this.series.set(key, (s = { value: 0 }))
    const series = s
    return { inc: (by = 1) => void (series.value += by) }
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`)
    for (const [labels, s] of this.series) out.push(`${this.name}${braces(labels)} ${s.value}`)
  }
}

/** A gauge whose values are read when scraped: `collect` answers one value per label set. */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly collect: () => Iterable<readonly [LabelValues, number]>,
  ) {}
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`)
    for (const [values, v] of this.collect()) out.push(`${this.name}${braces(labelText(this.labelNames, values))} ${v}`)
  }
}

/** One series of a histogram: `observe` takes the value in the metric's unit. */
export interface HistogramSeries {
  observe(value: number): void
}

interface HistogramData {
  readonly counts: number[]
  sum: number
  count: number
}

export class Histogram implements Metric {
  private readonly series = new Map<string, HistogramData>()
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[] = [],
    private readonly buckets: readonly number[] = LATENCY_BUCKETS_S,
  ) {}
  labels(...values: string[]): HistogramSeries {
    const key = labelText(this.labelNames, values)
    let d = this.series.get(key)
    if (!d) this.series.set(key, (d = { counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 }))
    const data = d
    const buckets = this.buckets
    return {
      observe(value: number) {
        // cumulative counts are made at render time: one bucket is incremented here
        let i = 0
        while (i < buckets.length && value > buckets[i]) i++
        if (i < buckets.length) data.counts[i]++
        data.sum += value
        data.count++
      },
    }
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`)
    for (const [labels, d] of this.series) {
      const sep = labels === '' ? '' : ','
      let cumulative = 0
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += d.counts[i]
        out.push(`${this.name}_bucket{${labels}${sep}le="${this.buckets[i]}"} ${cumulative}`)
      }
      out.push(`${this.name}_bucket{${labels}${sep}le="+Inf"} ${d.count}`)
      out.push(`${this.name}_sum${braces(labels)} ${d.sum}`, `${this.name}_count${braces(labels)} ${d.count}`)
    }
  }
}

/** The metrics of one process, rendered in registration order. */
export class MetricsRegistry {
  private readonly metrics: Metric[] = []
  register<M extends Metric>(metric: M): M {
    if (this.metrics.some((m) => m.name === metric.name)) throw new TypeError(`metric ${metric.name} registered twice`)
    this.metrics.push(metric)
    return metric
  }
  /** The exposition text (content type {@link METRICS_CONTENT_TYPE}). */
  render(): string {
    const out: string[] = []
    for (const m of this.metrics) m.render(out)
    return out.join('\n') + '\n'
  }
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
