// Robustness (issue 4): thousands of seeded random mutations of valid configurations; every one must produce findings
// and exit 0 or 1 — never an exception, never an internal-error finding. Failures print the seed and the input.
import { describe, expect, it } from 'bun:test'
import { parse, stringify } from 'yaml'
import { runValidateRouterConfig } from '../../../src/router-config/router-config-command.ts'
import { validateRouterConfig } from '../../../src/router-config/router-config-validate.ts'
import { fixture } from './router-config-support.ts'
import { rng } from '../../support/rng.ts'

const prng = rng

const BASES = ['edge-router.yml', 'fabric-router.yml', 'tunneler-router.yml', 'minimal.yml', 'broken-router.yml'].map(fixture)
const CHARS = [':', '-', ' ', '\t', '[', ']', '{', '}', '&', '*', '!', '|', '>', '#', "'", '"', '%', '@', '\n', '$', '?', ',', '\u0000', '\u00e9', '\ud83d\ude00', '\\']
const TOKENS = ['~', 'yes', 'NO', '-1', '0', '1e9', '3.0', '"x"', '[]', '{}', '*a', '&a x', '${X}', '$HOME', '0x1F', '.inf', '1d', '500ms', '1h30m', 'tls::', 'tls:[::1]:1', '<<: *a', '!!binary AAAA', '|', 'x'.repeat(300), '- - -', '? a']
const VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 3, 65536, '', 'x', '5s', '1d', 'tls:h:1', 'h:1', [], [1, 'a'], {}, { a: { b: { c: [] } } }, '${UNSET}']

function pick<T>(rnd: () => number, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)]
}

function mutateText(rnd: () => number, text: string): string {
  const at = Math.floor(rnd() * (text.length + 1))
  const lines = text.split('\n')
  const line = Math.floor(rnd() * lines.length)
  switch (Math.floor(rnd() * 8)) {
    case 0:
      return text.slice(0, at) + text.slice(at + 1)
    case 1:
      return text.slice(0, at) + pick(rnd, CHARS) + text.slice(at)
    case 2:
      lines.splice(line, 0, lines[line])
      return lines.join('\n')
    case 3:
      lines.splice(line, 1)
      return lines.join('\n')
    case 4: {
      const other = Math.floor(rnd() * lines.length)
      ;[lines[line], lines[other]] = [lines[other], lines[line]]
      return lines.join('\n')
    }
    case 5:
      lines[line] = rnd() < 0.5 ? `  ${lines[line]}` : lines[line].replace(/^ {1,2}/, '')
      return lines.join('\n')
    case 6:
      return text.replace(/[A-Za-z0-9_.:]+/g, (w) => (rnd() < 0.03 ? pick(rnd, TOKENS) : w))
    default:
      return text.slice(0, at) + text.slice(at, at + 40).repeat(1 + Math.floor(rnd() * 4)) + text.slice(at + 40)
  }
}

function mutateData(rnd: () => number, text: string): string {
  let data: unknown
  try {
    data = parse(text, { version: '1.1', merge: true, maxAliasCount: 1000, logLevel: 'silent' })
  } catch {
    return text
  }
  if (typeof data !== 'object' || data === null) return text
  let node = data as Record<string, unknown>
  for (let depth = 0; depth < 4; depth++) {
    const keys = Object.keys(node)
    if (keys.length === 0) break
    const key = pick(rnd, keys)
    const roll = rnd()
    if (roll < 0.3 || typeof node[key] !== 'object' || node[key] === null) {
      if (roll < 0.1) delete node[key]
      else if (roll < 0.2) node[`${key}x`] = node[key]
      else node[key] = structuredClone(pick(rnd, VALUES))
      break
    }
    node = node[key] as Record<string, unknown>
  }
  return stringify(data, { version: '1.1' })
}

describe('fuzzing with seeded mutations of valid configurations', () => {
  const ROUNDS = 5000

  it(`validates ${ROUNDS} mutants without an exception, each with exit 0 or 1`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const rnd = prng(round + 1)
      let text = pick(rnd, BASES)
      const steps = 1 + Math.floor(rnd() * 3)
      for (let s = 0; s < steps; s++) text = rnd() < 0.7 ? mutateText(rnd, text) : mutateData(rnd, text)
      let findings
      try {
        findings = validateRouterConfig(text, { env: { X: '1' } }).findings
      } catch (e) {
        throw new Error(`round ${round} threw ${(e as Error).stack}\n--- input ---\n${text}`)
      }
      for (const f of findings) {
        if (!(f.line >= 1 && f.column >= 1 && f.message.length > 0 && !/[\r\n]/.test(f.message + f.path))) {
          throw new Error(`round ${round}: malformed finding ${JSON.stringify(f)}\n--- input ---\n${text}`)
        }
      }
      if (round % 20 === 0) {
        let stderr = ''
        const code = await runValidateRouterConfig(['-'], { stdout: () => {}, stderr: (s) => (stderr += s), readStdin: async () => text, env: {} })
        if ((code !== 0 && code !== 1) || stderr !== '') throw new Error(`round ${round}: exit ${code}, stderr ${stderr}\n--- input ---\n${text}`)
      }
    }
  }, 120_000) // a bound against a hang, not a speed target: CI's two cores are shared
})
