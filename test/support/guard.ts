/**
 * Preloaded into every test run: fails the run if any test wrote into the repository's data/ directory (tests must
 * use their own temporary data directory), and prints at the end how many API answers the spec check saw and every
 * use of its `offSpec` escape.
 */
import { afterAll } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { specCheckTally } from './spec-check.ts'

const dataDir = join(import.meta.dir, '..', '..', 'data')
const listing = (): string => {
  try {
    return readdirSync(dataDir).sort().join(',')
  } catch {
    return ''
  }
}
const before = listing()

afterAll(() => {
  const summary = specCheckTally.summary()
  if (summary) console.log(summary)
  const after = listing()
  if (after !== before) throw new Error(`a test wrote into ${dataDir}: before [${before}] after [${after}]`)
})
