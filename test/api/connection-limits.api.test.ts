// Issue 21: connection limits that a slow or hostile client cannot exhaust (README, "Connection limits"). Two servers
// with small limits set through the server options: `slow` has short timeouts (handshake, headers, whole request,
// keep-alive), `crowded` few connections in all and per address (the tests connect from several loopback addresses).
// Each case ends by checking that the server still answers.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { chunked, openTcp, openTls, type RawConn } from '../support/raw-wire.ts'

const SLOW = { handshakeTimeoutMs: 300, headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300, maxHeaderBytes: 4096, maxHeaders: 20 }
const CROWDED = { maxConnections: 12, maxConnectionsPerAddress: 5 }
const LOGIN = 'POST /edge/client/v1/authenticate?method=password HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n'

let slow: TestServer
let crowded: TestServer
const held: RawConn[] = []

beforeAll(async () => {
  slow = await startTestServer({ connectionLimits: SLOW, metricsListen: { host: '127.0.0.1', port: 0 } })
  crowded = await startTestServer({ connectionLimits: CROWDED, metricsListen: { host: '127.0.0.1', port: 0 } })
})
afterAll(async () => {
  for (const c of held) c.destroy()
  await slow.stop()
  await crowded.stop()
})

/** The value of one series on the server's separate metrics address (0 when absent). */
async function metric(t: TestServer, series: string): Promise<number> {
  const text = await (await fetch(`${t.server.metricsUrl}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** One GET /version on a new connection from `localAddress`: its status (0 when the connection was refused). */
async function versionStatus(t: TestServer, localAddress = '127.0.0.1'): Promise<number> {
  let conn: RawConn
  try {
    conn = await openTls(t.server.port, { localAddress })
  } catch {
    return 0
  }
  await conn.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n')
  await conn.closed
  return conn.status()
}

/** Writes `text` one byte every `everyMs` until the server closes the connection or all is sent; answers the bytes sent. */
async function dribble(conn: RawConn, text: string, everyMs: number): Promise<number> {
  let n = 0
  while (!conn.isClosed() && n < text.length) {
    if (!(await conn.write(text[n]))) break
    n++
    await sleep(everyMs)
  }
  return n
}

/** Writes up to `total` bytes of `framed` pieces as fast as the connection takes them; answers how many it took. */
async function flood(conn: RawConn, framed: Buffer, total: number): Promise<number> {
  let written = 0
  while (!conn.isClosed() && written < total) {
    if (!(await conn.write(framed))) break
    written += framed.length
  }
  return written
}

describe('bodies over the limit (1 MiB)', () => {
  it('answers a chunked body over the limit 413 and stops reading it: a client streaming 64 MB cannot send it', async () => {
    const conn = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await conn.write(`${LOGIN}transfer-encoding: chunked\r\n\r\n`)
    const piece = Buffer.alloc(64 * 1024, 'a')
    const framed = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
    const written = await flood(conn, framed, 64 * 1024 * 1024)
    await conn.closed
    expect(conn.status()).toBe(413)
    expect(conn.text()).toContain('REQUEST_ENTITY_TOO_LARGE')
    expect(conn.text().toLowerCase()).toContain('connection: close')
    // what the kernels' buffers take, not the 64 MB
    expect(written).toBeLessThan(24 * 1024 * 1024)
    expect(await versionStatus(crowded)).toBe(200)
  })

  it('answers a declared length over the limit 413 at once, before the body, and closes the connection', async () => {
    const conn = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await conn.write(`${LOGIN}content-length: ${64 * 1024 * 1024}\r\n\r\n`)
    const written = await flood(conn, Buffer.alloc(64 * 1024, 'a'), 64 * 1024 * 1024)
    await conn.closed
    expect(conn.status()).toBe(413)
    expect(written).toBeLessThan(24 * 1024 * 1024)
  })

  it('takes a chunked body at the limit (answered by the app), and refuses one byte more', async () => {
    const atLimit = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await atLimit.write(`${LOGIN}transfer-encoding: chunked\r\nconnection: close\r\n\r\n`)
    await atLimit.write(chunked(Buffer.alloc(1024 * 1024, ' ')))
    await atLimit.closed
    // blanks are no login: refused by the app, after the whole body was read
    expect(atLimit.status()).toBe(400)
    expect(atLimit.text()).toContain('"requestId"')
    const over = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await over.write(`${LOGIN}transfer-encoding: chunked\r\n\r\n`)
    void over.write(chunked(Buffer.alloc(1024 * 1024 + 1, ' ')))
    await over.closed
    expect(over.status()).toBe(413)
  })

  it('bounds a body sent with a GET the same way, and ignores one within the limit', async () => {
    const over = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await over.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\ntransfer-encoding: chunked\r\n\r\n')
    const piece = Buffer.alloc(64 * 1024, 'a')
    const written = await flood(over, Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]), 64 * 1024 * 1024)
    await over.closed
    expect(over.status()).toBe(413)
    expect(written).toBeLessThan(24 * 1024 * 1024)
    const small = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await small.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\ncontent-length: 5\r\n\r\nhello')
    await small.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n')
    await small.closed
    expect(small.text().match(/HTTP\/1\.1 200/g)?.length).toBe(2)
  })

  it('answers Expect: 100-continue with 100 for a body within the limit, and 413 without 100 for one over it', async () => {
    const within = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await within.write(`${LOGIN}content-length: 2\r\nexpect: 100-continue\r\nconnection: close\r\n\r\n`)
    await within.waitFor('100 Continue')
    await within.write('{}')
    await within.closed
    expect(within.text()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /)
    const over = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await over.write(`${LOGIN}content-length: 5000000\r\nexpect: 100-continue\r\n\r\n`)
    await over.closed
    expect(over.status()).toBe(413)
    expect(over.text()).not.toContain('100 Continue')
    expect(over.text()).toContain('REQUEST_ENTITY_TOO_LARGE')
  })

  it('survives bodies aborted after the headers, half-way and after the 413', async () => {
    const afterHeaders = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await afterHeaders.write(`${LOGIN}content-length: 1000\r\n\r\n`)
    afterHeaders.destroy()
    const halfWay = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await halfWay.write(`${LOGIN}transfer-encoding: chunked\r\n\r\n`)
    await halfWay.write(chunked(Buffer.alloc(600 * 1024, 'a')).subarray(0, 300 * 1024))
    halfWay.destroy()
    const after413 = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await after413.write(`${LOGIN}content-length: 2000000\r\n\r\n`)
    await after413.waitFor('REQUEST_ENTITY_TOO_LARGE')
    after413.destroy()
    expect(await versionStatus(crowded)).toBe(200)
  })
})

describe('headers', () => {
  it('answers more headers than maxHeaders with 431 and no body, and serves a request at the limit', async () => {
    const headers = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}: v\r\n`).join('')
    const over = await openTls(slow.server.port)
    await over.write(`GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\n${headers(SLOW.maxHeaders)}\r\n`)
    await over.closed
    expect(over.status()).toBe(431)
    expect(over.text().toLowerCase()).toContain('connection: close')
    const at = await openTls(slow.server.port)
    await at.write(`GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n${headers(SLOW.maxHeaders - 2)}\r\n`)
    await at.closed
    expect(at.status()).toBe(200)
  })

  it('answers headers over maxHeaderBytes with 431 (the parser), and serves them under it', async () => {
    const over = await openTls(slow.server.port)
    await over.write(`GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\nx-big: ${'a'.repeat(SLOW.maxHeaderBytes)}\r\n\r\n`)
    await over.closed
    expect(over.status()).toBe(431)
    const under = await openTls(slow.server.port)
    await under.write(`GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\nx-big: ${'a'.repeat(SLOW.maxHeaderBytes - 200)}\r\n\r\n`)
    await under.closed
    expect(under.status()).toBe(200)
  })

  it('answers a request the parser cannot read with 400 and no body, and closes a connection that speaks no TLS', async () => {
    for (const garbage of ['GARBAGE\r\n\r\n', 'GET / HTTP/1.1\r\nbad header line\r\n\r\n', 'GET /\x00 HTTP/1.1\r\n\r\n']) {
      const conn = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
      await conn.write(garbage)
      await conn.closed
      expect({ garbage, status: conn.status() }).toEqual({ garbage, status: 400 })
    }
    const plain = await openTcp(crowded.server.port, '127.0.0.9')
    await plain.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\n\r\n')
    await plain.closed
    expect(plain.text()).not.toContain('HTTP/1.1 200')
    expect(await versionStatus(crowded)).toBe(200)
  })

  it('answers a 100 KiB header line and 10,000 headers with 431 at the default limits, and goes on serving', async () => {
    const big = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await big.write(`GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\nx-big: ${'a'.repeat(100 * 1024)}\r\n\r\n`)
    await big.closed
    expect(big.status()).toBe(431)
    const many = await openTls(crowded.server.port, { localAddress: '127.0.0.9' })
    await many.write(`GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\n${Array.from({ length: 10_000 }, (_, i) => `x-${i}: v\r\n`).join('')}\r\n`)
    await many.closed
    expect(many.status()).toBe(431)
    expect(await versionStatus(crowded)).toBe(200)
  })
})

