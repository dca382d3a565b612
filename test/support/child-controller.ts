// A controller in a child process (`bun src/main.ts run`) on a data directory, for tests that kill it without warning
// (kill -9) and start it again on the same directory; and a small HTTPS client for it (its certificate is the child's
// own, so TLS trust is not checked).
import type { Subprocess } from 'bun'
import { join } from 'node:path'

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

const live = new Set<Subprocess>()

/** Kills (-9) every child this process started that still runs: for afterAll, so a failed test leaves none behind. */
export function killChildren(): void {
  for (const proc of live) if (proc.exitCode === null && proc.signalCode === null) proc.kill(9)
  live.clear()
}

export interface ChildController {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
}

/** Starts a controller on `dataDir` listening on a free port; answers once it prints its URL. */
export async function startChild(dataDir: string, adminPassword: string): Promise<ChildController> {
  const proc = Bun.spawn(['bun', MAIN, 'run', '--data', dataDir, '--listen', '127.0.0.1:0', '--admin-password', adminPassword], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  live.add(proc)
  void proc.exited.then(() => live.delete(proc))
  // the request log goes to stderr: drain it so a busy child never blocks on a full pipe
  void new Response(proc.stderr).arrayBuffer().catch(() => undefined)
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
      return { proc, url: m[1] }
    }
  }
  proc.kill(9)
  throw new Error(`child did not start: ${seen}`)
}

export interface ChildAnswer {
  status: number
  body: any
}

/** One JSON request to the child; a connection that dies with the process rejects. */
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
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

/** A password login on the Management API; answers the session token. */
export async function childLogin(url: string, username: string, password: string): Promise<string> {
  const res = await childRequest(url, 'POST', '/edge/management/v1/authenticate?method=password', { body: { username, password } })
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data.token
}
