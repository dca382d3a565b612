// The command-line contract of src/main.ts: version, help, usage errors, and a clean SIGTERM stop of `run`.
import { describe, expect, it } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const MAIN = join(import.meta.dir, '..', '..', '..', 'src', 'main.ts')
async function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(['bun', MAIN, ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

/** Starts `run` and waits for its announcement line. */
async function startRun(dataDir: string) {
  const proc = Bun.spawn(['bun', MAIN, 'run', '--listen', '127.0.0.1:0', '--data', dataDir], { stdout: 'pipe', stderr: 'pipe' })
  const reader = proc.stdout.getReader()
  let out = ''
  while (!/listening on/.test(out)) {
    const { value, done } = await reader.read()
    if (done) break
    out += new TextDecoder().decode(value)
  }
  return { proc, out }
}

describe('edgeplane command line', () => {
  it('prints the version', async () => {
    const r = await cli(['version'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^edgeplane 0\.1\.0 /)
  })

  it('lists every subcommand, flag and environment variable in --help', async () => {
    const r = await cli(['--help'])
    expect(r.code).toBe(0)
    for (const word of ['run', 'version', 'validate-router-config', '--config', '--data', '--listen', '--admin-username',
      '--admin-password', '--san', '--session-timeout', 'EDGEPLANE_DATA', 'EDGEPLANE_LISTEN', 'EDGEPLANE_ADMIN_USERNAME',
      'EDGEPLANE_ADMIN_PASSWORD', 'EDGEPLANE_SANS', 'EDGEPLANE_SESSION_TIMEOUT', 'EDGEPLANE_CONFIG', 'backup', 'restore',
      'status', '--out', '--from', '--url', 'EDGEPLANE_USERNAME', 'EDGEPLANE_PASSWORD', '--cluster-endpoints', '--node-name',
      'EDGEPLANE_CLUSTER_ENDPOINTS', 'EDGEPLANE_NODE_NAME', 'EDGEPLANE_CLUSTER_PREFIX', 'cluster status', 'cluster remove NAME', '--force', '--no-console', 'EDGEPLANE_CONSOLE', '--server-timing', 'EDGEPLANE_SERVER_TIMING']) {
      expect(r.stdout).toContain(word)
    }
  })

  it('exits 2 on an unknown command or flag', async () => {
    expect((await cli(['fly'])).code).toBe(2)
    expect((await cli(['run', '--colour'])).code).toBe(2)
    expect((await cli(['run', '--listen', 'nowhere'])).code).toBe(2)
  })

  it('refuses half a cluster setting with what is missing (exit 2), and a start without etcd with its message, no stack (exit 1)', async () => {
    const half = await cli(['run', '--node-name', 'ctrl-1', '--listen', '127.0.0.1:0'])
    expect(half.code).toBe(2)
    expect(half.stderr).toContain("edgeplane run: node name 'ctrl-1' is set, but no cluster endpoints")
    const dir = mkdtempSync(join(tmpdir(), 'edgeplane-cli-'))
    try {
      // port 1 on loopback: nothing listens there, so the connection is refused at once
      const r = await cli(['run', '--listen', '127.0.0.1:0', '--data', join(dir, 'data')], {
        EDGEPLANE_CLUSTER_ENDPOINTS: 'http://127.0.0.1:1',
        EDGEPLANE_NODE_NAME: 'ctrl-1',
      })
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('edgeplane run: cannot start: etcd at http://127.0.0.1:1 cannot be reached')
      expect(r.stderr).not.toMatch(/^\s+at /m)
      expect(r.stdout).not.toContain('listening on')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('initializes a new data directory, prints a generated admin password once, and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeplane-cli-'))
    try {
      const { proc, out } = await startRun(join(dir, 'data'))
      expect(out).toMatch(/^edgeplane 0\.1\.0 listening on https:\/\/127\.0\.0\.1:\d+ \(data: .*\)/)
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
      const stderr = await new Response(proc.stderr).text()
      expect(stderr).toMatch(/generated password for the default admin 'admin' \(shown once\): \S{20,}/)
      const pkiFiles = readdirSync(join(dir, 'data', 'pki'))
      for (const f of pkiFiles.filter((f) => f.endsWith('.key.pem'))) {
        expect(statSync(join(dir, 'data', 'pki', f)).mode & 0o777).toBe(0o600)
      }
      // a second start reuses everything and prints no new password
      const { proc: again } = await startRun(join(dir, 'data'))
      again.kill('SIGINT')
      expect(await again.exited).toBe(0)
      expect(await new Response(again.stderr).text()).not.toContain('generated password')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  it('starts quietly on a fresh checkout\'s data/ (0755 with an empty 0644 .gitkeep): the listening line, the password notice, no warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeplane-cli-'))
    try {
      const data = join(dir, 'data')
      mkdirSync(data)
      chmodSync(data, 0o755)
      writeFileSync(join(data, '.gitkeep'), '')
      chmodSync(join(data, '.gitkeep'), 0o644)
      const { proc, out } = await startRun(data)
      expect(out).toMatch(/^edgeplane 0\.1\.0 listening on https:\/\/127\.0\.0\.1:\d+ \(data: .*\)\n$/)
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
      const lines = (await new Response(proc.stderr).text()).split('\n').filter((l) => l !== '' && l !== 'SIGTERM: stopping')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/generated password for the default admin 'admin' \(shown once\): \S{20,}/)
      expect(statSync(data).mode & 0o777).toBe(0o700)
      expect(statSync(join(data, '.gitkeep')).mode & 0o777).toBe(0o600)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
