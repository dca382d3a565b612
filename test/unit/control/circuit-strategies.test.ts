// Terminator selection: precedence bands, the five strategies, the dynamic costs that make smartrouting spread
// circuits and back off failing terminators, and the ha strategy's failover.
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

  it('ha takes the cheapest of the best precedence, as smartrouting does', () => {
    expect(chooseTerminator('ha', [c('standby', 0), c('primary', 50, 'required')], { random })!.candidate.terminatorId).toBe('primary')
    expect(chooseTerminator('ha', [c('standby', 0), c('primary', 50, 'failed')], { random })!.candidate.terminatorId).toBe('standby')
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

describe('the ha strategy\'s failover', () => {
  const primary = { id: 'p', precedence: 'required' as const }
  it('marks a terminator failed after 3 failed dials of its service in a row, until its record changes', () => {
    const d = new DynamicCosts()
    d.failed('ha', 'svc', primary, 0)
    d.failed('ha', 'svc', primary, 0)
    expect(d.precedenceOf(primary)).toBe('required')
    d.failed('ha', 'svc', primary, 0)
    expect(d.precedenceOf(primary)).toBe('failed')
    // ha keeps no dynamic cost
    expect(d.costOf('p')).toBe(0)
    // its host (or an admin) changed it: the graph holds a new record, and the mark is gone
    expect(d.precedenceOf({ ...primary })).toBe('required')
    expect(d.precedenceOf(primary)).toBe('required')
  })

  it('starts counting again after a success, per service, and leaves other strategies\' terminators alone', () => {
    const d = new DynamicCosts()
    d.failed('ha', 'svc', primary, 0)
    d.failed('ha', 'svc', primary, 0)
    d.succeeded('ha', 'svc', 'p')
    d.failed('ha', 'svc', primary, 0)
    d.failed('ha', 'other', primary, 0)
    d.failed('ha', 'other', primary, 0)
    expect(d.precedenceOf(primary)).toBe('required')
    for (let i = 0; i < 5; i++) d.failed('smartrouting', 'svc2', { ...primary, id: 's' }, 0)
    expect(d.precedenceOf({ ...primary, id: 's' })).toBe('required')
    expect(d.costOf('s')).toBe(100)
    d.failed('ha', 'svc', primary, 0)
    d.failed('ha', 'svc', primary, 0)
    expect(d.precedenceOf(primary)).toBe('failed')
    d.forget('p')
    expect(d.precedenceOf(primary)).toBe('required')
  })
})
