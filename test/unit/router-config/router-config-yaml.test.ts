// Robustness: any input yields findings with a position and never throws (YAML errors, wrong top level, empty file,
// tabs, anchors and aliases including alias bombs, merge keys, several documents, deep nesting, binary junk, big files).
// YAML scalars resolve as the router's parser (YAML 1.1) resolves them.
import { describe, expect, it } from 'bun:test'
import { validateRouterConfig } from '../../../src/router-config/router-config-validate.ts'
import { fixture, show } from './router-config-support.ts'

const check = (input: string | Uint8Array) => validateRouterConfig(input, { env: {} })

describe('malformed input', () => {
  it('reports a YAML syntax error with its position and no other finding', () => {
    const { findings } = check('v: 3\nctrl: [tls:a:1\nidentity: {}\n')
    expect(findings.length).toBeGreaterThan(0)
    expect(findings.every((f) => f.path === '(yaml)' && f.severity === 'error')).toBe(true)
    expect(findings[0].line).toBeGreaterThanOrEqual(2)
  })

  it('reports every syntax error of the file, not only the first', () => {
    const { findings } = check('a: [1, 2\nb: {\n')
    expect(findings.length).toBeGreaterThanOrEqual(2)
  })

  it('reports a tab used as indentation at the tab', () => {
    const { findings } = check('v: 3\nctrl:\n\tendpoint: tls:a:1\n')
    expect(show(findings)).toContain('3:1 error (yaml): Tabs are not allowed as indentation')
  })

  it('reports an empty file', () => {
    expect(show(check('').findings)).toBe('1:1 error (root): the file is empty; a router configuration needs at least v, ctrl and identity')
    expect(check('# only a comment\n').findings).toHaveLength(1)
  })

  it('reports a top-level list', () => {
    expect(show(check('- v: 3\n').findings)).toContain('the top level must be a mapping of sections (v, ctrl, identity, ...), got a list')
  })

  it('reports a top-level scalar', () => {
    expect(show(check('router').findings)).toContain('got the string "router"')
    expect(show(check('42').findings)).toContain('got the integer 42')
  })

  it('reports binary junk as control characters, and invalid UTF-8', () => {
    const bytes = new Uint8Array([0x76, 0x3a, 0x20, 0x33, 0x0a, 0x00, 0xff, 0xfe, 0x01, 0x02])
    const text = show(check(bytes).findings)
    expect(text).toContain('not valid UTF-8')
    expect(text).toContain('2:1 error (yaml): control character U+0000')
  })

  it('reports a duplicate key and still checks the rest', () => {
    const text = show(check(`${fixture('minimal.yml')}v: 4\nforwarder: {linkDialQueueLength: 0}\n`).findings)
    expect(text).toContain('Map keys must be unique')
    expect(text).toContain('forwarder.linkDialQueueLength: must be between 1 and 10000')
  })

  it('reports a key that is a mapping', () => {
    expect(show(check(`${fixture('minimal.yml')}? {a: 1}\n: 2\n`).findings)).toContain('a mapping key must be a plain string')
  })

  it('survives random bytes of every kind', () => {
    let seed = 7
    for (let n = 0; n < 200; n++) {
      const bytes = new Uint8Array(64).map(() => (seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0xff)
      expect(check(bytes).findings.length).toBeGreaterThan(0)
    }
  })
})

describe('anchors, aliases and merge keys', () => {
  it('expands aliases and applies merge keys as the router does', () => {
    const { findings, effective } = check(fixture('tunneler-router.yml'))
    expect(findings.filter((f) => f.severity === 'error')).toEqual([])
    const dialer = (effective as { link: { dialers: Record<string, Record<string, unknown>>[] } }).link.dialers[0]
    expect(dialer.unhealthyDialBackoff).toEqual({ minRetryInterval: '500ms', maxRetryInterval: '1h30m', retryBackoffFactor: 2 })
  })

  it('points a finding inside an aliased value at the anchored value, with the path where it is used', () => {
    const text = `${fixture('minimal.yml')}x-bad: &bad {minRetryInterval: 1d}\nlink:\n  dialers:\n    - binding: transport\n      healthyDialBackoff: *bad\n`
    const found = check(text).findings.find((f) => f.path === 'link.dialers[0].healthyDialBackoff.minRetryInterval')
    expect(found).toMatchObject({ severity: 'error', line: 8 })
  })

  it('bounds an alias bomb and says so', () => {
    let text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    let prev = 'a'
    for (const name of 'bcdefghijk') {
      text += `${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]\n`
      prev = name
    }
    // unbounded, this document expands to 9^10 nodes: the test's own timeout is the bound that would catch it
    const { findings } = check(text)
    expect(show(findings)).toContain('an alias bomb?')
  })

  it('reports an alias to an unknown anchor', () => {
    expect(show(check(`${fixture('minimal.yml')}trace: *nowhere\n`).findings)).toContain('alias *nowhere refers to no anchor')
  })

  it('reports a merge of something that is not a mapping', () => {
    expect(show(check(`${fixture('minimal.yml')}forwarder:\n  <<: 5\n`).findings)).toContain('a merge key (<<) takes a mapping')
  })
})

describe('size and depth', () => {
  it('bounds deep nesting without a stack overflow', () => {
    const deep = `${fixture('minimal.yml')}trace: ${'['.repeat(20000)}${']'.repeat(20000)}\n`
    expect(check(deep).findings.length).toBeGreaterThan(0)
    let block = fixture('minimal.yml') + 'x:\n'
    for (let i = 1; i < 300; i++) block += `${'  '.repeat(i)}k${i}:\n`
    expect(show(check(block).findings)).toContain('nesting deeper than 100 levels')
  })

  it('validates a multi-megabyte file and reports every problem in it', () => {
    const dialer = '  - binding: transport\n    options:\n      mtu: -1\n'
    const notes = `# ${'a long comment line of an operator '.repeat(4)}\n`.repeat(15000)
    const text = `${fixture('minimal.yml')}${notes}x-notes: |\n${'  free text kept by an operator in the file\n'.repeat(20000)}dialers:\n${dialer.repeat(10000)}`
    expect(text.length).toBeGreaterThan(3_000_000)
    const { findings } = check(text)
    expect(findings.filter((f) => f.path.endsWith('.options.mtu'))).toHaveLength(10000)
    expect(show(findings)).toContain('unknown section "x-notes"')
  })

  it('reads only the first document, warning about the others and their syntax errors', () => {
    const text = show(check(`${fixture('minimal.yml')}---\nv: 2\n---\nx: [\n`).findings)
    expect(text).toContain('the router reads only the first YAML document; 2 more are ignored')
    expect(text).toMatch(/warning \(yaml\): in a document the router ignores: Flow sequence/)
    expect(text).not.toContain('error')
  })

  it('escapes control characters of a quoted key in the path', () => {
    const f = check(`${fixture('minimal.yml')}"a\\nb": 1\n`).findings.find((x) => x.message.startsWith('unknown section'))
    expect(f?.path).toBe('a\\u000ab')
  })
})

describe('YAML 1.1 scalars, as the router reads them', () => {
  const value = (yaml: string): string => show(check(`${fixture('minimal.yml')}csr:\n  sans: {dns: [a.example]}\n  country: ${yaml}\n`).findings)
  it('reads NO, yes, on and off as booleans', () => {
    expect(value('NO')).toContain('got the boolean false (written NO); quote it ("NO")')
    expect(value('on')).toContain('the boolean true (written on)')
  })
  it('keeps a quoted "NO", a date and a base-60 looking value as strings', () => {
    for (const ok of ['"NO"', '2024-01-01', '1:30']) expect(value(ok)).not.toContain('country')
  })
  it('reads 3.0 as a float, not the integer 3', () => {
    expect(show(check('v: 3.0\n').findings)).toContain('v: expected the integer 3, got the number 3.0; write 3 without a fraction')
  })
  it('reads octal, hexadecimal and underscores as integers', () => {
    const text = `${fixture('minimal.yml')}forwarder: {linkDialQueueLength: 0x10, xgressDialQueueLength: 0777, rateLimitedQueueLength: 1_000}\n`
    expect(check(text).findings.filter((f) => f.path.startsWith('forwarder'))).toEqual([])
  })
})
