/**
 * Benchmark of `validate-router-config`: validation time of a typical router file and of a large one, and of the
 * typical file with `--check-files` over a generated router PKI (root → intermediate → client and server certificates).
 * Used by bench/run.ts; also runnable alone: bun run bench/router-config-bench.ts
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateRouterConfig, validateRouterConfigWithFiles } from '../src/router-config/router-config-validate.ts'
import { makeRouterPki, PKI_IDENTITY } from '../test/unit/router-config/router-config-pki.ts'
import { patched } from '../test/unit/router-config/router-config-support.ts'

const TYPICAL = readFileSync(join(import.meta.dir, '..', 'test', 'fixtures', 'router-config', 'edge-router.yml'), 'utf8')

/** A large but realistic file: the typical one plus many listeners, link dialers and SANs. */
function largeFile(): string {
  let text = TYPICAL.replace('  - binding: tunnel\n', () => {
    let extra = ''
    for (let i = 0; i < 2000; i++) extra += `  - binding: transport\n    bind: tls:0.0.0.0:${10000 + i}\n    advertise: router-east.example.net:${10000 + i}\n    options:\n      mtu: 1400\n`
    return `${extra}  - binding: tunnel\n`
  })
  text += 'x-inventory:\n'
  for (let i = 0; i < 8000; i++) text += `  - {name: "router-${i}", site: "dc-${i % 40}", addresses: ["tls:10.${(i >> 8) & 255}.${i & 255}.1:4022"]}\n`
  return text
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

function timeRuns(text: string, runs: number): number[] {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    validateRouterConfig(text, { env: {} })
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)
}

/** Time of `--check-files` on the typical file pointing at generated files (sorted, `runs` after 5 warm-up runs). */
async function timeFileChecks(runs: number): Promise<number[]> {
  const pki = await makeRouterPki()
  try {
    const text = patched({ identity: PKI_IDENTITY })
    const options = { env: {}, files: { base: pki.dir, now: pki.now } }
    const times: number[] = []
    for (let i = 0; i < runs + 5; i++) {
      const started = performance.now()
      const { findings } = await validateRouterConfigWithFiles(text, options)
      if (findings.length > 0) throw new Error(`the generated PKI should be valid: ${findings[0].message}`)
      if (i >= 5) times.push(performance.now() - started)
    }
    return times.sort((a, b) => a - b)
  } finally {
    pki.cleanup()
  }
}

/**
 * Validation time of a typical file (p50, p99 of 500 runs after warm-up), of a large file (median of 5) and of the
 * typical file with --check-files (p50 of 50; the issue 13 target is under 50 ms).
 */
export async function benchRouterConfig(): Promise<{ name: string; value: number; unit: string }[]> {
  timeRuns(TYPICAL, 50)
  const typical = timeRuns(TYPICAL, 500)
  const large = largeFile()
  const largeTimes = timeRuns(large, 5)
  const sizeKb = Math.round(Buffer.byteLength(large) / 1024)
  const withFiles = await timeFileChecks(50)
  const round = (n: number): number => Math.round(n * 100) / 100
  return [
    { name: `validate-router-config typical file (${Buffer.byteLength(TYPICAL)} B) p50`, value: round(percentile(typical, 50)), unit: 'ms' },
    { name: 'validate-router-config typical file p99', value: round(percentile(typical, 99)), unit: 'ms' },
    { name: `validate-router-config large file (${sizeKb} KiB) median`, value: round(percentile(largeTimes, 50)), unit: 'ms' },
    { name: 'validate-router-config --check-files typical file and PKI p50', value: round(percentile(withFiles, 50)), unit: 'ms' },
  ]
}

if (import.meta.main) {
  for (const f of await benchRouterConfig()) console.log(`${f.name}: ${f.value} ${f.unit}`)
}
