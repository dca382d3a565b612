/**
 * Shared helpers of the router-config tests: fixtures, patching a base configuration by path, and
 * running the validator on YAML text. Not a test file.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, stringify } from 'yaml'
import type { Finding } from '../../../src/router-config/router-config-findings.ts'
import { validateRouterConfig } from '../../../src/router-config/router-config-validate.ts'

/** Folder of the YAML fixtures. */
export const FIXTURES = join(import.meta.dir, '..', '..', 'fixtures', 'router-config')
/** The test-only process entry of the command. */
export const RUNNER = join(FIXTURES, 'run-validator.ts')

/** Text of a fixture file. */
export function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8')
}

/** A fresh copy of the fully valid edge router fixture as plain data. */
export function baseConfig(): Record<string, unknown> {
  return parse(fixture('edge-router.yml'), { version: '1.1' }) as Record<string, unknown>
}

/** Splits `a.b[0].c` into keys and indexes. */
function splitPath(path: string): (string | number)[] {
  const out: (string | number)[] = []
  for (const part of path.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part)
    if (!m) throw new Error(`bad path ${path}`)
    if (m[1]) out.push(m[1])
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]))
  }
  return out
}

/** Sets (or, with `undefined`, deletes) the value at `path`, creating maps on the way. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = splitPath(path)
  let at: Record<string | number, unknown> = target
  for (const key of keys.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = {}
    at = at[key] as Record<string | number, unknown>
  }
  const last = keys[keys.length - 1]
  if (value === undefined) {
    if (Array.isArray(at) && typeof last === 'number') at.splice(last, 1)
    else delete at[last]
  } else {
    at[last] = value
  }
}

/** The base configuration with `patch` applied, as YAML text. */
export function patched(patch: Record<string, unknown>, base = baseConfig()): string {
  for (const [path, value] of Object.entries(patch)) setPath(base, path, value)
  return stringify(base, { version: '1.1' })
}

/** Findings of a YAML text, validated with `env` (an empty environment unless given). */
export function findingsOf(text: string, env: Record<string, string> = {}): Finding[] {
  return validateRouterConfig(text, { env }).findings
}

/** Errors only. */
export function errorsOf(text: string, env: Record<string, string> = {}): Finding[] {
  return findingsOf(text, env).filter((f) => f.severity === 'error')
}

/** One line per finding, for readable failure output. */
export function show(findings: Finding[]): string {
  return findings.map((f) => `${f.line}:${f.column} ${f.severity} ${f.path}: ${f.message}`).join('\n')
}

/** What a table case expects: no findings at all, or one finding of this severity at this path. */
export type Expectation = 'valid' | { severity: 'error' | 'warning'; path: string; message?: RegExp }

/** A row of a rule table: a patch of the base configuration and what the validator must say. */
export interface RuleCase {
  name: string
  patch: Record<string, unknown>
  expect: Expectation
}

/** Shorthands for table rows. */
export const valid = 'valid' as const
export const error = (path: string, message?: RegExp): Expectation => ({ severity: 'error', path, message })
export const warning = (path: string, message?: RegExp): Expectation => ({ severity: 'warning', path, message })

/** Checks one table row; returns a description of the mismatch, or undefined. */
export function mismatch(c: RuleCase): string | undefined {
  const findings = findingsOf(patched(c.patch))
  if (c.expect === 'valid') return findings.length === 0 ? undefined : `expected no findings, got:\n${show(findings)}`
  const { severity, path, message } = c.expect
  const hit = findings.find((f) => f.severity === severity && f.path === path && (!message || message.test(f.message)))
  return hit ? undefined : `expected ${severity} at ${path}${message ? ` matching ${message}` : ''}, got:\n${show(findings)}`
}
