/**
 * Cold starts on a data directory that already holds a scenario (`BENCH_KEEP_DATA=1 bun run bench policy large` keeps
 * one and prints its path): starts the controller on it again and again and reports, per start,
 * - spawn -> the listening line, and the CPU time the process had used by then (user + system, /proc)
 * - spawn -> the first `GET /version` answer, and -> the first client service list (one password login of the
 *   benchmark's first identity, then `GET /services?limit=500`)
 * - resident memory when listening, and once the controller has answered 50 service lists (the controller serving
 *   the loaded scenario: the figure the target of issue 14 is read against)
 * With BENCH_MAIN_B (the src/main.ts of another checkout) the starts alternate between this checkout (A) and that one
 * (B), seconds apart, so both sides of a comparison share the machine's load; each side gets its own copy of the data
 * directory (neither may migrate the other's). Medians per side at the end.
 *
 * Each side starts what an operator starts: the checkout's compiled binary (dist/edgeplane, `bun run build`) when it
 * exists and is newer than every file of its src/, else `bun src/main.ts`; the first line says which, per side.
 * BENCH_COLD_SOURCE=1 starts from source on both sides.
 *
 * bun run bench cold-start DIR [starts]     (default 5 per side)
 * BENCH_PROFILE=DIR: each start writes a CPU profile (markdown) into DIR when it stops (from source: a compiled
 * binary takes no bun flags).
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { coldStart, memoryNote, memoryOf } from './policy-scale.ts'

const MAIN_A = join(import.meta.dir, '..', 'src', 'main.ts')

/** The newest modification time (ms) of the files under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs)
  }
  return newest
}

/**
 * What to start for the checkout of `main` (its src/main.ts): its dist/edgeplane when that is newer than every source
 * file, else `main` itself; with the reason when it is the source.
 */
export function programOf(main: string, fromSource: boolean): { program: string; note: string } {
  if (fromSource) return { program: main, note: 'from source (asked)' }
  const srcDir = dirname(main)
  const binary = join(srcDir, '..', 'dist', 'edgeplane')
  if (!existsSync(binary)) return { program: main, note: `from source (no ${binary}: bun run build)` }
  if (statSync(binary).mtimeMs < newestMtime(srcDir)) return { program: main, note: `from source (${binary} is older than ${srcDir}: bun run build)` }
  return { program: binary, note: 'compiled binary' }
}

interface Figures {
  listeningMs: number
  cpuAtListeningS: number
  firstVersionMs: number
  firstListMs: number
  rssListeningMiB: number
  rssServingMiB: number
  note: string
}

async function timedStart(dataDir: string, main: string, bunFlags: string[]): Promise<Figures> {
  const started = await coldStart(dataDir, bunFlags, main)
  try {
    for (let i = 0; i < 50; i++) await started.client.must(200, 'GET', '/services?limit=500')
    const serving = memoryOf(started.server.pid)
    return {
      listeningMs: started.server.startMs,
      cpuAtListeningS: started.cpuAtListeningS,
      firstVersionMs: started.firstVersionMs,
      firstListMs: started.firstListMs,
      rssListeningMiB: started.listening?.rssMiB ?? NaN,
      rssServingMiB: serving?.rssMiB ?? NaN,
      note: serving ? memoryNote(serving) : '',
    }
  } finally {
    await started.server.stop()
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
const f2 = (n: number) => n.toFixed(2)

function line(label: string, c: Figures): string {
  return `${label}  listening ${f2(c.listeningMs / 1000)} s (CPU ${f2(c.cpuAtListeningS)} s), first /version ${f2(c.firstVersionMs / 1000)} s, ` +
    `first service list ${f2(c.firstListMs / 1000)} s; RSS listening ${c.rssListeningMiB.toFixed(0)} MiB, serving ${c.rssServingMiB.toFixed(0)} MiB`
}

export async function runColdStarts(dataDir: string, starts: number): Promise<void> {
  if (!dataDir) throw new Error('usage: bun run bench cold-start DATA_DIR [starts]')
  const profileDir = process.env.BENCH_PROFILE
  const fromSource = process.env.BENCH_COLD_SOURCE === '1' || profileDir !== undefined
  const sides: { label: string; main: string; dir: string; runs: Figures[] }[] = [{ label: 'A', main: MAIN_A, dir: dataDir, runs: [] }]
  const other = process.env.BENCH_MAIN_B
  const copies: string[] = []
  if (other) {
    for (const side of [sides[0]!, { label: 'B', main: other, dir: '', runs: [] }]) {
      side.dir = mkdtempSync(join(tmpdir(), `edgeplane-cold-${side.label}-`))
      cpSync(dataDir, side.dir, { recursive: true })
      copies.push(side.dir)
      if (side.label === 'B') sides.push(side)
    }
  }
  const bunFlags = profileDir ? ['--cpu-prof-md', `--cpu-prof-dir=${profileDir}`] : []
  const programs = sides.map((side) => programOf(side.main, fromSource))
  sides.forEach((side, i) => (side.main = programs[i]!.program))
  console.log(`cold starts on ${dataDir}: ${starts} per side; ${sides.map((s, i) => `${s.label} = ${s.main} (${programs[i]!.note})`).join(', ')}`)
  try {
    for (let i = 0; i < starts; i++) {
      for (const side of sides) {
        const c = await timedStart(side.dir, side.main, bunFlags)
        side.runs.push(c)
        console.log(line(`  ${side.label} #${i + 1}`, c) + ` (${c.note})`)
      }
    }
  } finally {
    for (const dir of copies) rmSync(dir, { recursive: true, force: true })
  }
  console.log('\nmedians:')
  for (const side of sides) {
    const m = (k: keyof Omit<Figures, 'note'>) => median(side.runs.map((r) => r[k]))
    console.log(line(`  ${side.label}`, {
      listeningMs: m('listeningMs'), cpuAtListeningS: m('cpuAtListeningS'), firstVersionMs: m('firstVersionMs'), firstListMs: m('firstListMs'),
      rssListeningMiB: m('rssListeningMiB'), rssServingMiB: m('rssServingMiB'), note: '',
    }))
  }
}

if (import.meta.main) {
  await runColdStarts(process.argv[2] ?? '', Number(process.argv[3] ?? 5))
}
