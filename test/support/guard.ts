/**
 * Preloaded into every test run: fails the run if any test wrote into the repository's data/ directory.
 * Tests must use their own temporary data directory.
 */
import { afterAll } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

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
  const after = listing()
  if (after !== before) throw new Error(`a test wrote into ${dataDir}: before [${before}] after [${after}]`)
})
