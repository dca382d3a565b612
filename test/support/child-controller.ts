// A controller in a child process (`bun src/main.ts run`) on a data directory, for tests that kill it without warning
// (kill -9) and start it again on the same directory, or that must see a crash as a dead child rather than a dead test
// runner; and a small HTTPS client for it (its certificate is the child's own, so TLS trust is not checked).
// EDGEPLANE_BINARY=dist/edgeplane (relative to the working directory, or absolute) starts that compiled binary instead
// of the sources, so the same tests run against what `bun run build` ships.
import type { Subprocess } from 'bun'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { checkAnswer, specCheckTally } from './spec-check.ts'

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

/** The command line that starts a controller: the compiled binary when EDGEPLANE_BINARY names one, else the sources. */
export function controllerCommand(): string[] {
  const binary = process.env.EDGEPLANE_BINARY
  return binary ? [resolve(binary)] : ['bun', MAIN]
}

const live = new Set<Subprocess>()

/** Kills (-9) every child this process started that still runs: for afterAll, so a failed test leaves none behind. */
export function killChildren(): void {
  for (const proc of live) if (proc.exitCode === null && proc.signalCode === null) proc.kill(9)
  live.clear()
}

export interface ChildController {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  /** The last STDERR_TAIL_CHARS of its stderr (the log), to say why a child died. */
  stderrTail(): string
  /** Its log lines of level error so far (at most MAX_ERROR_LINES), to say what went wrong while it lived. */
  errorLines(): string[]
}

const MAX_ERROR_LINES = 500

const STDERR_TAIL_CHARS = 16_000

export interface ChildOptions {
  /** Settings of the YAML config file (`--config`), written beside the data directory. */
  config?: Record<string, unknown>
  /** More arguments of `run` (e.g. `--cluster-endpoints`, `--node-name`). */
  args?: string[]
}

/** Starts a controller on `dataDir` listening on a free port; answers once it prints its URL. */
export async function startChild(dataDir: string, adminPassword: string, opts: ChildOptions = {}): Promise<ChildController> {
  const args = ['run', '--data', dataDir, '--listen', '127.0.0.1:0', '--admin-password', adminPassword]
  if (opts.config) {
    const file = `${dataDir.replace(/\/+$/, '')}.config.yml`
    // JSON is YAML
    writeFileSync(file, JSON.stringify(opts.config))
    args.push('--config', file)
  }
  if (opts.args) args.push(...opts.args)
  const proc = Bun.spawn([...controllerCommand(), ...args], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  live.add(proc)
  void proc.exited.then(() => live.delete(proc))
  // the request log goes to stderr: drain it so a busy child never blocks on a full pipe, keeping its tail
  let tail = ''
  let pending = ''
  const errors: string[] = []
  void (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of proc.stderr) {
      const text = decoder.decode(chunk, { stream: true })
      tail += text
      if (tail.length > 2 * STDERR_TAIL_CHARS) tail = tail.slice(-STDERR_TAIL_CHARS)
      pending += text
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) if (line.includes('"level":"error"') && errors.length < MAX_ERROR_LINES) errors.push(line)
    }
  })().catch(() => undefined)
  const stderrTail = () => tail.slice(-STDERR_TAIL_CHARS)
  const reader = proc.stdout.getReader()
  let seen = ''
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) break
    seen += new TextDecoder().decode(value)
    const m = /listening on (https:\/\/\S+)/.exec(seen)
    if (m) {
      // keep draining stdout too
      void (async () => {
        while (!(await reader.read()).done);
      })().catch(() => undefined)
      return { proc, url: m[1], stderrTail, errorLines: () => errors }
    }
  }
  proc.kill(9)
  throw new Error(`child did not start: ${seen}\n${stderrTail()}`)
}

export interface ChildAnswer {
  status: number
  body: any
}

/**
 * One JSON request to the child; a connection that dies with the process rejects. Every JSON answer is checked against
 * the official spec, as the harness checks its own (spec-check.ts).
 */
export async function childRequest(url: string, method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<ChildAnswer> {
  const headers: Record<string, string> = {}
  if (opts.token) headers['zt-session'] = opts.token
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${url}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    tls: { rejectUnauthorized: false },
  } as RequestInit)
  const text = await res.text()
  const body = text ? JSON.parse(text) : undefined
  checkAnswer({ method, url: path, status: res.status, contentType: res.headers.get('content-type'), text, body })
  specCheckTally.recordChecked()
  return { status: res.status, body }
}

/** A password login on the Management API; answers the session token. */
export async function childLogin(url: string, username: string, password: string): Promise<string> {
  const res = await childRequest(url, 'POST', '/edge/management/v1/authenticate?method=password', { body: { username, password } })
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data.token
}
