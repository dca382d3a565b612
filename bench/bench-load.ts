/** A closed-loop load generator: N concurrent workers, each sending requests back to back for a fixed time. */

export interface LoadResult {
  count: number
  errors: number
  perSecond: number
  p50Ms: number
  p99Ms: number
}

/**
 * Runs the load for `durationMs`, or until `maxRequests` requests have started (for requests that consume a
 * pre-made pool, such as one-time tokens); the rate is over the time actually taken.
 */
export async function runLoad(opts: {
  concurrency: number
  durationMs: number
  maxRequests?: number
  request: (worker: number, i: number) => Promise<boolean>
}): Promise<LoadResult> {
  const latencies: number[] = []
  let errors = 0
  let started = 0
  const max = opts.maxRequests ?? Infinity
  const end = performance.now() + opts.durationMs
  const start = performance.now()
  const worker = async (w: number) => {
    let i = 0
    while (performance.now() < end && started++ < max) {
      const t0 = performance.now()
      let okay = false
      try {
        okay = await opts.request(w, i++)
      } catch {
        okay = false
      }
      if (okay) latencies.push(performance.now() - t0)
      else errors++
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(w)))
  const elapsedS = (performance.now() - start) / 1000
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] : NaN)
  return { count: latencies.length, errors, perSecond: latencies.length / elapsedS, p50Ms: pct(0.5), p99Ms: pct(0.99) }
}

/** One printed figure: name, value, unit, and optionally its ratio to a baseline with the target. */
export function printFigure(name: string, value: number, unit: string, extra = ''): void {
  console.log(`${name.padEnd(58)} ${value.toFixed(value >= 100 ? 0 : 2).padStart(10)} ${unit.padEnd(8)} ${extra}`)
}
