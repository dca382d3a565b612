/**
 * The API test harness: starts the real server (startServer) on port 0 with a temporary data directory, real TLS and
 * a FakeClock, and gives typed HTTPS clients for the edge APIs and the fabric API. One server per test file. Every JSON answer any of its
 * clients receives is checked against the official spec (spec-check.ts); a violation fails the request's test.
 */
import { TEST_EPOCH_MS } from './test-epoch.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../src/lib/clock.ts'
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.ts'
import { checkAnswer, specCheckTally } from './spec-check.ts'
import { LogSecretWatch } from './log-secrets.ts'
import { fetchFrom } from './fetch-from.ts'

export const ADMIN = { username: 'admin', password: 'admin-pass-1' } as const

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface RequestOptions {
  body?: unknown
  rawBody?: string | Uint8Array
  headers?: Record<string, string>
  session?: string | null
  tls?: { cert?: string; key?: string }
  /** Send from this local address (another 127.0.0.x loopback address) instead of 127.0.0.1 (fetch-from.ts). */
  from?: string
  /**
   * The one escape from the spec check that every answer goes through (test/support/spec-check.ts): the reason this
   * request deliberately sends or expects something outside the official spec. Every use is counted and printed at
   * the end of the run.
   */
  offSpec?: string
}

/**
 * The `offSpec` reason of every refusal of `POST /authenticate/mfa`: the official specs document its 401 as the empty
 * envelope (`{data, meta}`), which no error answer has, the real controller's included; ours is the error envelope.
 */
export const AUTH_MFA_401_OFF_SPEC = 'the specs document the 401 of POST /authenticate/mfa as the empty envelope; a refusal is the error envelope'

