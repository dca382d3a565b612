// bench/cold-start.ts: which program a side starts. The compiled binary when it is newer than every source file of
// its checkout (what an operator starts), else the source with the reason; the source when asked.
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { programOf } from '../../../bench/cold-start.ts'

const base = mkdtempSync(join(tmpdir(), 'edgeplane-cold-start-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

let n = 0
/** A checkout with src/main.ts and src/lib/x.ts at `sourceAt` (seconds) and, when given, dist/edgeplane at `binaryAt`. */
function checkout(sourceAt: number, binaryAt?: number): string {
  const root = join(base, `c${++n}`)
  mkdirSync(join(root, 'src', 'lib'), { recursive: true })
  for (const f of ['main.ts', join('lib', 'x.ts')]) {
    writeFileSync(join(root, 'src', f), '')
    utimesSync(join(root, 'src', f), 1_000, f === 'main.ts' ? 1_000 : sourceAt)
  }
  if (binaryAt !== undefined) {
    mkdirSync(join(root, 'dist'))
    writeFileSync(join(root, 'dist', 'edgeplane'), '')
    utimesSync(join(root, 'dist', 'edgeplane'), binaryAt, binaryAt)
  }
  return join(root, 'src', 'main.ts')
}

describe('programOf', () => {
  it('case=starts the compiled binary when it is newer than every source file', () => {
    const main = checkout(2_000, 3_000)
    expect(programOf(main, false)).toEqual({ program: join(main, '..', '..', 'dist', 'edgeplane'), note: 'compiled binary' })
  })

  it('case=starts the source when a file deeper in src/ is newer than the binary, and says why', () => {
    const main = checkout(4_000, 3_000)
    const p = programOf(main, false)
    expect(p.program).toBe(main)
    expect(p.note).toContain('is older than')
  })

  it('case=starts the source when there is no binary, and says why', () => {
    const main = checkout(2_000)
    const p = programOf(main, false)
    expect(p.program).toBe(main)
    expect(p.note).toContain('bun run build')
  })

  it('case=starts the source when asked, even with a newer binary', () => {
    const main = checkout(2_000, 3_000)
    expect(programOf(main, true)).toEqual({ program: main, note: 'from source (asked)' })
  })
})
