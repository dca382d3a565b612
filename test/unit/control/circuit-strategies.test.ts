// Terminator selection: precedence bands, the four strategies, and the dynamic costs that make smartrouting spread
// circuits and back off failing terminators.
import { describe, expect, it } from 'bun:test'
import { biasedCost, chooseTerminator, DynamicCosts, STICKINESS_TOKEN_KEY, type Candidate } from '../../../src/control/circuits/circuit-strategies.ts'
import { rng } from '../../support/rng.ts'

const c = (terminatorId: string, unbiasedCost: number, precedence: Candidate['precedence'] = 'default'): Candidate => ({ terminatorId, unbiasedCost, precedence })

describe('biasedCost', () => {
  it('puts required below default below failed, each saturating at its band', () => {
    expect(biasedCost('required', 1_000_000)).toBeLessThan(biasedCost('default', 0))
    expect(biasedCost('default', 1_000_000)).toBeLessThan(biasedCost('failed', 0))
    expect(biasedCost('required', 2 ** 40)).toBe(2 ** 30 - 1)
  })
})

describe('chooseTerminator', () => {
  const random = rng(7)
  it('smartrouting takes the cheapest of the best precedence', () => {
    expect(chooseTerminator('smartrouting', [c('a', 5), c('b', 1), c('c', 100, 'required')], { random })!.candidate.terminatorId).toBe('c')
    expect(chooseTerminator('smartrouting', [c('a', 5), c('b', 1), c('x', 0, 'failed')], { random })!.candidate.terminatorId).toBe('b')
  })

  it('random picks among the best precedence only, evenly', () => {
    const counts = new Map<string, number>()
    for (let i = 0; i < 3_000; i++) {
      const id = chooseTerminator('random', [c('a', 1), c('b', 999), c('z', 0, 'failed')], { random })!.candidate.terminatorId
      counts.set(id, (counts.get(id) ?? 0) + 1)
    }
    expect(counts.get('z')).toBeUndefined()
    expect(Math.abs(counts.get('a')! - counts.get('b')!)).toBeLessThan(300)
  })

  it('weighted favours the cheaper in proportion', () => {
    const counts = new Map<string, number>()
    for (let i = 0; i < 3_000; i++) {
      const id = chooseTerminator('weighted', [c('cheap', 10), c('dear', 30)], { random })!.candidate.terminatorId
      counts.set(id, (counts.get(id) ?? 0) + 1)
    }
    // weights 1 - 10/40 = 0.75 and 1 - 30/40 = 0.25
    expect(counts.get('cheap')! / 3_000).toBeGreaterThan(0.7)
    expect(counts.get('cheap')! / 3_000).toBeLessThan(0.8)
  })

  it('sticky keeps to the terminator its token names, and hands the chosen one back as the token', () => {
    const first = chooseTerminator('sticky', [c('a', 5), c('b', 1)], { random })!
    expect(first.candidate.terminatorId).toBe('b')
    expect(new TextDecoder().decode(first.peerData!.get(STICKINESS_TOKEN_KEY))).toBe('b')
    expect(chooseTerminator('sticky', [c('a', 5), c('b', 1)], { random, stickinessToken: 'a' })!.candidate.terminatorId).toBe('a')
    expect(chooseTerminator('sticky', [c('a', 5), c('b', 1)], { random, stickinessToken: 'gone' })!.candidate.terminatorId).toBe('b')
  })

  it('answers nothing for no candidates', () => {
    expect(chooseTerminator('smartrouting', [], { random })).toBeUndefined()
  })
})

describe('DynamicCosts', () => {
  it('costs 2 per circuit and 20 per failure, less 2 per later success; credits failures back over time', () => {
    const d = new DynamicCosts()
    d.dialSucceeded('t')
    d.dialSucceeded('t')
    expect(d.costOf('t')).toBe(4)
    d.circuitRemoved('t')
    expect(d.costOf('t')).toBe(2)
    d.dialFailed('t', 0)
    expect(d.costOf('t')).toBe(22)
    d.dialSucceeded('t')
    expect(d.costOf('t')).toBe(2 * 2 + 18)
    // 25 minutes after the failure: a credit of 2^5
    d.creditAll(25 * 60_000)
    expect(d.costOf('t')).toBe(4)
    d.forget('t')
    expect(d.costOf('t')).toBe(0)
  })
})
