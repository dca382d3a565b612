// The command-line contract of `edgeplane validate-router-config` (issue 4): files and -, --format json,
// --print-effective, --strict, --help, and exit codes 0 (valid), 1 (an error), 2 (usage error or unreadable file).
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { parse } from 'yaml'
import { runValidateRouterConfig } from '../../../src/router-config/router-config-command.ts'
import { FIXTURES, RUNNER, fixture } from './router-config-support.ts'

const file = (name: string): string => join(FIXTURES, name)

async function run(argv: string[], stdin = '', env: Record<string, string> = {}) {
  let stdout = ''
  let stderr = ''
  const code = await runValidateRouterConfig(argv, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    readStdin: async () => stdin,
    env,
  })
  return { code, stdout, stderr }
}

describe('exit codes', () => {
  it('exits 0 and prints FILE: valid for a valid file', async () => {
    const r = await run([file('edge-router.yml')])
    expect(r).toEqual({ code: 0, stdout: `${file('edge-router.yml')}: valid\n`, stderr: '' })
  })

  it('exits 0 when a file has only warnings', async () => {
    const r = await run([file('minimal.yml')])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(': warning: csr: no csr section')
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`${file('minimal.yml')}: valid`)
  })

  it('exits 1 when any file has an error, reporting every file', async () => {
    const r = await run([file('edge-router.yml'), file('broken-router.yml')])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`${file('edge-router.yml')}: valid\n`)
    expect(r.stdout).toContain(`${file('broken-router.yml')}: 9 errors, 3 warnings\n`)
  })

  it('exits 2 for a file that cannot be read, after checking the others', async () => {
    const r = await run([file('does-not-exist.yml'), file('broken-router.yml')])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`${file('does-not-exist.yml')}: error: cannot read file: no such file\n`)
    expect(r.stdout).toContain('broken-router.yml: 9 errors')
  })

  it('exits 2 for a directory', async () => {
    expect((await run([FIXTURES])).code).toBe(2)
  })

  it('exits 2 with the usage on stderr for an unknown option, a bad format or no file', async () => {
    for (const argv of [['--bogus', 'x.yml'], ['--format', 'xml', 'x.yml'], ['--format'], []]) {
      const r = await run(argv)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toContain('Usage: edgeplane validate-router-config')
    }
  })

  it('prints the usage on stdout and exits 0 with --help', async () => {
    const r = await run(['--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('--print-effective')
  })
})

describe('options', () => {
  it('reads standard input for -, named <stdin>', async () => {
    const r = await run(['-'], 'v: 2\n')
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('<stdin>:1:4: error: v: expected the integer 3, got the integer 2')
  })

  it('treats a file named after -- as a file', async () => {
    expect((await run(['--', '--strict'])).stderr).toContain('--strict: error: cannot read file')
  })

  it('turns warnings into errors with --strict', async () => {
    const r = await run(['--strict', file('minimal.yml')])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(': error: csr: no csr section')
    expect(r.stdout).toContain(': 5 errors, 0 warnings')
  })

  it('prints findings as one JSON document with --format json and --format=json', async () => {
    for (const argv of [['--format', 'json'], ['--format=json']]) {
      const r = await run([...argv, file('broken-router.yml'), file('edge-router.yml')])
      expect(r.code).toBe(1)
      const doc = JSON.parse(r.stdout)
      expect(doc.valid).toBe(false)
      expect(doc.files.map((f: { valid: boolean }) => f.valid)).toEqual([false, true])
      expect(doc.files[0].findings[0]).toEqual({
        file: file('broken-router.yml'), line: 1, column: 1, severity: 'warning', path: 'csr',
        message: 'no csr section: the router cannot enroll or renew its enrollment (current routers also refuse to start without csr or edge.csr)',
      })
    }
  })

  it('lists an unreadable file in the JSON document', async () => {
    const doc = JSON.parse((await run(['--format', 'json', file('nope.yml')])).stdout)
    expect(doc.files[0]).toMatchObject({ valid: false, unreadable: 'cannot read file: no such file' })
  })

  it('prints the effective configuration as YAML with --print-effective, findings on stderr', async () => {
    const r = await run(['--print-effective', file('fabric-router.yml')], '', { ROUTER_PKI: '/srv/pki' })
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('fabric-router.yml: valid')
    expect(r.stdout.split('\n')[0]).toBe(`# effective configuration of ${file('fabric-router.yml')}`)
    const effective = parse(r.stdout, { version: '1.1' })
    expect(effective.identity.cert).toBe('/srv/pki/client.cert.pem')
    expect(effective.forwarder.xgressDialWorkerCount).toBe(128)
    expect(effective.link.dialers[0].unhealthyDialBackoff).toEqual({ minRetryInterval: '1m', maxRetryInterval: '1h', retryBackoffFactor: 10 })
  })

  it('adds the effective configuration to the JSON document', async () => {
    const doc = JSON.parse((await run(['--format', 'json', '--print-effective', '-'], fixture('minimal.yml'))).stdout)
    expect(doc.files[0].effective.healthChecks.ctrlPingCheck.interval).toBe('30s')
  })

  it('quotes strings in the effective YAML that YAML 1.1 would read otherwise', async () => {
    const r = await run(['--print-effective', '-'], `${fixture('minimal.yml')}csr:\n  country: "NO"\n  sans: {dns: [a.example]}\n`)
    expect(r.stdout).toContain('country: "NO"')
  })
})

describe('as a process', () => {
  const spawn = async (args: string[], stdin?: string) => {
    const proc = Bun.spawn(['bun', RUNNER, ...args], { stdin: stdin === undefined ? 'ignore' : new Blob([stdin]), stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } })
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { code, stdout, stderr }
  }

  it('exits 0, 1 and 2 with the same output', async () => {
    expect((await spawn([file('edge-router.yml')])).code).toBe(0)
    const broken = await spawn([file('broken-router.yml')])
    expect(broken.code).toBe(1)
    expect(broken.stdout).toContain('broken-router.yml:1:4: error: v: expected the integer 3, got the integer 2')
    expect((await spawn(['--nope'])).code).toBe(2)
  })

  it('reads standard input and never prints a stack trace on junk', async () => {
    const r = await spawn(['-'], '\u0000\u0001{[}: ]]&*x !!binary "')
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('<stdin>:1:1: error: (yaml)')
    expect(r.stderr).toBe('')
  })

  it('writes every line of a large report through a pipe before exiting', async () => {
    const text = `${fixture('minimal.yml')}dialers:\n${'  - binding: transport\n    options: {mtu: -1}\n'.repeat(20000)}`
    const r = await spawn(['-'], text)
    expect(r.code).toBe(1)
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(20005)
  }, 120_000) // a child process validating 20,000 entries: bounded against a hang, not timed

  it('substitutes variables of the process environment', async () => {
    const r = await spawn([file('fabric-router.yml')])
    expect(r.stdout).toContain('warning: identity.cert: environment variable ROUTER_PKI is not set')
  })
})
