// Issue 21: no exception raised while serving a request may end the process or the listener. The listener runs here
// on its own (over real TLS) with failures injected where a real request cannot provoke them: an app that throws
// (at once, later, a value that cannot even be shown), an answer whose body fails, a request log sink and a log sink
// that throw, clients that go away while their request is being answered. Each failing request ends with 500
// UNHANDLED in the envelope while its socket can be written, else silently; its error is logged once with its request
// id; the next request is served. (This runs inside the test process: an escaped exception would fail the run.)
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { systemClock } from '../../src/lib/clock.ts'
import { ensureControllerPki, type ControllerPki } from '../../src/pki/pki-bootstrap.ts'
import { startListener, type AnsweredRequest, type Listener } from '../../src/http/http-listener.ts'
import type { IncomingCall } from '../../src/http/http-call.ts'
import { openTls, type RawConn } from '../support/raw-wire.ts'

let dir: string
let pki: ControllerPki
let listener: Listener
const logged: string[] = []
const requests: AnsweredRequest[] = []
const BIG = 64 * 1024 * 1024
/** What the sinks do on their next line: write it, or throw (counted). */
const sinks = { log: 'write' as 'write' | 'throw', request: 'write' as 'write' | 'throw', thrown: 0 }
const slow: { answer?: () => void } = {}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-guards-'))
  pki = await ensureControllerPki(dir, { hostname: 'localhost', extraSans: [], clock: systemClock })
  listener = await startListener({
    host: '127.0.0.1',
    port: 0,
    tls: pki.tls,
    maxBodyBytes: 1024,
    limits: { writeTimeoutMs: 300 },
    log: (line) => {
      if (sinks.log === 'throw') {
        sinks.thrown++
        throw new Error('the log sink is broken')
      }
      logged.push(line)
    },
    logRequest: (r) => {
      if (sinks.request === 'throw') {
        sinks.thrown++
        throw new Error('the request log sink is broken')
      }
      requests.push(r)
    },
    handle: (call: IncomingCall) => {
      switch (call.target) {
        case '/throws-at-once':
          throw new Error('thrown before any promise')
        case '/rejects':
          return Promise.reject(new TypeError('null is not an object'))
        case '/rejects-unshowable':
          return Promise.reject({ toString: () => { throw new Error('cannot show') } })
        case '/failing-body': {
          const body = new ReadableStream({ pull: (c) => c.error(new Error('the body stream failed')) })
          return Promise.resolve({ response: new Response(body, { status: 200 }), headers: [] })
        }
        case '/big':
          return Promise.resolve({ response: new Response(new Uint8Array(BIG)), headers: [] })
        case '/slow':
          // answered once the test says so (after its client went away)
          return new Promise((resolve) => {
            slow.answer = () => resolve({ response: Response.json({ late: true }), headers: [] })
          })
        default:
          return Promise.resolve({ response: Response.json({ ok: true, path: call.target }), headers: [] })
      }
    },
  })
})
afterAll(async () => {
  await listener.close()
  rmSync(dir, { recursive: true, force: true })
})

/** One request on its own connection (closed after the answer): status and body. */
async function request(path: string, method = 'GET', body = ''): Promise<{ status: number; body: any; conn: RawConn }> {
  const conn = await openTls(listener.port)
  await conn.write(`${method} ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
  await conn.closed
  const text = conn.text()
  const split = text.indexOf('\r\n\r\n')
  let parsed: any
  try {
    parsed = JSON.parse(text.slice(split + 4))
  } catch {
    parsed = undefined
  }
  return { status: conn.status(), body: parsed, conn }
}

/** Waits until the sinks have thrown `n` times in all (a request's log line is written after its answer went out). */
async function sinksThrown(n: number): Promise<void> {
  while (sinks.thrown < n) await new Promise((r) => setTimeout(r, 5))
}

async function expectServing(): Promise<void> {
  const res = await request('/fine')
  expect(res.status).toBe(200)
  expect(res.body).toEqual({ ok: true, path: '/fine' })
}

describe('an app that fails', () => {
  for (const path of ['/throws-at-once', '/rejects', '/rejects-unshowable', '/failing-body']) {
    it(`answers ${path} with 500 UNHANDLED in the envelope, logs the error once with the request id, and goes on`, async () => {
      logged.length = 0
      const res = await request(path)
      expect(res.status).toBe(500)
      expect(res.body.error.code).toBe('UNHANDLED')
      const id = res.body.error.requestId
      expect(id).toBeString()
      expect(logged.filter((l) => l.includes(id))).toHaveLength(1)
      await expectServing()
    })
  }
})

describe('sinks that fail', () => {
  it('answers as usual when the request log sink throws, and notes it through the log', async () => {
    sinks.request = 'throw'
    logged.length = 0
    const thrown = sinks.thrown
    try {
      expect((await request('/with-broken-request-log')).status).toBe(200)
      await sinksThrown(thrown + 1)
    } finally {
      sinks.request = 'write'
    }
    // at level error (noteLogger: ' unhandled error '), under the request's id
    expect(logged.some((l) => /^request [A-Za-z0-9._-]+ unhandled error in its log line: Error: the request log sink is broken/.test(l))).toBe(true)
    await expectServing()
  })

  it('answers a failing request 500 when both sinks throw, and goes on', async () => {
    sinks.request = 'throw'
    sinks.log = 'throw'
    const thrown = sinks.thrown
    try {
      const res = await request('/rejects')
      expect(res.status).toBe(500)
      expect(res.body.error.code).toBe('UNHANDLED')
      expect((await request('/fine')).status).toBe(200)
      // the error's line, each request's line and the note of its failure: all thrown on
      await sinksThrown(thrown + 4)
    } finally {
      sinks.request = 'write'
      sinks.log = 'write'
    }
    await expectServing()
  })
})

describe('clients that go away', () => {
  it('ends a request whose client left while it was being answered silently, and goes on', async () => {
    requests.length = 0
    const conn = await openTls(listener.port)
    delete slow.answer
    await conn.write('GET /slow HTTP/1.1\r\nhost: localhost\r\n\r\n')
    const answer = await new Promise<() => void>((resolve) => {
      const poll = () => (slow.answer ? resolve(slow.answer) : setTimeout(poll, 5))
      poll()
    })
    conn.destroy()
    await conn.closed
    // give the server a turn to see the close, then let the app answer into the closed connection
    await new Promise((r) => setTimeout(r, 50))
    answer()
    await expectServing()
  })

  it('disconnects a client that stops reading its answer once the write timeout has passed', async () => {
    requests.length = 0
    const conn = await openTls(listener.port)
    conn.socket.pause()
    await conn.write('GET /big HTTP/1.1\r\nhost: localhost\r\n\r\n')
    // the answer ends (its log line is written) when the server gives up on the client
    while (!requests.some((r) => r.path === '/big')) await new Promise((r) => setTimeout(r, 20))
    conn.socket.resume()
    await conn.closed
    expect(conn.status()).toBe(200)
    expect(conn.text().length).toBeLessThan(BIG)
    await expectServing()
  })

  it('survives a body reset half-way and a connection reset right after its request line', async () => {
    const half = await openTls(listener.port)
    await half.write('POST /fine HTTP/1.1\r\nhost: localhost\r\ncontent-length: 1000\r\n\r\n{"a":')
    half.socket.resetAndDestroy?.() ?? half.destroy()
    const early = await openTls(listener.port)
    await early.write('GET /fine HTTP/1.1\r\n')
    early.socket.resetAndDestroy?.() ?? early.destroy()
    await Promise.all([half.closed, early.closed])
    await expectServing()
  })
})
