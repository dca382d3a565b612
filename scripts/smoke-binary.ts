/**
 * Smoke test of the compiled binary: `bun run scripts/smoke-binary.ts dist/edgeplane`.
 * Copies the binary where no node_modules can be reached, then checks over real HTTPS that argon2, lmdb and
 * msgpackr work inside it and that data survives a SIGTERM and a restart. Exits non-zero on the first failure.
 */
import type { Subprocess } from 'bun'
import { accessSync, constants, copyFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { oidcSdk } from '../test/support/oidc-sdk.ts'

const ADMIN = { username: 'admin', password: 'smoke-pass-1' }
const LISTEN_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 10_000
const REQUEST_TIMEOUT_MS = 10_000

class SmokeFailure extends Error {}

function fail(message: string): never {
  throw new SmokeFailure(message)
}

let stepNo = 0
async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
  stepNo++
  const started = performance.now()
  process.stdout.write(`[${stepNo}] ${name}\n`)
  try {
    const value = await fn()
    process.stdout.write(`    ok (${Math.round(performance.now() - started)} ms)\n`)
    return value
  } catch (e) {
    process.stdout.write('    FAILED\n')
    throw e
  }
}

function note(line: string): void {
  process.stdout.write(`    ${line}\n`)
}

/** A fresh directory with no node_modules in it or in any directory above it. */
function isolatedDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'edgeplane-smoke-')))
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) {
      fail(`${join(d, 'node_modules')} exists above the smoke directory ${dir}; set TMPDIR to a directory without one`)
    }
    if (dirname(d) === d) break
  }
  return dir
}

async function freePort(): Promise<number> {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = listener.port
  listener.stop(true)
  return port
}

/** A running `edgeplane run`, its output collected for diagnostics. */
interface Controller {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  base: string
  stdout: string[]
  stderr: string[]
  listening: Promise<string>
}

const running = new Set<Controller>()

function collect(stream: ReadableStream<Uint8Array>, into: string[], onLine?: (line: string) => void): void {
  void (async () => {
    const decoder = new TextDecoder()
    let pending = ''
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true })
      let nl: number
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl)
        pending = pending.slice(nl + 1)
        into.push(line)
        onLine?.(line)
      }
    }
    if (pending) {
      into.push(pending)
      onLine?.(pending)
    }
  })()
}

function output(c: Controller): string {
  const tail = (lines: string[]) => lines.slice(-30).map((l) => `      ${l}`).join('\n') || '      (nothing)'
  return `\n    stdout:\n${tail(c.stdout)}\n    stderr:\n${tail(c.stderr)}`
}

function startController(workDir: string, dataDir: string, port: number, env: Record<string, string>, extraArgs: string[] = []): Controller {
  const proc = Bun.spawn(
    ['./edgeplane', 'run', '--data', dataDir, '--listen', `127.0.0.1:${port}`, '--admin-password', ADMIN.password, ...extraArgs],
    { cwd: workDir, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  )
  const c: Controller = { proc, base: `https://127.0.0.1:${port}`, stdout: [], stderr: [], listening: Promise.resolve('') }
  c.listening = new Promise<string>((resolveLine, reject) => {
    collect(proc.stdout, c.stdout, (line) => {
      if (line.includes('listening on')) resolveLine(line)
    })
    collect(proc.stderr, c.stderr)
    void proc.exited.then((code) => reject(new SmokeFailure(`the controller exited with code ${code} before it was listening`)))
  })
  c.listening.catch(() => {})
  running.add(c)
  void proc.exited.then(() => running.delete(c))
  return c
}

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SmokeFailure(`${what}: no result within ${ms} ms`)), ms)
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}

interface Answer {
  status: number
  headers: Headers
  body: any
  text: string
}