export interface ApiClient {
  (method: string, path: string, opts?: RequestOptions): Promise<ApiResponse>
  get(path: string, opts?: RequestOptions): Promise<ApiResponse>
  post(path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse>
  put(path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse>
  patch(path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse>
  del(path: string, opts?: RequestOptions): Promise<ApiResponse>
  /** The session token this client sends by default. */
  session?: string
}

export interface TestServer {
  url: string
  dataDir: string
  clock: FakeClock
  server: RunningServer
  caPem: string
  /** Raw request to any path on the listener. */
  raw: ApiClient
  /** Management API client logged in as the default admin. */
  mgmt: ApiClient
  /** Client API client (no session until `login`). */
  client: ApiClient
  /** Fabric API client (`/fabric/v1`) logged in as the default admin. */
  fabric: ApiClient
  login(username: string, password: string, api?: 'client' | 'management'): Promise<string>
  /** A client of `api` that sends `token`. */
  as(token: string | undefined, api: 'client' | 'management' | 'fabric'): ApiClient
  /** Creates a resource through the Management API as the admin; asserts 201 and answers its id. */
  create(path: string, body: Record<string, unknown>): Promise<string>
  restart(): Promise<void>
  stop(): Promise<void>
}

export async function startTestServer(opts: Partial<ServerOptions> = {}): Promise<TestServer> {
  const secretWatch = new LogSecretWatch()
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'edgeplane-test-'))
  const clock = (opts.clock as FakeClock | undefined) ?? new FakeClock(TEST_EPOCH_MS)
  const serverOpts: ServerOptions = {
    port: 0,
    adminUsername: ADMIN.username,
    adminPassword: ADMIN.password,
    cloneMessages: true,
    // the failed-login throttle is on, as in production: every API test makes deliberate failed logins from one
    // address on a clock that stands still, and must still see its own correct logins answered (issue 21: the
    // throttle slows guessers only)
    ...opts,
    dataDir,
    clock,
    // the log is kept and searched for the secrets this test handled (log-secrets.ts); a test's own log sees it too
    log: (line) => {
      secretWatch.lines.push(line)
      opts.log?.(line)
    },
  }
  let server = await startServer(serverOpts)
  const caPem = server.pki.root.certPem
  const t: Partial<TestServer> = { dataDir, clock, caPem }

  const makeClient = (prefix: string, getSession: () => string | undefined): ApiClient => {
    const call = (async (method: string, path: string, o: RequestOptions = {}) => {
      const headers: Record<string, string> = { accept: 'application/json', ...(o.headers ?? {}) }
      const session = o.session === null ? undefined : (o.session ?? getSession())
      if (session) headers['zt-session'] = session
      let body: string | Uint8Array | undefined
      if (o.rawBody !== undefined) body = o.rawBody
      else if (o.body !== undefined) {
        body = JSON.stringify(o.body)
        headers['content-type'] ??= 'application/json'
      }
      secretWatch.noteRequest(o.body)
      const tls = { ca: caPem, ...(o.tls ?? {}) }
      const res =
        o.from !== undefined
          ? await fetchFrom(o.from, `${server.url}${prefix}${path}`, { method, headers, body, tls })
          : await fetch(`${server.url}${prefix}${path}`, { method, headers, body, tls } as RequestInit)
      const text = await res.text()
      let parsed: unknown = undefined
      try {
        parsed = text ? JSON.parse(text) : undefined
      } catch {
        parsed = undefined
      }
      secretWatch.noteAnswer(res.headers, parsed)
      if (o.offSpec !== undefined) specCheckTally.recordOffSpec(o.offSpec)
      else {
        checkAnswer({ method, url: prefix + path, status: res.status, contentType: res.headers.get('content-type'), text, body: parsed })
        specCheckTally.recordChecked()
      }
      return { status: res.status, headers: res.headers, body: parsed, text }
    }) as ApiClient
    call.get = (p, o) => call('GET', p, o)
    call.post = (p, b, o) => call('POST', p, { ...o, body: b })
    call.put = (p, b, o) => call('PUT', p, { ...o, body: b })
    call.patch = (p, b, o) => call('PATCH', p, { ...o, body: b })
    call.del = (p, o) => call('DELETE', p, o)
    return call
  }
  const prefixOf = (api: 'client' | 'management' | 'fabric') => (api === 'client' ? '/edge/client/v1' : api === 'fabric' ? '/fabric/v1' : '/edge/management/v1')

  t.raw = makeClient('', () => undefined)
  t.as = (token, api) => {
    const c = makeClient(prefixOf(api), () => token)
    c.session = token
    return c
  }
  const login = async (username: string, password: string, api: 'client' | 'management' = 'management'): Promise<string> => {
    const raw = t.raw as ApiClient
    const res = await raw.post(`${prefixOf(api)}/authenticate?method=password`, { username, password })
    if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${res.text}`)
    return res.body.data.token as string
  }
  t.login = login
  const adminToken = { value: '' }
  t.mgmt = makeClient(prefixOf('management'), () => adminToken.value)
  t.fabric = makeClient(prefixOf('fabric'), () => adminToken.value)
  t.client = makeClient(prefixOf('client'), () => undefined)
  adminToken.value = await login(ADMIN.username, ADMIN.password)
  t.create = async (path, body) => {
    const res = await (t.mgmt as ApiClient).post(path, body)
    expectStatus(res, 201)
    return res.body.data.id as string
  }
  t.server = server
  t.url = server.url

  t.restart = async () => {
    await server.stop()
    secretWatch.assertClean()
    server = await startServer(serverOpts)
    t.server = server
    t.url = server.url
    adminToken.value = await login(ADMIN.username, ADMIN.password)
  }
  t.stop = async () => {
    await server.stop()
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true })
    secretWatch.assertClean()
  }
  return t as TestServer
}

/** Asserts a status, printing method-less context and the body on mismatch. */
export function expectStatus(res: ApiResponse, status: number): void {
  if (res.status !== status) throw new Error(`expected status ${status}, got ${res.status}: ${res.text}`)
}

/** Asserts an error answer: status, code, and the error envelope's shape. */
export function expectError(res: ApiResponse, status: number, code: string): void {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`)
  }
  const e = res.body.error
  if (typeof e.message !== 'string' || typeof e.requestId !== 'string') throw new Error(`bad error envelope: ${res.text}`)
  if (res.body.meta?.apiVersion !== '0.0.1' || res.body.meta?.apiEnrollmentVersion !== '0.0.1') {
    throw new Error(`bad error meta: ${res.text}`)
  }
}