describe('timeouts', () => {
  it('closes a TCP connection that never starts its TLS handshake, and one whose ClientHello stops half-way', async () => {
    const before = await metric(slow, 'edgeplane_connections_timed_out_total{phase="handshake"}')
    const silent = await openTcp(slow.server.port)
    const truncated = await openTcp(slow.server.port)
    // a TLS record header announcing a ClientHello of 512 bytes, and 1 byte of it
    await truncated.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]))
    await Promise.all([silent.closed, truncated.closed])
    expect(silent.text()).toBe('')
    expect(await metric(slow, 'edgeplane_connections_timed_out_total{phase="handshake"}')).toBe(before + 2)
    expect(await versionStatus(slow)).toBe(200)
  })

  it('closes a connection that sends no request after its handshake, without an answer', async () => {
    const conn = await openTls(slow.server.port)
    await conn.closed
    expect(conn.text()).toBe('')
  })

  it('answers headers dribbled one byte at a time 408 and closes the connection before they end', async () => {
    const conn = await openTls(slow.server.port)
    const head = `GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\nx-slow: ${'a'.repeat(400)}\r\n\r\n`
    const sent = await dribble(conn, head, 25)
    await conn.closed
    expect(conn.status()).toBe(408)
    expect(sent).toBeLessThan(head.length)
    expect(await versionStatus(slow)).toBe(200)
  })

  it('answers a body dribbled one byte at a time 408 and closes the connection before it ends', async () => {
    const conn = await openTls(slow.server.port)
    await conn.write(`${LOGIN}content-length: 400\r\n\r\n`)
    const sent = await dribble(conn, ' '.repeat(400), 25)
    await conn.closed
    expect(conn.status()).toBe(408)
    expect(sent).toBeLessThan(400)
    expect(await versionStatus(slow)).toBe(200)
  })

  it('closes a kept-alive connection idle after its answer, without a second answer', async () => {
    const conn = await openTls(slow.server.port)
    await conn.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\n\r\n')
    await conn.waitFor('"apiVersions"')
    const answered = conn.text()
    await conn.closed
    expect(conn.status()).toBe(200)
    expect(conn.text()).toBe(answered)
  })

  it('serves pipelined requests on one connection', async () => {
    const conn = await openTls(slow.server.port)
    const get = 'GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\n\r\n'
    await conn.write(get + get + get.replace('\r\n\r\n', '\r\nconnection: close\r\n\r\n'))
    await conn.closed
    expect(conn.text().match(/HTTP\/1\.1 200/g)?.length).toBe(3)
  })
})

