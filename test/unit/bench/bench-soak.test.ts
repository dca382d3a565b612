// The soak's summary (bench/bench-soak.ts): quantiles of sorted latencies, and the verdict that compares the last
// third of the samples with the first third after the warm-up sample.
import { describe, expect, it } from 'bun:test'
import { quantile, soakVerdict, type SoakSample } from '../../../bench/bench-soak.ts'

const sample = (minute: number, rssMiB: number, p99Ms: number): SoakSample => ({ minute, requests: 100, errors: 0, dropped: 0, p50Ms: 1, p99Ms, rssMiB, anonMiB: rssMiB / 2, slowest: 'x', slowestP99Ms: p99Ms })

describe('soak summary', () => {
  it('takes quantiles of sorted latencies', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1)
    expect(quantile(sorted, 0.5)).toBe(51)
    expect(quantile(sorted, 0.99)).toBe(100)
    expect(quantile([], 0.5)).toBeNaN()
  })

  it('reads growth between the medians of the first and the last third, skipping the warm-up sample', () => {
    const samples = [sample(1, 500, 900), sample(2, 100, 10), sample(3, 110, 10), sample(4, 120, 20), sample(5, 130, 20)]
    // steady samples 2..5: first third [2, 3] (ceil 4/3 = 2), last third [4, 5]
    expect(soakVerdict(samples)).toEqual({ rssGrowthMiB: 20, p99Ratio: 2 })
  })

  it('does not read one busy minute as a trend', () => {
    const flat = (m: number) => sample(m, 100, 10)
    const samples = [flat(1), flat(2), flat(3), flat(4), flat(5), flat(6), sample(7, 300, 5000), flat(8), flat(9), flat(10)]
    expect(soakVerdict(samples)).toEqual({ rssGrowthMiB: 0, p99Ratio: 1 })
  })

  it('has no verdict without two steady samples', () => {
    expect(soakVerdict([sample(1, 1, 1), sample(2, 1, 1)])).toBeUndefined()
  })
})