async function call(c: Controller, method: string, path: string, opts: { session?: string; json?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (opts.session) headers['zt-session'] = opts.session
  if (opts.json !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(c.base + path, {
    method,
    headers,
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    tls: { rejectUnauthorized: false },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const text = await res.text()
  let body: any
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  return { status: res.status, headers: res.headers, body, text }
}

function expectStatus(a: Answer, status: number, what: string): void {
  if (a.status !== status) fail(`${what}: expected HTTP ${status}, got ${a.status}: ${a.text.slice(0, 1000)}`)
}

/** Polls GET /version from the moment of spawn; resolves with the ms from `spawnedAt` to the first 200. */
async function firstVersionAnswer(c: Controller, spawnedAt: number): Promise<number> {
  const deadline = spawnedAt + LISTEN_TIMEOUT_MS
  let exited = false
  void c.proc.exited.then(() => (exited = true))
  let last = 'no attempt'
  while (performance.now() < deadline) {
    if (exited) fail(`the controller exited with code ${c.proc.exitCode} before answering /version${output(c)}`)
    try {
      const a = await call(c, 'GET', '/version')
      if (a.status === 200) return performance.now() - spawnedAt
      last = `HTTP ${a.status}: ${a.text.slice(0, 300)}`
    } catch (e) {
      last = (e as Error).message
    }
    await Bun.sleep(5)
  }
  fail(`no 200 from GET /version within ${LISTEN_TIMEOUT_MS} ms (last: ${last})${output(c)}`)
}

async function stopController(c: Controller): Promise<void> {
  c.proc.kill('SIGTERM')
  const code = await within(STOP_TIMEOUT_MS, 'exit after SIGTERM', c.proc.exited).catch((e) => {
    c.proc.kill('SIGKILL')
    throw new SmokeFailure(`${(e as Error).message}${output(c)}`)
  })
  if (code !== 0) fail(`exit code after SIGTERM was ${code} (signal ${c.proc.signalCode ?? 'none'}), expected 0${output(c)}`)
}

async function authenticate(c: Controller): Promise<string> {
  const a = await call(c, 'POST', '/edge/management/v1/authenticate?method=password', { json: ADMIN })
  expectStatus(a, 200, 'POST /edge/management/v1/authenticate?method=password')
  const token = a.headers.get('zt-session')
  if (!token) fail(`authenticate answered 200 without a zt-session header: ${a.text.slice(0, 500)}`)
  return token
}

async function main(argv: string[]): Promise<void> {
  const given = argv[0]
  if (!given || argv.length > 1) fail('usage: bun run scripts/smoke-binary.ts <path to the edgeplane binary>')
  const binary = resolve(given)
  try {
    accessSync(binary, constants.X_OK)
  } catch {
    fail(`${binary} is not an executable file (build it first: bun run build)`)
  }

  const work = isolatedDir()
  const dataDir = join(work, 'data')
  // The binary extracts its embedded addons into $TMPDIR: give it an empty one so this is a first start.
  const runTmp = join(work, 'tmp')
  mkdirSync(runTmp)
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('EDGEPLANE_') && k !== 'NODE_PATH' && k !== 'TMPDIR') env[k] = v
  }
  env.TMPDIR = runTmp
  let keep = true
  try {
    await step(`copy ${binary} to ${work}/edgeplane (no node_modules above it)`, async () => {
      copyFileSync(binary, join(work, 'edgeplane'))
      chmodSync(join(work, 'edgeplane'), 0o755)
    })

    await step('./edgeplane version', async () => {
      const r = Bun.spawnSync(['./edgeplane', 'version'], { cwd: work, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
      const out = r.stdout.toString().trim()
      if (r.exitCode !== 0) fail(`exit code ${r.exitCode}; stdout: ${out}; stderr: ${r.stderr.toString().trim()}`)
      if (!/^edgeplane \S+ \(revision \S+, built \S+/.test(out)) fail(`unexpected output: ${out}`)
      note(out)
    })

    const port1 = await freePort()
    const spawnedAt = performance.now()
    const c1 = startController(work, dataDir, port1, env)
    const firstAnswerMs = await step(`start ./edgeplane run on 127.0.0.1:${port1}, poll GET /version`, async () => {
      const ms = await firstVersionAnswer(c1, spawnedAt)
      note(`first /version answer ${Math.round(ms)} ms after spawn`)
      return ms
    })
    await step('"listening on" printed on stdout', async () => {
      const line = await within(LISTEN_TIMEOUT_MS, 'the "listening on" line', c1.listening).catch((e) => {
        throw new SmokeFailure(`${(e as Error).message}${output(c1)}`)
      })
      note(line)
    })
    await step('GET /version → 200', async () => {
      const a = await call(c1, 'GET', '/version')
      expectStatus(a, 200, 'GET /version')
      const v = a.body?.data
      if (typeof v?.version !== 'string') fail(`GET /version has no data.version: ${a.text.slice(0, 500)}`)
      note(`version ${v.version}, revision ${v.revision}, built ${v.buildDate}`)
    })
    const session = await step('authenticate as admin (argon2 inside the binary) → 200 + zt-session', () => authenticate(c1))
    await step('GET /edge/management/v1/identities → 200 (stored records read back through lmdb)', async () => {
      const a = await call(c1, 'GET', '/edge/management/v1/identities', { session })
      expectStatus(a, 200, 'GET /edge/management/v1/identities')
      if (!Array.isArray(a.body?.data) || a.body.data.length === 0) fail(`expected a non-empty data array: ${a.text.slice(0, 500)}`)
      note(`${a.body.data.length} identities: ${a.body.data.map((i: { name: string }) => i.name).join(', ')}`)
    })
    const name = `smoke identity with a long name ${Date.now()}`.padEnd(48, '.')
    const id = await step(`POST /edge/management/v1/identities "${name}" → 201`, async () => {
      const a = await call(c1, 'POST', '/edge/management/v1/identities', {
        session,
        json: { name, type: 'User', isAdmin: false },
      })
      expectStatus(a, 201, 'POST /edge/management/v1/identities')
      const created = a.body?.data?.id
      if (typeof created !== 'string' || created.length === 0) fail(`201 without data.id: ${a.text.slice(0, 500)}`)
      note(`id ${created}`)
      return created as string
    })
    await step(`GET /edge/management/v1/identities/${id} → 200, same name`, async () => {
      const a = await call(c1, 'GET', `/edge/management/v1/identities/${id}`, { session })
      expectStatus(a, 200, `GET /edge/management/v1/identities/${id}`)
      if (a.body?.data?.name !== name) fail(`expected name "${name}", got ${JSON.stringify(a.body?.data?.name)}`)
    })
    await step('OIDC sign-in as an SDK (authorize, login/password, callback, token) → bearer GET /edge/client/v1/current-identity → 200', async () => {
      const tokens = await oidcSdk({ url: c1.base }).passwordLogin(ADMIN.username, ADMIN.password)
      const res = await fetch(`${c1.base}/edge/client/v1/current-identity`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
        tls: { rejectUnauthorized: false },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      } as RequestInit)
      if (res.status !== 200) fail(`bearer GET /current-identity: expected HTTP 200, got ${res.status}: ${(await res.text()).slice(0, 500)}`)
    })
    await step('GET /console/ → 200 with a strict CSP, and its script (built into the binary) → 200', async () => {
      const page = await fetch(`${c1.base}/console/`, { tls: { rejectUnauthorized: false } } as RequestInit)
      const html = await page.text()
      if (page.status !== 200) fail(`GET /console/: expected 200, got ${page.status}`)
      if (!(page.headers.get('content-security-policy') ?? '').includes("script-src 'self'")) fail('GET /console/ has no strict Content-Security-Policy')
      const script = html.match(/src="(\/console\/app-[0-9a-f]+\.js)"/)?.[1]
      if (!script) fail(`the console page names no script: ${html.slice(0, 300)}`)
      const js = await fetch(`${c1.base}${script}`, { tls: { rejectUnauthorized: false } } as RequestInit)
      if (js.status !== 200 || (await js.text()).length < 1000) fail(`GET ${script}: ${js.status}`)
    })
    await step(`SIGTERM → exit code 0 within ${STOP_TIMEOUT_MS / 1000} s`, () => stopController(c1))

    const port2 = await freePort()
    const restartedAt = performance.now()
    const c2 = startController(work, dataDir, port2, env)
    await step(`restart on the same data dir, 127.0.0.1:${port2}`, async () => {
      const ms = await firstVersionAnswer(c2, restartedAt)
      await within(LISTEN_TIMEOUT_MS, 'the "listening on" line', c2.listening)
      note(`first /version answer ${Math.round(ms)} ms after spawn (addons already extracted)`)
    })
    const session2 = await step('authenticate as admin again → 200 + zt-session', () => authenticate(c2))
    await step(`GET /edge/management/v1/identities/${id} after restart → 200, same name`, async () => {
      const a = await call(c2, 'GET', `/edge/management/v1/identities/${id}`, { session: session2 })
      expectStatus(a, 200, `GET /edge/management/v1/identities/${id} after restart`)
      if (a.body?.data?.name !== name) fail(`expected name "${name}" after restart, got ${JSON.stringify(a.body?.data?.name)}`)
    })
    await step('SIGTERM → exit code 0', () => stopController(c2))

    // the same binary as a cluster node: a one-member etcd, the data directory above initialises the cluster, a second
    // node from its backup reads what the first wrote (the log's client, sealing and serialization inside the binary)
    const etcdClient = await freePort()
    const etcdPeer = await freePort()
    const etcd = Bun.spawn(
      ['etcd', '--name', 'smoke', '--data-dir', join(work, 'etcd'), '--listen-client-urls', `http://127.0.0.1:${etcdClient}`,
        '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`, '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`,
        '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-cluster', `smoke=http://127.0.0.1:${etcdPeer}`],
      { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' },
    )
    try {
      const endpoints = `http://127.0.0.1:${etcdClient}`
      await step(`etcd (one member) answers on ${endpoints}`, async () => {
        for (const end = Date.now() + LISTEN_TIMEOUT_MS; Date.now() < end; await Bun.sleep(100)) {
          const ok = await fetch(`${endpoints}/health`).then((r) => r.ok, () => false)
          if (ok) return
        }
        fail('etcd did not answer /health')
      })
      const portA = await freePort()
      const a = startController(work, dataDir, portA, env, ['--cluster-endpoints', endpoints, '--node-name', 'smoke-a'])
      await step(`./edgeplane run --cluster-endpoints … --node-name smoke-a initialises the cluster from the data directory`, async () => {
        await firstVersionAnswer(a, performance.now())
        await within(LISTEN_TIMEOUT_MS, 'the "listening on" line', a.listening)
      })
      const sessionA = await step('authenticate on node smoke-a → 200', () => authenticate(a))
      const svc = `smoke-cluster-${Date.now()}`
      await step(`POST /edge/management/v1/services "${svc}" on smoke-a → 201`, async () => {
        expectStatus(await call(a, 'POST', '/edge/management/v1/services', { session: sessionA, json: { name: svc, encryptionRequired: true } }), 201, 'create a service on smoke-a')
      })
      const archive = join(work, 'smoke-a.backup')
      const dataB = join(work, 'data-b')
      await step('./edgeplane backup of the running node, ./edgeplane restore into a new data directory', async () => {
        for (const args of [['backup', '--data', dataDir, '--out', archive], ['restore', '--from', archive, '--data', dataB]]) {
          const r = Bun.spawnSync(['./edgeplane', ...args], { cwd: work, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
          if (r.exitCode !== 0) fail(`./edgeplane ${args[0]}: exit code ${r.exitCode}; ${r.stderr.toString().trim()}`)
        }
      })
      const portB = await freePort()
      const b = startController(work, dataB, portB, env, ['--cluster-endpoints', endpoints, '--node-name', 'smoke-b'])
      await step('the second node smoke-b starts from the backup and catches up', async () => {
        await firstVersionAnswer(b, performance.now())
        await within(LISTEN_TIMEOUT_MS, 'the "listening on" line', b.listening)
      })
      await step(`smoke-b lists "${svc}", /version names HA_CONTROLLER, /controllers lists both nodes`, async () => {
        const sessionB = await authenticate(b)
        const list = await call(b, 'GET', `/edge/management/v1/services?filter=${encodeURIComponent(`name="${svc}"`)}`, { session: sessionB })
        expectStatus(list, 200, 'GET /services on smoke-b')
        if (list.body?.data?.length !== 1) fail(`smoke-b does not list the service made on smoke-a: ${list.text.slice(0, 300)}`)
        const version = await call(b, 'GET', '/edge/client/v1/version')
        if (!version.body?.data?.capabilities?.includes('HA_CONTROLLER')) fail(`no HA_CONTROLLER in ${version.text.slice(0, 300)}`)
        const ctrls = await call(b, 'GET', '/edge/management/v1/controllers', { session: sessionB })
        const names = (ctrls.body?.data ?? []).map((c: { name: string }) => c.name).sort()
        if (names.join(',') !== 'smoke-a,smoke-b') fail(`GET /controllers listed ${JSON.stringify(names)}`)
      })
      await step('./edgeplane cluster status → exit 0 (etcd healthy, both nodes live)', async () => {
        for (const end = Date.now() + LISTEN_TIMEOUT_MS; ; await Bun.sleep(200)) {
          const r = Bun.spawnSync(['./edgeplane', 'cluster', 'status', '--cluster-endpoints', endpoints], { cwd: work, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
          if (r.exitCode === 0) return note(r.stdout.toString().trim().split('\n').slice(0, 3).join(' | '))
          if (Date.now() > end) fail(`exit code ${r.exitCode}; ${r.stdout.toString().trim()} ${r.stderr.toString().trim()}`)
        }
      })
      await step('SIGTERM to both nodes → exit code 0', async () => {
        await stopController(a)
        await stopController(b)
      })
    } finally {
      etcd.kill('SIGKILL')
      await etcd.exited
    }

    keep = false
    console.log(`\nsmoke test passed: first answer ${Math.round(firstAnswerMs)} ms after spawn (cold start, empty TMPDIR)`)
  } finally {
    for (const c of running) c.proc.kill('SIGKILL')
    if (keep) console.error(`(kept ${work} for inspection)`)
    else rmSync(work, { recursive: true, force: true })
  }
}

try {
  await main(process.argv.slice(2))
} catch (e) {
  const message = e instanceof SmokeFailure ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)
  console.error(`\nsmoke test FAILED: ${message}`)
  process.exit(1)
}