describe('open connections', () => {
  it('refuses a connection beyond the limit per address at once, while the open ones keep working and other addresses connect', async () => {
    const from = '127.0.0.2'
    // the connections of the tests before are gone (the server has seen their closes)
    for (let i = 0; i < 250 && (await metric(crowded, 'edgeplane_connections_open')) > 2; i++) await sleep(20)
    for (let i = 0; i < CROWDED.maxConnectionsPerAddress; i++) held.push(await openTls(crowded.server.port, { localAddress: from }))
    // refused: closed before its TLS handshake ends, and counted
    const refusedBefore = await metric(crowded, 'edgeplane_connections_refused_total')
    expect(await metric(crowded, 'edgeplane_connections_open')).toBeGreaterThanOrEqual(CROWDED.maxConnectionsPerAddress)
    expect(await versionStatus(crowded, from)).toBe(0)
    const raw = await openTcp(crowded.server.port, from)
    await raw.closed
    expect(await metric(crowded, 'edgeplane_connections_refused_total')).toBe(refusedBefore + 2)
    // the open ones keep working, one request after another
    const mine = held[held.length - 1]
    await mine.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\n\r\n')
    await mine.waitFor('"apiVersions"')
    expect(mine.status()).toBe(200)
    // the answer tells the keep-alive time the server holds to (the default 65 s)
    expect(mine.text().toLowerCase()).toContain('keep-alive: timeout=65')
    expect(await versionStatus(crowded, '127.0.0.3')).toBe(200)
    // one closed: its address may connect again (once the server has seen the close)
    held.shift()?.destroy()
    let status = 0
    for (let i = 0; i < 250 && status === 0; i++) {
      status = await versionStatus(crowded, from)
      if (status === 0) await sleep(20)
    }
    expect(status).toBe(200)
  })

  it('refuses a connection beyond the limit in all, from any address', async () => {
    for (const c of held.splice(0)) c.destroy()
    const addresses = ['127.0.0.4', '127.0.0.5', '127.0.0.6']
    // wait until the server has seen the closes of the tests before: only the harness's own connections are left
    for (let i = 0; i < 250 && (await metric(crowded, 'edgeplane_connections_open')) > 2; i++) await sleep(20)
    // the harness's own connection(s) from 127.0.0.1 count too: fill up to the limit from three other addresses
    let opened = 0
    for (const a of addresses) {
      for (let i = 0; i < 4; i++) {
        try {
          held.push(await openTls(crowded.server.port, { localAddress: a }))
          opened++
        } catch {
          // the limit in all is reached
        }
      }
    }
    expect(opened).toBeGreaterThanOrEqual(CROWDED.maxConnections - 2)
    expect(opened).toBeLessThanOrEqual(CROWDED.maxConnections)
    expect(await versionStatus(crowded, '127.0.0.7')).toBe(0)
    const mine = held[0]
    await mine.write('GET /edge/client/v1/version HTTP/1.1\r\nhost: localhost\r\n\r\n')
    await mine.waitFor('"apiVersions"')
    for (const c of held.splice(0)) c.destroy()
    let status = 0
    for (let i = 0; i < 250 && status === 0; i++) {
      status = await versionStatus(crowded, '127.0.0.7')
      if (status === 0) await sleep(20)
    }
    expect(status).toBe(200)
  })
})
