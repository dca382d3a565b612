// Where findings point (1-based LINE:COL of the value, the key of an unknown field, the map of a missing one),
// their order, and the exact text and JSON output formats.
import { describe, expect, it } from 'bun:test'
import { formatJsonReport, formatTextReport, LineIndex, toStrict } from '../../../src/router-config/router-config-findings.ts'
import { editDistance, nearest } from '../../../src/router-config/router-config-suggest.ts'
import { findingsOf, fixture } from './router-config-support.ts'

const text = `${fixture('minimal.yml')}forwarder:
  linkDialQueueLenght: 10
  xgressDialQueueLength: 0
link:
  dialers:
    - split: true
`

describe('positions', () => {
  const findings = findingsOf(text)
  const at = (path: string) => findings.find((f) => f.path === path)

  it('points a bad value at the value', () => {
    expect(at('forwarder.xgressDialQueueLength')).toMatchObject({ line: 10, column: 26 })
  })

  it('points an unknown key at the key', () => {
    expect(at('forwarder.linkDialQueueLenght')).toMatchObject({ line: 9, column: 3, severity: 'warning' })
  })

  it('points a missing field at the map that should hold it', () => {
    expect(at('link.dialers[0].binding')).toMatchObject({ line: 13, column: 7, severity: 'error' })
  })

  it('points a missing section at the top-level map', () => {
    expect(at('csr')).toMatchObject({ line: 2, column: 1 })
  })

  it('sorts findings by line, then column', () => {
    const keys = findings.map((f) => f.line * 1000 + f.column)
    expect(keys).toEqual([...keys].sort((a, b) => a - b))
  })

  it('counts lines after CR LF and lone CR line ends', () => {
    const index = new LineIndex('a\r\nb\rc\nd')
    expect(index.locate(3)).toEqual({ line: 2, column: 1 })
    expect(index.locate(5)).toEqual({ line: 3, column: 1 })
    expect(index.locate(7)).toEqual({ line: 4, column: 1 })
    expect(findingsOf(text.replaceAll('\n', '\r\n')).find((f) => f.path === 'forwarder.xgressDialQueueLength')).toMatchObject({ line: 10, column: 26 })
  })
})

describe('output', () => {
  const report = { file: 'r.yml', findings: findingsOf(text) }

  it('prints FILE:LINE:COL: SEVERITY: PATH: MESSAGE, then the counts', () => {
    const lines = formatTextReport(report)
    expect(lines).toContain('r.yml:10:26: error: forwarder.xgressDialQueueLength: must be between 1 and 10000, got 0')
    expect(lines).toContain('r.yml:9:3: warning: forwarder.linkDialQueueLenght: unknown field "linkDialQueueLenght", ignored by the router; did you mean linkDialQueueLength?')
    expect(lines.at(-1)).toBe('r.yml: 2 errors, 5 warnings')
  })

  it('says valid when there is no error, and uses the singular for one', () => {
    expect(formatTextReport({ file: 'ok.yml', findings: [] })).toEqual(['ok.yml: valid'])
    const one = [{ line: 1, column: 1, severity: 'error' as const, path: 'v', message: 'm' }]
    expect(formatTextReport({ file: 'x', findings: one }).at(-1)).toBe('x: 1 error, 0 warnings')
  })

  it('turns warnings into errors with --strict', () => {
    expect(toStrict(report.findings).every((f) => f.severity === 'error')).toBe(true)
  })

  it('prints the same findings as JSON', () => {
    const doc = JSON.parse(formatJsonReport([report], false))
    expect(doc.valid).toBe(false)
    expect(doc.files[0]).toMatchObject({ file: 'r.yml', valid: false, errors: 2, warnings: 5 })
    expect(doc.files[0].findings).toContainEqual({
      file: 'r.yml', line: 10, column: 26, severity: 'error', path: 'forwarder.xgressDialQueueLength', message: 'must be between 1 and 10000, got 0',
    })
  })
})

describe('suggestions', () => {
  it('counts a swap of two letters as one edit', () => {
    expect(editDistance('linkDialQueueLenght', 'linkDialQueueLength')).toBe(1)
    expect(editDistance('abc', 'abc')).toBe(0)
    expect(editDistance('', 'abc')).toBe(3)
  })

  it('suggests the nearest key, ignoring case, and nothing for a far one', () => {
    expect(nearest('linkDialQueueLenght', ['linkDialQueueLength', 'linkDialWorkerCount'])).toBe('linkDialQueueLength')
    expect(nearest('LINKCHECK', ['linkCheck', 'ctrlPingCheck'])).toBe('linkCheck')
    expect(nearest('endpont', ['endpoint', 'endpoints'])).toBe('endpoint')
    expect(nearest('somethingElse', ['ctrl', 'csr'])).toBeUndefined()
  })

  it('warns about an unknown key with no suggestion when nothing is near', () => {
    const f = findingsOf(`${fixture('minimal.yml')}forwarder: {totallyUnrelated: 1}\n`).find((x) => x.path === 'forwarder.totallyUnrelated')
    expect(f?.message).toBe('unknown field "totallyUnrelated", ignored by the router')
  })
})
