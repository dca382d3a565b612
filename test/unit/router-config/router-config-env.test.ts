// Environment substitution as the router does it: Go os.ExpandEnv on string values after parsing, never on keys.
import { describe, expect, it } from 'bun:test'
import { expandEnv, routerEnvLookup } from '../../../src/router-config/router-config-env.ts'
import { findingsOf, patched, show } from './router-config-support.ts'

const env: Record<string, string> = { HOST: 'ctrl.example.net', PORT: '6262', EMPTY: '', A_1: 'x', '1': 'one' }
const lookup = (name: string): string | undefined => env[name]

describe('expandEnv', () => {
  const cases: [string, string, string[]][] = [
    ['tls:${HOST}:${PORT}', 'tls:ctrl.example.net:6262', []],
    ['tls:$HOST:$PORT', 'tls:ctrl.example.net:6262', []],
    ['$A_1-y', 'x-y', []],
    ['${MISSING}/x', '/x', ['MISSING']],
    ['$MISSING', '', ['MISSING']],
    ['${EMPTY}', '', []],
    ['cost: 5$', 'cost: 5$', []],
    ['a $ b', 'a $ b', []],
    ['${}x', 'x', []],
    ['${unclosed', 'unclosed', []],
    ['$1abc', 'oneabc', []],
    ['${1}', 'one', []],
    ['$$', '', ['$']],
    ['${A:-default}', '', ['A:-default']],
    ['no dollar', 'no dollar', []],
  ]
  for (const [input, value, unset] of cases) {
    it(`expands ${JSON.stringify(input)} to ${JSON.stringify(value)}`, () => {
      expect(expandEnv(input, lookup)).toEqual({ value, unset })
    })
  }

  it('always knows TMP, TEMP and TMPDIR, which the router sets itself', () => {
    const look = routerEnvLookup({})
    expect(look('TMPDIR')).toBe('/tmp')
    expect(look('TEMP')).toBe('/tmp')
    expect(routerEnvLookup({ TMPDIR: '/var/tmp' })('TMP')).toBe('/var/tmp')
  })
})

describe('substitution during validation', () => {
  it('substitutes ${NAME} and $NAME before the values are checked', () => {
    const text = patched({ 'ctrl.endpoint': 'tls:${HOST}:$PORT' })
    expect(findingsOf(text, { HOST: 'ctrl.example.net', PORT: '6262' })).toEqual([])
  })

  it('warns about an unset variable, naming it, at the value that uses it', () => {
    const text = patched({ 'identity.ca': '${PKI_DIR}/ca.pem' })
    const findings = findingsOf(text)
    expect(show(findings)).toContain('warning identity.ca: environment variable PKI_DIR is not set')
    expect(findings.filter((f) => f.severity === 'error')).toEqual([])
  })

  it('reports what the empty substitution breaks, with the original text', () => {
    const findings = findingsOf(patched({ 'ctrl.endpoint': 'tls:${CTRL_HOST}:6262' }))
    expect(show(findings)).toContain('warning ctrl.endpoint: environment variable CTRL_HOST is not set')
    expect(show(findings)).toMatch(/error ctrl.endpoint: "tls::6262" .*host is missing.*after substitution of "tls:\$\{CTRL_HOST\}:6262"/)
  })

  it('keeps a substituted number a string, as the router does', () => {
    const findings = findingsOf(patched({ 'forwarder.linkDialQueueLength': '${QUEUE}' }), { QUEUE: '100' })
    expect(show(findings)).toMatch(/error forwarder.linkDialQueueLength: expected an integer, got the string "100"; environment substitution always yields a string/)
  })

  it('never substitutes keys', () => {
    const findings = findingsOf(`${patched({})}\n$HOME: 1\n`, { HOME: 'forwarder' })
    expect(show(findings)).toContain('unknown section "$HOME"')
  })
})
