// Robustness (issue 4): thousands of seeded random mutations of valid configurations; every one must produce findings
// and exit 0 or 1 — never an exception, never an internal-error finding. Failures print the seed and the input.
import { describe, expect, it } from 'bun:test'
import { parse, stringify } from 'yaml'
import { runValidateRouterConfig } from '../../../src/router-config/router-config-command.ts'
import { validateRouterConfig, validateRouterConfigWithFiles } from '../../../src/router-config/router-config-validate.ts'
import { fixture, patched } from './router-config-support.ts'
import { makeRouterPki, PKI_IDENTITY } from './router-config-pki.ts'
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

/** A seeded mutation of a PEM file: garbage, truncation, flipped base64, swapped or renamed blocks, raw bytes. */
function mutatePem(rnd: () => number, text: string, others: string[]): string | Uint8Array {
  const at = Math.floor(rnd() * (text.length + 1))
  switch (Math.floor(rnd() * 8)) {
    case 0:
      return text.slice(0, at)
    case 1:
      return text.slice(0, at) + pick(rnd, CHARS) + text.slice(at + 1)
    case 2:
      return text.replace(/[A-Za-z0-9+/]/g, (c) => (rnd() < 0.02 ? pick(rnd, ['A', '/', '+', '=', '-', c.toLowerCase()]) : c))
    case 3:
      return text.replace(/(BEGIN|END) [A-Z ]+-----/, `$1 ${pick(rnd, ['CERTIFICATE', 'PRIVATE KEY', 'EC PRIVATE KEY', 'RSA PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'X'])}-----`)
    case 4:
      return pick(rnd, others) + text.slice(at)
    case 5:
      return Uint8Array.from({ length: Math.floor(rnd() * 2000) }, () => Math.floor(rnd() * 256))
    case 6:
      return Buffer.from(text.replace(/-----[^-]+-----/g, '').replace(/\s/g, ''), 'base64')
    default:
      return text.slice(0, at) + text.slice(at, at + 64).repeat(1 + Math.floor(rnd() * 3)) + text.slice(at + 64)
  }
}

describe('fuzzing the files --check-files reads', () => {
  const ROUNDS = 200

  it(`checks ${ROUNDS} mutated certificate, key and CA files without an exception or an internal error`, async () => {
    const pki = await makeRouterPki()
    try {
      const names = Object.values(PKI_IDENTITY)
      const originals = await Promise.all(names.map((n) => Bun.file(`${pki.dir}/${n}`).text()))
      const config = patched({ identity: Object.fromEntries(Object.entries(PKI_IDENTITY).map(([k, n]) => [k, `fuzz-${n}`])) })
      for (let round = 0; round < ROUNDS; round++) {
        const rnd = prng(round + 1)
        const victim = Math.floor(rnd() * names.length)
        for (const [i, n] of names.entries()) {
          await Bun.write(`${pki.dir}/fuzz-${n}`, i === victim ? mutatePem(rnd, originals[i], originals) : originals[i])
        }
        let findings
        try {
          findings = (await validateRouterConfigWithFiles(config, { env: {}, files: { base: pki.dir, now: pki.now } })).findings
        } catch (e) {
          throw new Error(`round ${round} threw ${(e as Error).stack}`)
        }
        for (const f of findings) {
          if (f.path === '(internal)' || !(f.line >= 1 && f.column >= 1 && f.message.length > 0 && !/[\r\n]/.test(f.message + f.path))) {
            throw new Error(`round ${round}: malformed finding ${JSON.stringify(f)} for a mutated ${names[victim]}`)
          }
        }
      }
    } finally {
      pki.cleanup()
    }
  }, 120_000) // a bound against a hang, not a speed target
})
